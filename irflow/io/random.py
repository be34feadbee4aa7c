"""Where the data pipeline's randomness comes from. Shuffles and splits draw a seed
from irflow's generator (the one ``paddle.seed`` sets, through
`irflow.tensor.random.host_seed`) and use a NumPy generator of their own made from
it, so they are deterministic under ``paddle.seed`` and keep no state of their own.
The seed is drawn on the host and never traced: the data pipeline runs in Python
also in static mode (``paddle.enable_static()``), where a traced seed would be a
program variable without a value."""
from __future__ import annotations

import numpy as np

from ..tensor.random import host_seed


def host_rng(generator=None) -> np.random.Generator:
    """A NumPy generator for one shuffle: `generator` if it is one (or a seed), else
    seeded from irflow's generator."""
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    if generator is not None:
        raise TypeError(f"generator must be a numpy.random.Generator or an int seed, not "
                        f"{type(generator).__name__}")
    return np.random.default_rng(host_seed())

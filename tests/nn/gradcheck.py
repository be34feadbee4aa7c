"""Gradient checks for eager functions built from irflow tensor operations: the
gradients `backward()` accumulates against central differences of the same function,
in float64."""
from __future__ import annotations

import numpy as np

import irflow as paddle


def check_grads(fn, *arrays, wrt=None, rtol: float = 1e-5, atol: float = 1e-7,
                eps: float = 1e-6, seed: int = 0) -> None:
    """`fn` maps Tensors to one Tensor. Checks d sum(fn(*xs) * c) / d xs[i] for the
    float arrays listed in `wrt` (default: every float array), c a fixed random
    cotangent."""
    arrays = [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a)
              for a in arrays]
    if wrt is None:
        wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    tensors = [paddle.to_tensor(a, stop_gradient=i not in wrt) for i, a in enumerate(arrays)]
    out = fn(*tensors)
    cotangent = np.random.default_rng(seed).standard_normal(out.shape)
    paddle.sum(out * paddle.to_tensor(cotangent)).backward()

    def objective(values) -> float:
        with paddle.no_grad():
            result = fn(*[paddle.to_tensor(v) for v in values])
        return float(np.sum(result.numpy() * cotangent))

    for i in wrt:
        numeric = np.zeros_like(arrays[i])
        for index in np.ndindex(arrays[i].shape):
            values = [a.copy() for a in arrays]
            values[i][index] += eps
            up = objective(values)
            values[i][index] -= 2 * eps
            numeric[index] = (up - objective(values)) / (2 * eps)
        analytic = tensors[i].grad
        assert analytic is not None, f"no gradient reached input {i}"
        np.testing.assert_allclose(analytic.numpy(), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")

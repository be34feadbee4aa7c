"""Paddle's ``paddle.static.Print``: a tensor's value printed each time the program
runs, in Paddle's layout, by ``print`` ops (`irflow.ops.control`), which run in the
branch or iteration that reaches them."""
from __future__ import annotations

import math

import numpy as np

from ..dispatch import apply
from ..errors import ArgumentError
from ..tensor.creation import zeros
from ..tensor.manipulation import concat
from ..tensor.math import minimum
from ..tensor.tensor import Tensor
from .nn import switch_case

_PHASES = ("forward", "backward", "both")


def Print(input, first_n: int = -1, message: str | None = None, summarize: int = 20,  # noqa: A002,N802
          print_tensor_name: bool = True, print_tensor_type: bool = True,
          print_tensor_shape: bool = True, print_tensor_layout: bool = True,
          print_tensor_lod: bool = True, print_phase: str = "both") -> Tensor:
    """Print `input`'s shape, dtype and first `summarize` elements each time the
    program runs (where a cond branch or loop body reaches it), and return `input`.
    The text is Paddle's::

        Variable: x
          - message: <message>
          - lod: {}
          - place: Place(cpu)
          - shape: [2, 3]
          - layout: NCHW
          - dtype: float32
          - data: [0.000000 0.250000 ...]

    with the first `summarize` elements (all for ``-1``) in ``%f``, whatever the
    dtype; the ``print_tensor_*`` flags leave lines out. The name is the tensor's
    own (``static.data``'s, a parameter's), as Paddle's older programs print it,
    else ``var`` (Paddle 3.3's PIR programs print ``var`` for every tensor). The
    elements of a tensor whose size is known only when the program runs, printed
    with ``summarize=-1``, are shown as its Tensor text. Only the forward value is
    printed: with `print_phase` ``"both"`` Paddle also prints the gradient in the
    backward pass, which irflow's compiled autodiff has no op for, and
    ``"backward"`` alone is refused. `first_n` is accepted and, as in Paddle 3.3's
    PIR programs, does not limit the prints."""
    if print_phase.lower() not in _PHASES:
        raise ArgumentError(f"static.Print: print_phase should be one of {list(_PHASES)}, "
                            f"got {print_phase!r}")
    if print_phase.lower() == "backward":
        raise ArgumentError("static.Print: print_phase='backward' prints gradients, which "
                            "irflow cannot print; use 'forward' (or print the gradient that "
                            "paddle.static.gradients returns)")
    if not isinstance(input, Tensor):
        raise ArgumentError(f"static.Print: input should be a Tensor, not "
                            f"{type(input).__name__}")
    header, operands = _header(input, message, print_tensor_name, print_tensor_type,
                               print_tensor_shape, print_tensor_layout, print_tensor_lod)
    _print_data(input, header, operands, summarize)
    return input


def _header(t: Tensor, message, name: bool, dtype: bool, shape: bool, layout: bool,
            lod: bool) -> tuple[list[str], list[Tensor]]:
    """The lines before the data (a format string each, ``{}`` for a size known only
    when the program runs) and the size tensors they print."""
    lines, operands = [], []
    if name:
        lines.append("Variable: " + _escaped(t.name or "var"))
    if message:
        lines.append("  - message: " + _escaped(str(message)))
    if lod:
        lines.append("  - lod: {{}}")
    lines.append("  - place: Place(cpu)")
    if shape:
        dims = []
        for d in _dims(t):
            if isinstance(d, Tensor):
                operands.append(d)
                dims.append("{}")
            else:
                dims.append(str(d))
        lines.append("  - shape: [" + ", ".join(dims) + "]")
    if layout:
        lines.append("  - layout: NCHW")
    if dtype:
        lines.append("  - dtype: " + t.dtype.name)
    return lines, operands


def _dims(t: Tensor) -> list:
    """`t`'s sizes: ints, and int tensors for sizes known only when the program runs."""
    return list(t.shape) if t._value is not None else t._tracer.dims(t)


def _print_data(t: Tensor, header: list[str], operands: list[Tensor], summarize: int) -> None:
    """Print the header and the data line. The data line shows ``min(size, summarize)``
    elements; where the size is known only when the program runs, one print op for
    each possible count is chosen by a ``switch_case`` on it (with ``summarize=-1``
    there is no bound on the count, and the data line is the Tensor's text)."""
    flat = t.reshape([-1])
    dims = _dims(t)
    if not any(isinstance(d, Tensor) for d in dims):
        size = math.prod(dims)
        shown = size if summarize < 0 else min(size, summarize)
        _print_op(header, operands, [flat[i] for i in range(shown)])
        return
    if summarize < 0:  # a count known only when the program runs: irflow's tensor text
        apply("print", [*operands, flat], {"fmt": "\n".join([*header, "  - data: {}"]),
                                           "scalars": tuple(range(len(operands)))})
        return
    padded = _padded(flat, summarize)
    elements = [padded[i] for i in range(summarize)]
    count = _minimum(flat.numel(), summarize)
    switch_case(count, {k: _printer(header, operands, elements[:k])
                        for k in range(summarize + 1)})


def _padded(flat: Tensor, length: int) -> Tensor:
    """`flat` with `length` zeros after it, so its first `length` elements exist
    whatever its size (the data line shows only as many as it has)."""
    return concat([flat, zeros([length], flat.dtype)])


def _minimum(size: Tensor, bound: int) -> Tensor:
    return minimum(size, Tensor._from_array(np.asarray(bound, size.dtype.np)))


def _printer(header: list[str], operands: list[Tensor], elements: list[Tensor]):
    return lambda: _print_op(header, operands, elements)


def _print_op(header: list[str], operands: list[Tensor], elements: list[Tensor]) -> None:
    """One ``print`` op: the header lines, then ``  - data: [e0 e1 ...]``, every
    operand printed as a number (each size and element is one value)."""
    data = "  - data: [" + " ".join("{:f}" for _ in elements) + "]"
    values = operands + [e.astype("float64") for e in elements]
    apply("print", values, {"fmt": "\n".join([*header, data]),
                            "scalars": tuple(range(len(values)))})


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


__all__ = ["Print"]

"""`InputSpec`: the shape and dtype a compiled program expects for one input.

``None`` or ``-1`` dims are symbolic, so one program serves every size there. The
first axis becomes the symbol ``N`` for every input (a batch dim shared by inputs and
labels); other unknown axes become ``S1``, ``S2``... by axis (shared by inputs in the
same position, as sequence lengths usually are). A dim may also be given as a
symbol name of your own (``InputSpec(["B", 784])``). An unknown dim that the program
uses as a static size (the 784 input features of a Linear) is fixed to that size
when the program is traced, and calls check it.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from ..ir.types import TensorType


class InputSpec:
    def __init__(self, shape=None, dtype="float32", name: str | None = None,
                 stop_gradient: bool = False):
        self.shape = tuple(shape) if shape is not None else ()
        self.dtype = dtypes.dtype(dtype)
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor, name: str | None = None) -> "InputSpec":
        return cls(tensor.shape, tensor.dtype, name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, array: np.ndarray, name: str | None = None) -> "InputSpec":
        return cls(array.shape, array.dtype, name)

    def batch(self, batch_size) -> "InputSpec":
        return InputSpec((batch_size, *self.shape), self.dtype, self.name, self.stop_gradient)

    def unbatch(self) -> "InputSpec":
        return InputSpec(self.shape[1:], self.dtype, self.name, self.stop_gradient)

    def to_type(self) -> TensorType:
        dims = []
        for axis, d in enumerate(self.shape):
            if d is None or (isinstance(d, int) and d < 0):
                dims.append("N" if axis == 0 else f"S{axis}")
            else:
                dims.append(d)
        return TensorType(self.dtype, dims)

    def __eq__(self, other) -> bool:
        return (isinstance(other, InputSpec) and self.shape == other.shape
                and self.dtype is other.dtype and self.name == other.name)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self) -> str:
        shape = [d if d is not None else -1 for d in self.shape]
        return (f"InputSpec(shape={tuple(shape)}, dtype={self.dtype}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")

"""Folding per-channel scales and shifts into the weight of a contraction: the
inference BatchNorm after a Conv2D or Linear disappears into its weights.

In an inference program whose parameters are constants (``irflow.compile(...,
freeze=True)``), BatchNorm after a convolution is a chain of elementwise ops on the
convolution's result with per-channel constants, once ``fold`` has evaluated what
reads only parameters (``rsqrt(var + eps)``, the reshapes)::

    h = conv2d(x, W);  y = ((h + b - mean) * inv_std) * gamma + beta

Each op of the chain is affine in the value it continues (the `Affine` trait), so
the chain is ``h * s + t`` with per-channel constants ``s`` and ``t``; and output
channel c of a contraction is linear in slice c of its weight
(`Contraction.channel_axes`), so ``h * s`` is the contraction with the weight scaled
slice by slice. The chain becomes ``conv2d(x, W * s) + t``, computed here in float64
and rounded once; ``fuse`` then makes the add, and the ReLU after it, the
convolution's epilogue.

It folds when the weight is a constant, each value of the chain but the last has
one use (the next op), every constant varies at most along the channel axis, and
the values are floats. Reassociating changes results in the last bits, as
TensorRT's and TVM's BatchNorm folding does: this is an inference transform, run by
the inference pipeline, not by the default one.
"""
from __future__ import annotations

import numpy as np

from ..ir.builder import Builder
from ..ir.core import Block, Module, Operation, Value
from ..ir.registry import lookup
from ..ir.rewrite import constant_value
from ..ir.traits import Affine, Contraction
from .framework import Pass, register_pass


@register_pass
class FoldAffine(Pass):
    """Fold per-channel scales and shifts by constants (an inference BatchNorm) into the
    constant weight of the matmul or conv2d before them."""

    name = "fold-affine"

    def __post_init__(self):
        self._counts = {"chains-folded": 0, "ops-folded": 0}

    def run(self, module: Module) -> bool:
        self._counts = dict.fromkeys(self._counts, 0)
        changed = False
        for fn in module:
            changed |= self._fold_block(fn.block)
        return changed

    def statistics(self) -> dict[str, int]:
        return dict(self._counts)

    def _fold_block(self, block: Block) -> bool:
        changed = False
        for op in list(block.ops):  # folding erases ops after `op`
            if op.parent is None:
                continue
            for region in op.regions:
                changed |= self._fold_block(region.blocks[0])
            chain = _affine_chain(op)
            if chain is not None:
                _fold(op, *chain)
                self._counts["chains-folded"] += 1
                self._counts["ops-folded"] += len(chain[0])
                changed = True
        return changed


def _affine_chain(op: Operation):
    """(the chain's ops, scale, shift, channel shape) after contraction `op`, or None
    when there is nothing to fold."""
    contraction = lookup(op.name, op.loc).trait(Contraction)
    if contraction is None or len(op.results) != 1:
        return None
    axes = contraction.channel_axes(op)
    h = op.result
    if axes is None or constant_value(op.operand(contraction.weight)) is None \
            or not h.type.dtype.is_float or not isinstance(h.type.shape[axes[0]], int):
        return None
    channel = tuple(h.type.shape[axes[0]] if i == axes[0] else 1 for i in range(h.type.rank))
    scale, shift = np.float64(1), np.float64(0)
    chain: list[Operation] = []
    value: Value = h
    while len(value.uses) == 1:
        use = next(iter(value.uses))
        step = _step(use.op, use.index, h.type, channel)
        if step is None:
            break
        a, b = step
        scale, shift = a * scale, a * shift + b
        chain.append(use.op)
        value = use.op.result
    if not chain or (len(chain) == 1 and np.all(scale == 1)):
        return None  # one shift: already as folded as it gets
    return chain, scale, shift, channel


def _step(user: Operation, index: int, t, channel: tuple):
    """(scale, shift) of `user` as an affine map of its operand `index`, in float64,
    if the other operands are constants that vary only along the channel axis."""
    affine = lookup(user.name, user.loc).trait(Affine)
    if affine is None or user.result.type != t:
        return None
    others = [constant_value(v) for i, v in enumerate(user.operands) if i != index]
    if any(c is None or not _per_channel(c.shape, channel) for c in others):
        return None
    return affine.scale_and_shift(index, [c.astype(np.float64) for c in others])


def _per_channel(shape: tuple, channel: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, channel) == channel
    except ValueError:
        return False


def _fold(op: Operation, chain: list[Operation], scale, shift, channel: tuple) -> None:
    contraction = lookup(op.name).trait(Contraction)
    result_axis, weight_axis = contraction.channel_axes(op)
    weight = constant_value(op.operand(contraction.weight))
    dtype = op.result.type.dtype
    per_slice = [1] * weight.ndim
    per_slice[weight_axis] = channel[result_axis]
    factors = np.broadcast_to(scale, channel).reshape(per_slice)
    b = Builder.before(op)
    operands = list(op.operands)
    operands[contraction.weight] = b.constant((weight * factors).astype(weight.dtype), dtype,
                                              name=op.operand(contraction.weight).name)
    shifted = bool(np.any(shift != 0))
    last = chain[-1].result.name
    folded = b.create(op.name, operands, op.attrs,
                      names=[op.result.name if shifted else last]).result
    if shifted:
        with b.location(chain[-1].loc):
            # [C, 1, 1] for a conv, [C] for a matmul: the leading 1s are broadcasting's
            shifts = np.broadcast_to(shift, channel).reshape(channel[result_axis:])
            folded = b.add(folded, b.constant(shifts.astype(dtype.np), dtype), name=last)
    chain[-1].result.replace_all_uses_with(folded)
    for user in reversed(chain):
        user.erase()
    op.erase()

"""Paddle's ``paddle.utils`` nest functions: `flatten`, `pack_sequence_as`,
`map_structure`, `assert_same_structure` and `is_sequence`, over nested lists,
tuples (namedtuples too) and dicts, whose values are visited by sorted key (as
``tf.nest``, which Paddle's follow). Built on the frontend's structures
(`irflow.frontend.structure`), which trace and save programs in the same order."""
from __future__ import annotations

from typing import Any, Callable

from ..frontend.structure import Structure, flatten as leaves_of, sorted_leaf_order, unflatten


def is_sequence(seq) -> bool:
    """Whether `seq` is a list, tuple or dict (a string is not), as Paddle's."""
    return isinstance(seq, list | tuple | dict)


def flatten(nest) -> list:
    """The leaves of `nest` in order, each dict's values by sorted key; a value that
    is not a sequence gives ``[nest]``."""
    leaves, structure = leaves_of(nest)
    return [leaves[k] for k in sorted_leaf_order(structure)]


def pack_sequence_as(structure, flat_sequence) -> Any:
    """`flat_sequence` (leaves in `flatten`'s order) in the nested shape of
    `structure`; ValueError when their numbers of leaves differ."""
    flat = list(flat_sequence)
    _, shape = leaves_of(structure)
    if len(flat) != shape.n_leaves:
        raise ValueError(f"Could not pack sequence. Structure had {shape.n_leaves} "
                         f"elements, but flat_sequence had {len(flat)} elements. "
                         f"Structure: {structure}, flat_sequence: {flat}.")
    placed = [None] * len(flat)
    for leaf, position in zip(flat, sorted_leaf_order(shape)):
        placed[position] = leaf
    return unflatten(shape, placed)


def assert_same_structure(nest1, nest2, check_types: bool = True) -> None:
    """Raise ValueError unless `nest1` and `nest2` nest alike (the same numbers of
    elements, the same dict keys), and with `check_types` TypeError unless their
    sequences are of the same types, as Paddle's."""
    _same(leaves_of(nest1)[1], leaves_of(nest2)[1], nest1, nest2, check_types)


def _same(a: Structure, b: Structure, nest1, nest2, check_types: bool) -> None:
    if (a.kind is None) != (b.kind is None) or len(a.children) != len(b.children) or (
            dict in (a.kind, b.kind) and sorted(map(repr, a.keys)) != sorted(map(repr, b.keys))):
        raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                         f"First structure: {nest1}\n\nSecond structure: {nest2}.")
    if check_types and a.kind is not b.kind:
        raise TypeError(f"The two structures don't have the same sequence type. First "
                        f"structure has type {a.kind}, while second structure has type "
                        f"{b.kind}.")
    for x, y in zip(a.children, b.children):
        _same(x, y, nest1, nest2, check_types)


def map_structure(func: Callable, *structure) -> Any:
    """``func`` of the leaves at each position of the `structure` arguments (which
    must nest alike), in the nested shape of the first."""
    for other in structure[1:]:
        assert_same_structure(structure[0], other)
    columns = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*columns)])

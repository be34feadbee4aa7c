"""Which symbolic sizes a block binds, needs and uses.

A symbolic dim is bound by the arguments that have it as a whole dim (or as a linear
dim such as ``S1-1``) or by the first op result that has it; it is needed where an
op's shape attribute reads it (``broadcast_to {shape=[N,4]}`` must know N before its
kernel runs). The executor plans its symbol registers from this, and autodiff uses
it to give a backward function every size it needs. `substitute_symbols` renames
or fixes symbols throughout a block.
"""
from __future__ import annotations

from .core import Block, Operation
from .registry import OpDef, lookup
from .types import TensorType, dim_terms, is_symbol, substitute, substitute_type, symbols_of


def argument_symbols(block: Block) -> dict[str, tuple[int, int, int, int]]:
    """Symbol -> (argument index, axis, coefficient, offset) of an argument dim that
    gives it: its last occurrence as a whole dim among the block's arguments (the
    value the interpreter's region binding ends with), else a dim ``coefficient *
    symbol + offset`` (``S1-1``)."""
    where, linear = {}, {}
    for i, arg in enumerate(block.args):
        if isinstance(arg.type, TensorType):
            for axis, d in enumerate(arg.type.shape):
                if is_symbol(d):
                    where[d] = (i, axis, 1, 0)
                elif isinstance(d, str):
                    terms = dict((syms, coef) for coef, syms in dim_terms(d))
                    (s, *others) = symbols_of(d)
                    if not others and set(terms) <= {(s,), ()}:
                        linear.setdefault(s, (i, axis, terms[(s,)], terms.get((), 0)))
    return {**linear, **where}


def has_symbols(value) -> bool:
    """Whether a shape attribute's value has a symbolic dim."""
    return value is not None and any(isinstance(d, str) for d in value)


def attr_symbols(op: Operation, opdef: OpDef) -> set[str]:
    return {s for key in opdef.shape_attrs if has_symbols(op.attrs.get(key))
            for d in op.attrs[key] for s in symbols_of(d)}


def result_symbols(op: Operation) -> set[str]:
    return {d for r in op.results if isinstance(r.type, TensorType)
            for d in r.type.shape if is_symbol(d)}


def symbols_needed(block: Block) -> set[str]:
    """The symbols running `block` must be given: those its ops' shape attributes
    use, and those its regions need, unless its arguments bind them or an earlier
    op's result has them as a dim (a size known only once that op has run)."""
    needed: set[str] = set()
    bound = set(argument_symbols(block))
    for op in block.ops:
        needed |= attr_symbols(op, lookup(op.name, op.loc)) - bound
        for region in op.regions:
            needed |= symbols_needed(region.blocks[0]) - bound
        bound |= result_symbols(op)
    return needed


def unbound_use(block: Block, symbol: str) -> Operation | None:
    """The first op in `block` (or in its regions) that reads `symbol` where nothing
    binds it: what to name when `symbols_needed` has it."""
    bound = set(argument_symbols(block))
    for op in block.ops:
        if symbol in bound:
            return None
        if symbol in attr_symbols(op, lookup(op.name, op.loc)):
            return op
        for region in op.regions:
            found = unbound_use(region.blocks[0], symbol)
            if found is not None:
                return found
        bound |= result_symbols(op)
    return None


def symbols_read(op: Operation) -> set[str]:
    """The symbols running `op` must know: those its shape attributes use and those
    its regions need from the block around it."""
    read = attr_symbols(op, lookup(op.name, op.loc))
    for region in op.regions:
        read |= symbols_needed(region.blocks[0])
    return read


def symbol_binders(block: Block) -> dict[str, Operation]:
    """Symbol -> the op of `block` that binds it: the first whose result has it as a
    dim, for the symbols no argument binds. Such an op must run before any op that
    reads the symbol, even when nothing uses its result (a backward that needs only
    the length of a list the forward stacked)."""
    bound = set(argument_symbols(block))
    binders: dict[str, Operation] = {}
    for op in block.ops:
        for symbol in result_symbols(op) - bound:
            binders.setdefault(symbol, op)
    return binders


def symbols_used(block: Block) -> set[str]:
    """The symbols `block` reads, wherever they are bound."""
    used: set[str] = set()
    for op in block.ops:
        used |= attr_symbols(op, lookup(op.name, op.loc))
        for region in op.regions:
            used |= symbols_needed(region.blocks[0])
    return used


def substitute_symbols(block: Block, values: dict) -> None:
    """Replace symbols by `values` (sizes, or dims) in place, in every type and shape
    attribute of `block` and of the regions in it."""
    for arg in block.args:
        arg.type = substitute_type(arg.type, values)
    for op in block.ops:
        for r in op.results:
            r.type = substitute_type(r.type, values)
        for key in lookup(op.name, op.loc).shape_attrs:
            if has_symbols(op.attrs.get(key)):
                op.attrs[key] = tuple(substitute(d, values) for d in op.attrs[key])
        for region in op.regions:
            substitute_symbols(region.blocks[0], values)

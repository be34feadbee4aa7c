"""The IR's data structures: values, operations, blocks, regions, functions, modules.

The IR is SSA with structured control flow. An `Operation` has operands (values it
reads), results (values it defines), attributes (plain Python data) and regions. A
`Region` holds one `Block`; a block has arguments and a sequence of operations ending
in a terminator. Regions are closed: an operation inside a region may only use the
block's arguments and values defined earlier in the same block, never a value from
outside. That makes each region a small function, which keeps every pass local.

Every edit is O(1) in the size of the program, so that passes stay linear:

- a block's operations form a doubly linked list (`Operation.prev`/`next`), so
  inserting, detaching and erasing an op never shifts or scans the others;
- each operand slot is a `Use` object, and a value threads its uses on a doubly
  linked list (in the order they were made), so adding, dropping and moving one
  use costs O(1), `replace_all_uses_with` costs O(uses), and a value allocates
  nothing for its use list.

Blocks change their arguments only through `add_arg`, `insert_arg`, `erase_args`
and `permute_args`, which keep every `BlockArg.index` right; regions move between
operations with `Region.detach` and `Operation.add_region`.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

from ..errors import IrflowError, Location
from .types import TensorType


class Use:
    """Operand `index` of `op` reads `value`. One `Use` object per operand slot, linked
    into its value's list of uses."""

    __slots__ = ("op", "index", "value", "prev", "next")

    def __init__(self, op: "Operation", index: int, value: "Value"):
        self.op = op
        self.index = index
        self.value = value
        self.prev: Use | None = None
        self.next: Use | None = None
        value._link(self)

    def __repr__(self) -> str:
        return f"Use({self.op.name}, {self.index})"


class Uses:
    """The uses of a value, in the order they were made: a live view of its list.
    Iterating is safe while the current use is moved to another value."""

    __slots__ = ("value",)

    def __init__(self, value: "Value"):
        self.value = value

    def __iter__(self) -> Iterator[Use]:
        use = self.value._first_use
        while use is not None:
            following = use.next
            yield use
            use = following

    def __len__(self) -> int:
        return self.value._n_uses

    def __bool__(self) -> bool:
        return self.value._first_use is not None


class Value:
    """An SSA value: defined once, by an operation (`OpResult`) or as a block argument
    (`BlockArg`). `name` is a hint from the user's variable name, used by the printer."""

    __slots__ = ("type", "name", "_first_use", "_last_use", "_n_uses")

    def __init__(self, type: TensorType, name: str | None = None):
        self.type = type
        self.name = name
        self._first_use: Use | None = None
        self._last_use: Use | None = None
        self._n_uses = 0

    @property
    def uses(self) -> Uses:
        return Uses(self)

    def has_use(self, use: Use) -> bool:
        """Whether `use` is linked into this value's list (a check for the verifier)."""
        before = use.prev.next if use.prev is not None else self._first_use
        after = use.next.prev if use.next is not None else self._last_use
        return use.value is self and before is use and after is use

    def replace_all_uses_with(self, other: "Value") -> None:
        if other is self:
            return
        for use in self.uses:
            use.op.set_operand(use.index, other)

    def _link(self, use: Use) -> None:
        use.prev, use.next = self._last_use, None
        if self._last_use is None:
            self._first_use = use
        else:
            self._last_use.next = use
        self._last_use = use
        self._n_uses += 1

    def _unlink(self, use: Use) -> None:
        if use.prev is None:
            self._first_use = use.next
        else:
            use.prev.next = use.next
        if use.next is None:
            self._last_use = use.prev
        else:
            use.next.prev = use.prev
        use.prev = use.next = None
        self._n_uses -= 1


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: TensorType, op: "Operation", index: int, name: str | None = None):
        super().__init__(type, name)
        self.op = op
        self.index = index

    def __repr__(self) -> str:
        return f"<result {self.index} of {self.op.name}: {self.type}>"


class BlockArg(Value):
    __slots__ = ("block", "index")

    def __init__(self, type: TensorType, block: "Block", index: int, name: str | None = None):
        super().__init__(type, name)
        self.block = block
        self.index = index

    def __repr__(self) -> str:
        return f"<block arg {self.index}: {self.type}>"


class Operation:
    """One instance of a registered op: ``%r = name %a, %b {attrs} : type``.

    `annotations` holds what an analysis found about the op (``plan.offset``, the
    arena offset buffer planning gave its result): names with a dot, printed and
    parsed with the attributes, but no part of the op's meaning, so kernels, the
    type rule, the verifier and cse never see them."""

    __slots__ = ("name", "_uses", "results", "attrs", "annotations", "_regions", "loc",
                 "parent", "prev", "next")

    def __init__(self, name: str, operands=(), result_types=(), attrs=None, regions=(),
                 loc: Location | None = None, result_names=None, annotations=None):
        self.name = name
        self._uses: list[Use] = []
        self.attrs: dict = dict(attrs or {})
        self.annotations: dict | None = dict(annotations) if annotations else None
        self.loc = loc
        self.parent: Block | None = None
        self.prev: Operation | None = None
        self.next: Operation | None = None
        names = list(result_names or [])
        names += [None] * (len(result_types) - len(names))
        self.results = [OpResult(t, self, i, n)
                        for i, (t, n) in enumerate(zip(result_types, names))]
        self._regions: list[Region] = []
        for region in regions:
            self.add_region(region)
        for value in operands:
            self.append_operand(value)

    # -- operands
    @property
    def operands(self) -> tuple[Value, ...]:
        return tuple([use.value for use in self._uses])

    def operand(self, index: int) -> Value:
        return self._uses[index].value

    @property
    def operand_uses(self) -> tuple[Use, ...]:
        """One `Use` per operand slot, in order."""
        return tuple(self._uses)

    def append_operand(self, value: Value) -> None:
        if not isinstance(value, Value):
            raise TypeError(f"operand of {self.name} must be a Value, got {value!r}")
        self._uses.append(Use(self, len(self._uses), value))

    def set_operand(self, index: int, value: Value) -> None:
        use = self._uses[index]
        if use.value is value:
            return
        use.value._unlink(use)
        use.value = value
        value._link(use)

    def set_operands(self, values: Iterable[Value]) -> None:
        self.drop_operands()
        for value in values:
            self.append_operand(value)

    def erase_operands(self, indices: Iterable[int]) -> None:
        """Remove the operands at `indices`; the others keep their order."""
        drop = set(indices)
        kept = []
        for use in self._uses:
            if use.index in drop:
                use.value._unlink(use)
            else:
                use.index = len(kept)
                kept.append(use)
        self._uses = kept

    def drop_operands(self) -> None:
        for use in self._uses:
            use.value._unlink(use)
        self._uses = []

    # -- results
    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IrflowError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> tuple[TensorType, ...]:
        return tuple(r.type for r in self.results)

    def erase_results(self, indices: Iterable[int]) -> None:
        """Remove the results at `indices`, which must be unused; the others keep their
        order (and are renumbered)."""
        drop = set(indices)
        for i in drop:
            _check_unused(self.results[i], f"cannot erase result {i} of {self.name}")
        self.results = [r for r in self.results if r.index not in drop]
        for i, r in enumerate(self.results):
            r.index = i

    def swap_result(self, index: int, other: "Operation", other_index: int) -> None:
        """Exchange result `index` of this op with result `other_index` of `other`: each
        value, with its uses, becomes the other op's result, so that whoever holds a
        value object (a frontend tensor) sees it defined by the other op. The two
        results must have the same type."""
        mine, theirs = self.results[index], other.results[other_index]
        if mine.type != theirs.type:
            raise IrflowError(f"cannot swap a {mine.type} result of {self.name} with a "
                              f"{theirs.type} result of {other.name}")
        self.results[index], other.results[other_index] = theirs, mine
        mine.op, theirs.op = other, self
        mine.index, theirs.index = other_index, index

    # -- regions
    @property
    def regions(self) -> tuple["Region", ...]:
        return tuple(self._regions)

    def add_region(self, region: "Region") -> "Region":
        if region.parent is not None:
            raise IrflowError(f"the region already belongs to '{region.parent.name}'; "
                              "detach it first")
        region.parent = self
        self._regions.append(region)
        return region

    @property
    def opdef(self):
        from .registry import lookup
        return lookup(self.name, self.loc)

    # -- structure
    def walk(self) -> Iterator["Operation"]:
        """This operation, then every operation nested in its regions, in order."""
        yield self
        for region in self._regions:
            yield from region.walk()

    def detach(self) -> "Operation":
        """Take this op out of its block, keeping its operands and uses (to move it)."""
        block = self.parent
        if block is None:
            raise IrflowError(f"{self.name} is not in a block")
        if self.prev is None:
            block._first = self.next
        else:
            self.prev.next = self.next
        if self.next is None:
            block._last = self.prev
        else:
            self.next.prev = self.prev
        block._len -= 1
        self.parent = self.prev = self.next = None
        return self

    def erase(self) -> None:
        """Remove this op from its block and drop every use it and its regions make.
        Its results must be unused."""
        for r in self.results:
            _check_unused(r, f"cannot erase {self.name}: result {r.index}")
        for region in self._regions:
            region.drop_all()
        self.drop_operands()
        if self.parent is not None:
            self.detach()

    def clone(self, mapping: dict[Value, Value]) -> "Operation":
        """A copy reading ``mapping[v]`` for each operand v (v itself if unmapped),
        with cloned regions; records old results -> new results in `mapping`."""
        op = Operation(self.name, [mapping.get(u.value, u.value) for u in self._uses],
                       self.result_types, self.attrs,
                       [r.clone(mapping) for r in self._regions],
                       self.loc, [r.name for r in self.results], self.annotations)
        for old, new in zip(self.results, op.results):
            mapping[old] = new
        return op

    def __str__(self) -> str:
        from .printer import print_op
        return print_op(self)

    def __repr__(self) -> str:
        return f"<Operation {self.name}>"


def _check_unused(value: Value, what: str) -> None:
    if value._first_use is not None:
        raise IrflowError(f"{what} still has {value._n_uses} use(s), first in "
                          f"{value._first_use.op.name}")


class BlockOps:
    """The operations of a block, in order: a live view of its linked list.

    Iterating (either way) is safe while the current op is detached or erased.
    ``ops[0]`` and ``ops[-1]`` are O(1); other indices walk from the nearer end,
    and a slice copies."""

    __slots__ = ("block",)

    def __init__(self, block: "Block"):
        self.block = block

    def __iter__(self) -> Iterator[Operation]:
        op = self.block._first
        while op is not None:
            following = op.next
            yield op
            op = following

    def __reversed__(self) -> Iterator[Operation]:
        op = self.block._last
        while op is not None:
            preceding = op.prev
            yield op
            op = preceding

    def __len__(self) -> int:
        return self.block._len

    def __bool__(self) -> bool:
        return self.block._first is not None

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(self)[index]
        n = self.block._len
        if not -n <= index < n:
            raise IndexError(f"block has {n} ops, no index {index}")
        index %= n
        if index <= n // 2:
            op = self.block._first
            for _ in range(index):
                op = op.next
        else:
            op = self.block._last
            for _ in range(n - 1 - index):
                op = op.prev
        return op


class Block:
    """Arguments and a linked list of operations; the last operation is the
    terminator."""

    __slots__ = ("_args", "_args_view", "_first", "_last", "_len", "parent")

    def __init__(self, arg_types=(), arg_names=None):
        self._args: list[BlockArg] = []
        self._args_view: tuple[BlockArg, ...] | None = ()
        self._first: Operation | None = None
        self._last: Operation | None = None
        self._len = 0
        self.parent: Region | None = None
        names = list(arg_names or [])
        for i, t in enumerate(arg_types):
            self.add_arg(t, names[i] if i < len(names) else None)

    # -- arguments
    @property
    def args(self) -> tuple[BlockArg, ...]:
        if self._args_view is None:
            self._args_view = tuple(self._args)
        return self._args_view

    def add_arg(self, type: TensorType, name: str | None = None) -> BlockArg:
        return self.insert_arg(len(self._args), type, name)

    def insert_arg(self, index: int, type: TensorType, name: str | None = None) -> BlockArg:
        arg = BlockArg(type, self, index, name)
        self._args.insert(index, arg)
        self._renumber_args(index)
        return arg

    def erase_args(self, indices: Iterable[int]) -> None:
        """Remove the arguments at `indices`, which must be unused."""
        drop = set(indices)
        for i in drop:
            _check_unused(self._args[i], f"cannot erase block argument {i}")
        self._args = [a for a in self._args if a.index not in drop]
        self._renumber_args(0)

    def permute_args(self, order: Sequence[int]) -> None:
        """Reorder the arguments: the new argument i is the old argument ``order[i]``."""
        if sorted(order) != list(range(len(self._args))):
            raise IrflowError(f"{list(order)} is not a permutation of the block's "
                              f"{len(self._args)} arguments")
        self._args = [self._args[i] for i in order]
        self._renumber_args(0)

    def _renumber_args(self, start: int) -> None:
        for i in range(start, len(self._args)):
            self._args[i].index = i
        self._args_view = None

    # -- operations
    @property
    def ops(self) -> BlockOps:
        return BlockOps(self)

    @property
    def first_op(self) -> Operation | None:
        return self._first

    def body_ops(self) -> Iterator[Operation]:
        """Every op but the last: the ops before the terminator of a complete block."""
        op = self._first
        while op is not None and op.next is not None:
            following = op.next
            yield op
            op = following

    @property
    def terminator(self) -> Operation | None:
        return self._last

    def append(self, op: Operation) -> Operation:
        return self._link(op, self._last, None)

    def prepend(self, op: Operation) -> Operation:
        return self._link(op, None, self._first)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        self._check_member(anchor)
        return self._link(op, anchor.prev, anchor)

    def _check_member(self, anchor: Operation) -> None:
        if anchor.parent is not self:
            raise IrflowError(f"{anchor.name} is not in this block")

    def _link(self, op: Operation, prev: Operation | None, nxt: Operation | None) -> Operation:
        if op.parent is not None:
            raise IrflowError(f"{op.name} is already in a block; detach it first")
        op.parent, op.prev, op.next = self, prev, nxt
        if prev is None:
            self._first = op
        else:
            prev.next = op
        if nxt is None:
            self._last = op
        else:
            nxt.prev = op
        self._len += 1
        return op

    def walk(self) -> Iterator[Operation]:
        for op in self.ops:
            yield from op.walk()

    def drop_all(self) -> None:
        """Remove every operation, dropping the uses they make (when the op owning
        this block is erased). The ops end up in no block, which is how a walk that
        still holds one knows it is gone."""
        for op in self.ops:
            for region in op._regions:
                region.drop_all()
            op.drop_operands()
            op.parent = op.prev = op.next = None
        self._first = self._last = None
        self._len = 0


class Region:
    """A list of blocks owned by an operation; irflow's regions hold exactly one."""

    __slots__ = ("blocks", "parent")

    def __init__(self, blocks=None):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for block in blocks if blocks is not None else [Block()]:
            self.add_block(block)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        if len(self.blocks) != 1:
            raise IrflowError(f"region has {len(self.blocks)} blocks, expected exactly one")
        return self.blocks[0]

    def detach(self) -> "Region":
        """Take this region out of its operation (to move it to another)."""
        if self.parent is None:
            raise IrflowError("the region does not belong to an operation")
        self.parent._regions.remove(self)
        self.parent = None
        return self

    def walk(self) -> Iterator[Operation]:
        for block in self.blocks:
            yield from block.walk()

    def drop_all(self) -> None:
        for block in self.blocks:
            block.drop_all()

    def clone(self, mapping: dict[Value, Value] | None = None) -> "Region":
        mapping = {} if mapping is None else mapping
        blocks = []
        for block in self.blocks:
            new = Block()
            for arg in block.args:
                mapping[arg] = new.add_arg(arg.type, arg.name)
            for op in block.ops:
                new.append(op.clone(mapping))
            blocks.append(new)
        return Region(blocks)


class Function:
    """``func @name(args) -> results { body }``: a region whose block arguments are the
    parameters and whose terminator is ``return``."""

    __slots__ = ("name", "body", "parent")

    def __init__(self, name: str, arg_types=(), arg_names=None):
        self.name = name
        self.body = Region([Block(arg_types, arg_names)])
        self.parent: Module | None = None

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def args(self) -> tuple[BlockArg, ...]:
        return self.block.args

    @property
    def arg_types(self) -> tuple[TensorType, ...]:
        return tuple(a.type for a in self.args)

    @property
    def return_op(self) -> Operation | None:
        term = self.block.terminator
        return term if term is not None and term.name == "return" else None

    @property
    def result_types(self) -> tuple[TensorType, ...]:
        ret = self.return_op
        return tuple(v.type for v in ret.operands) if ret is not None else ()

    def walk(self) -> Iterator[Operation]:
        return self.body.walk()

    def clone(self, name: str | None = None) -> "Function":
        fn = Function(name or self.name)
        fn.body = self.body.clone()
        return fn

    def __str__(self) -> str:
        from .printer import print_function
        return print_function(self)


class Module:
    """A named collection of functions; `str(module)` is its IR text."""

    __slots__ = ("functions", "__weakref__")

    def __init__(self, functions=()):
        self.functions: dict[str, Function] = {}
        for fn in functions:
            self.add(fn)

    def add(self, fn: Function) -> Function:
        if fn.name in self.functions:
            raise IrflowError(f"module already has a function @{fn.name}")
        fn.parent = self
        self.functions[fn.name] = fn
        return fn

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[Function]:
        return iter(self.functions.values())

    @property
    def main(self) -> Function:
        """The function to run when none is named: the first one."""
        return next(iter(self.functions.values()))

    def walk(self) -> Iterator[Operation]:
        for fn in self.functions.values():
            yield from fn.walk()

    def clone(self) -> "Module":
        """A deep copy; its ``call`` ops name the copy's functions."""
        from .symbols import bind_symbols
        copy = Module(fn.clone() for fn in self.functions.values())
        bind_symbols(copy, self)
        return copy

    def __str__(self) -> str:
        from .printer import print_module
        return print_module(self)

    def __repr__(self) -> str:
        return f"<Module {', '.join('@' + n for n in self.functions)}>"

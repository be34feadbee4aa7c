"""The IR's data structures: values, operations, blocks, regions, functions, modules.

The IR is SSA with structured control flow. An `Operation` has operands (values it
reads), results (values it defines), attributes (plain Python data) and regions. A
`Region` holds one `Block`; a block has arguments and a list of operations ending in a
terminator. Regions are closed: an operation inside a region may only use the block's
arguments and values defined earlier in the same block, never a value from outside.
That makes each region a small function, which keeps every pass local.

Each value keeps the list of its uses, so `Value.replace_all_uses_with` and the
"is this dead?" question are cheap.
"""
from __future__ import annotations

from typing import Iterator

from ..errors import IrflowError, Location
from .types import TensorType


class Use:
    """Operand `index` of `op` reads the value this use belongs to."""

    __slots__ = ("op", "index")

    def __init__(self, op: "Operation", index: int):
        self.op = op
        self.index = index

    def __repr__(self) -> str:
        return f"Use({self.op.name}, {self.index})"


class Value:
    """An SSA value: defined once, by an operation (`OpResult`) or as a block argument
    (`BlockArg`). `name` is a hint from the user's variable name, used by the printer."""

    __slots__ = ("type", "name", "uses")

    def __init__(self, type: TensorType, name: str | None = None):
        self.type = type
        self.name = name
        self.uses: list[Use] = []

    @property
    def has_uses(self) -> bool:
        return bool(self.uses)

    def replace_all_uses_with(self, other: "Value") -> None:
        if other is self:
            return
        for use in list(self.uses):
            use.op.set_operand(use.index, other)

    def _remove_use(self, op: "Operation", index: int) -> None:
        for i, use in enumerate(self.uses):
            if use.op is op and use.index == index:
                del self.uses[i]
                return
        raise IrflowError(f"internal error: {op.name} operand {index} is not a recorded use")


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
    """One instance of a registered op: ``%r = name %a, %b {attrs} : type``."""

    __slots__ = ("name", "_operands", "results", "attrs", "regions", "loc", "parent")

    def __init__(self, name: str, operands=(), result_types=(), attrs=None, regions=(),
                 loc: Location | None = None, result_names=None):
        self.name = name
        self._operands: list[Value] = []
        self.attrs: dict = dict(attrs or {})
        self.loc = loc
        self.parent: Block | None = None
        names = list(result_names or [])
        names += [None] * (len(result_types) - len(names))
        self.results = [OpResult(t, self, i, n)
                        for i, (t, n) in enumerate(zip(result_types, names))]
        self.regions: list[Region] = []
        for region in regions:
            self.add_region(region)
        for value in operands:
            self._append_operand(value)

    # -- operands
    @property
    def operands(self) -> tuple[Value, ...]:
        return tuple(self._operands)

    def _append_operand(self, value: Value) -> None:
        if not isinstance(value, Value):
            raise TypeError(f"operand of {self.name} must be a Value, got {value!r}")
        value.uses.append(Use(self, len(self._operands)))
        self._operands.append(value)

    def set_operand(self, index: int, value: Value) -> None:
        old = self._operands[index]
        if old is value:
            return
        old._remove_use(self, index)
        self._operands[index] = value
        value.uses.append(Use(self, index))

    def set_operands(self, values) -> None:
        self.drop_operands()
        for value in values:
            self._append_operand(value)

    def drop_operands(self) -> None:
        for i, value in enumerate(self._operands):
            value._remove_use(self, i)
        self._operands = []

    # -- results and regions
    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IrflowError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> tuple[TensorType, ...]:
        return tuple(r.type for r in self.results)

    def add_region(self, region: "Region") -> "Region":
        if region.parent is not None:
            raise IrflowError("region already belongs to an operation")
        region.parent = self
        self.regions.append(region)
        return region

    @property
    def opdef(self):
        from .registry import lookup
        return lookup(self.name, self.loc)

    # -- structure
    def walk(self) -> Iterator["Operation"]:
        """This operation, then every operation nested in its regions, in order."""
        yield self
        for region in self.regions:
            yield from region.walk()

    def parent_op(self) -> "Operation | None":
        block = self.parent
        region = block.parent if block is not None else None
        return region.parent if region is not None else None

    def erase(self) -> None:
        """Remove this op from its block. Its results must be unused."""
        for r in self.results:
            if r.uses:
                raise IrflowError(f"cannot erase {self.name}: result {r.index} still has "
                                  f"{len(r.uses)} use(s), first in {r.uses[0].op.name}")
        for region in self.regions:
            region.drop_all()
        self.drop_operands()
        if self.parent is not None:
            self.parent.remove(self)

    def clone(self, mapping: dict[Value, Value]) -> "Operation":
        """A copy reading ``mapping[v]`` for each operand v (v itself if unmapped),
        with cloned regions; records old results -> new results in `mapping`."""
        op = Operation(self.name, [mapping.get(v, v) for v in self._operands],
                       self.result_types, self.attrs, [r.clone(mapping) for r in self.regions],
                       self.loc, [r.name for r in self.results])
        for old, new in zip(self.results, op.results):
            mapping[old] = new
        return op

    def __str__(self) -> str:
        from .printer import print_op
        return print_op(self)

    def __repr__(self) -> str:
        return f"<Operation {self.name}>"


class Block:
    """Arguments and a list of operations; the last operation is the terminator."""

    __slots__ = ("args", "ops", "parent")

    def __init__(self, arg_types=(), arg_names=None):
        self.args: list[BlockArg] = []
        self.ops: list[Operation] = []
        self.parent: Region | None = None
        names = list(arg_names or [])
        for i, t in enumerate(arg_types):
            self.add_arg(t, names[i] if i < len(names) else None)

    def add_arg(self, type: TensorType, name: str | None = None) -> BlockArg:
        arg = BlockArg(type, self, len(self.args), name)
        self.args.append(arg)
        return arg

    def erase_arg(self, index: int) -> None:
        arg = self.args[index]
        if arg.uses:
            raise IrflowError(f"cannot erase block argument {index}: it still has uses")
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    def append(self, op: Operation) -> Operation:
        return self.insert(len(self.ops), op)

    def insert(self, index: int, op: Operation) -> Operation:
        if op.parent is not None:
            raise IrflowError(f"{op.name} is already in a block")
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.index_of(anchor), op)

    def index_of(self, op: Operation) -> int:
        for i, o in enumerate(self.ops):
            if o is op:
                return i
        raise IrflowError(f"{op.name} is not in this block")

    def remove(self, op: Operation) -> None:
        del self.ops[self.index_of(op)]
        op.parent = None

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None

    def walk(self) -> Iterator[Operation]:
        for op in list(self.ops):
            yield from op.walk()

    def drop_all(self) -> None:
        """Drop every use made by this block's operations (before erasing them)."""
        for op in self.ops:
            for region in op.regions:
                region.drop_all()
            op.drop_operands()


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
    def args(self) -> list[BlockArg]:
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

    __slots__ = ("functions",)

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
        return Module(fn.clone() for fn in self.functions.values())

    def __str__(self) -> str:
        from .printer import print_module
        return print_module(self)

    def __repr__(self) -> str:
        return f"<Module {', '.join('@' + n for n in self.functions)}>"

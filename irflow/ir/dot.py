"""Graphviz text of a module (``irflow dot``): the data flow, with regions as clusters.

Each op is a box labelled as its line of IR text begins (``%h = matmul : f32[N,8]``,
with the printer's names), each function and region argument an ellipse, and each
use of a value an edge from the node that defines it. A function is a cluster; so
is each region, nested in the cluster of the block holding its op and labelled
with the op and the region (``%y = cond ^then``). Dashed edges go from a region op
to the arguments of its regions (its operands enter there) and from each region's
terminator back to the op (what the region yields). Nothing here knows any op: the
structure is the IR's own.
"""
from __future__ import annotations

import json

from .core import Block, Function, Module, Operation, Value
from .printer import Namer
from .registry import is_registered, lookup

_MAX_LABEL = 60


def to_dot(module: Module) -> str:
    """The Graphviz ``digraph`` of every function of `module`."""
    writer = _Writer()
    for fn in module:
        writer.function(fn)
    return "\n".join(["digraph irflow {", "  compound=true;", "  rankdir=TB;",
                      '  node [shape=box, fontname="monospace", fontsize=10];',
                      '  edge [fontname="monospace", fontsize=9];',
                      *writer.lines, "}"]) + "\n"


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.nodes: dict[Value, str] = {}  # value -> the node that defines it
        self.count = 0
        self.depth = 1

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def node(self, label: str, shape: str = "box") -> str:
        self.count += 1
        name = f"n{self.count}"
        if len(label) > _MAX_LABEL:
            label = label[:_MAX_LABEL - 3] + "..."
        self.emit(f"{name} [label={json.dumps(label)}, shape={shape}];")
        return name

    def cluster(self, label: str):
        self.count += 1
        self.emit(f"subgraph cluster_{self.count} {{")
        self.depth += 1
        self.emit(f"label={json.dumps(label)};")

    def end_cluster(self) -> None:
        self.depth -= 1
        self.emit("}")

    def function(self, fn: Function) -> None:
        self.namer = Namer()
        self.cluster(f"func @{fn.name}")
        self.arguments(fn.block)
        self.block(fn.block)
        self.end_cluster()

    def arguments(self, block: Block) -> list[str]:
        for a in block.args:
            self.nodes[a] = self.node(f"%{self.namer.name(a)}: {a.type}", "ellipse")
        return [self.nodes[a] for a in block.args]

    def block(self, block: Block) -> str | None:
        """Write `block`'s ops; the node of its terminator."""
        last = None
        for op in block.ops:
            last = self.op(op)
        return last

    def op(self, op: Operation) -> str:
        results = ", ".join(f"%{self.namer.name(r)}" for r in op.results)
        types = ", ".join(str(r.type) for r in op.results)
        head = f"{results} = {op.name}" if results else op.name
        node = self.node(f"{head} : {types}" if types else head)
        for v in op.operands:
            self.emit(f"{self.nodes[v]} -> {node};")
        labels = lookup(op.name).regions if is_registered(op.name) else ()
        mark = self.namer.mark()
        taken: list[str] = []
        for i, region in enumerate(op.regions):
            label = labels[i] if i < len(labels) else f"region{i}"
            self.cluster(f"{head} ^{label}")
            args = self.arguments(region.blocks[0])
            terminator = self.block(region.blocks[0])
            self.end_cluster()
            # Outside the cluster: an edge written inside one makes both ends members.
            for arg in args:
                self.emit(f"{node} -> {arg} [style=dashed];")
            if terminator is not None:
                self.emit(f"{terminator} -> {node} [style=dashed, constraint=false];")
            taken += self.namer.release(mark)
        self.namer.reserve(taken)
        for r in op.results:
            self.nodes[r] = node
        return node


__all__ = ["to_dot"]

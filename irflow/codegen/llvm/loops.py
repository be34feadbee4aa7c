"""Loop nests in LLVM IR, built with a context manager as Numba does.

``with counted_loop(builder, start, stop, "i") as i:`` emits the header, the body
block the ``with`` statement fills and the latch, and leaves the builder after the
loop. The induction variable is a phi, so the loop is in the form LLVM's loop
vectorizer recognizes (a canonical counted loop with a single latch).

``with carried_loop(builder, start, stop, inits, "i") as loop:`` is the same loop
carrying values from one iteration to the next (a reduction's accumulators): the
body reads ``loop.values`` and sets ``loop.next``; after the loop, ``loop.values``
are the values it ended with.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

I64 = ir.IntType(64)


class Carried:
    """The index and the carried values of a `carried_loop`."""

    def __init__(self, index, values):
        self.index = index
        self.values = values
        self.next = None


@contextmanager
def carried_loop(builder: ir.IRBuilder, start, stop, inits, name: str):
    """``for i in range(start, stop)`` over i64 values, carrying `inits`; yields a
    `Carried` whose ``next`` the body must set (one value per init)."""
    before = builder.block
    header = builder.append_basic_block(f"{name}.header")
    body = builder.append_basic_block(f"{name}.body")
    after = builder.append_basic_block(f"{name}.end")
    builder.branch(header)
    builder.position_at_end(header)
    index = builder.phi(I64, name=name)
    index.add_incoming(start, before)
    values = []
    for init in inits:
        phi = builder.phi(init.type)
        phi.add_incoming(init, before)
        values.append(phi)
    builder.cbranch(builder.icmp_signed("<", index, stop), body, after)
    builder.position_at_end(body)
    loop = Carried(index, values)
    yield loop
    step = builder.add(index, ir.Constant(I64, 1), name=f"{name}.next")
    latch = builder.block
    index.add_incoming(step, latch)
    for phi, value in zip(values, loop.next or ()):
        phi.add_incoming(value, latch)
    builder.branch(header)
    builder.position_at_end(after)


@contextmanager
def counted_loop(builder: ir.IRBuilder, start, stop, name: str):
    """``for i in range(start, stop)`` over i64 values; yields ``i``."""
    with carried_loop(builder, start, stop, (), name) as loop:
        yield loop.index

"""Loop nests in LLVM IR, built with a context manager as Numba does.

``with counted_loop(builder, start, stop, "i") as i:`` emits the header, the body
block the ``with`` statement fills and the latch, and leaves the builder after the
loop. The induction variable is a phi, so the loop is in the form LLVM's loop
vectorizer recognizes (a canonical counted loop with a single latch).
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

I64 = ir.IntType(64)


@contextmanager
def counted_loop(builder: ir.IRBuilder, start, stop, name: str):
    """``for i in range(start, stop)`` over i64 values; yields ``i``."""
    before = builder.block
    header = builder.append_basic_block(f"{name}.header")
    body = builder.append_basic_block(f"{name}.body")
    after = builder.append_basic_block(f"{name}.end")
    builder.branch(header)
    builder.position_at_end(header)
    index = builder.phi(I64, name=name)
    index.add_incoming(start, before)
    builder.cbranch(builder.icmp_signed("<", index, stop), body, after)
    builder.position_at_end(body)
    yield index
    step = builder.add(index, ir.Constant(I64, 1), name=f"{name}.next")
    index.add_incoming(step, builder.block)
    builder.branch(header)
    builder.position_at_end(after)

"""How the IR core scales: time per op of dce, cse, fold, verify, print and parse at
4,000 to 64,000 ops, and the compile time of a 30,000-op program with its gradient.
Run by hand:

    PYTHONPATH=. python benchmarks/ir_scaling.py          # the table, the 30,000-op compile
    PYTHONPATH=. python benchmarks/ir_scaling.py --quick  # up to 16,000 ops

Every IR edit is O(1), so each column should stay flat: the last row's time per op
at most 1.5x the first row's. The program is a chain of blocks of ten ops, half of
them dead, duplicated or foldable (``x * 1``, ``neg(neg(x))``, constant arithmetic),
with a ``cond`` every tenth block, so every pass has work proportional to its size.
"""
import argparse
import gc
import os
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import irflow  # noqa: E402
from irflow.codegen import compile_plan  # noqa: E402
from irflow.ir import Module, TensorType, function, parse, verify  # noqa: E402
from irflow.passes import DEFAULT_PIPELINE, PassManager, make_pass  # noqa: E402
from irflow.passes.autodiff import grad  # noqa: E402

F32 = TensorType("f32", [8])
OPS_PER_BLOCK = 10
REPEAT = 5


def chain(n_ops: int) -> Module:
    """A function of about `n_ops` ops (see the module docstring)."""
    def body(b, x, w):
        h = x
        for k in range(n_ops // OPS_PER_BLOCK):
            one = b.constant(1.0, "float32")
            two = b.add(one, one)               # folds to a constant
            a = b.mul(h, w)
            b.exp(a)                            # dead
            same = b.mul(h, w)                  # cse merges it with a
            m = b.mul(b.add(a, same), one)      # x * 1 folds
            n = b.neg(b.neg(m))                 # neg(neg(x)) folds
            if k % 10 == 9:
                (n,) = b.cond(b.gt(b.sum(n), b.constant(0.0, "float32")), [n],
                              lambda rb, v: rb.tanh(v), lambda rb, v: rb.neg(v))
            h = b.mul(b.tanh(n), two)
        return b.sum(h)
    return Module([function("chain", [F32, F32], body, ["x", "w"])])


def seconds(work) -> float:
    """The best of `REPEAT` runs: the machine's noise only ever adds time."""
    best = float("inf")
    for _ in range(REPEAT):
        settle()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def settle() -> None:
    """Collect garbage and freeze what is alive (the input program among it), so that
    the timing that follows counts the stage's own work: CPython's full collections
    traverse every live object, which makes any stage that allocates look slower on
    a larger heap, whatever its algorithm."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def per_op_row(n_ops: int) -> dict[str, float]:
    """Microseconds per op of each stage on a fresh copy of the program."""
    module = chain(n_ops)
    text = str(module)
    size = sum(1 for _ in module.walk())

    def pass_time(name):
        best = float("inf")
        for _ in range(REPEAT):
            copy = parse(text)
            settle()
            start = time.perf_counter()
            make_pass(name).run(copy)
            best = min(best, time.perf_counter() - start)
        return best / size * 1e6

    return {
        "ops": size,
        "dce": pass_time("dce"),
        "cse": pass_time("cse"),
        "fold": pass_time("fold"),
        "verify": seconds(lambda: verify(module)) / size * 1e6,
        "print": seconds(lambda: str(module)) / size * 1e6,
        "parse": seconds(lambda: parse(text)) / size * 1e6,
    }


def scaling_table(sizes) -> None:
    columns = ["dce", "cse", "fold", "verify", "print", "parse"]
    print(f"{'ops':>8}  " + "  ".join(f"{c:>8}" for c in columns) + "   (us per op)")
    rows = [per_op_row(n) for n in sizes]
    for row in rows:
        print(f"{row['ops']:>8}  " + "  ".join(f"{row[c]:8.2f}" for c in columns))
    growth = {c: rows[-1][c] / rows[0][c] for c in columns}
    print(f"{'growth':>8}  " + "  ".join(f"{growth[c]:7.2f}x" for c in columns)
          + f"   ({rows[-1]['ops']} vs {rows[0]['ops']} ops; at most 1.5x)")


def gradient_compile(n_ops: int) -> None:
    """IR level: the gradient transform, the default pipeline and the plan; and the
    same through irflow.compile with its gradient entering eager autograd."""
    module = chain(n_ops)
    size = sum(1 for _ in module.walk())
    start = time.perf_counter()
    g = Module([grad(module.main, [1])])
    PassManager(DEFAULT_PIPELINE).run(g)
    compile_plan(g.main)
    ir_time = time.perf_counter() - start
    print(f"gradient of a {size}-op function (grad, {','.join(DEFAULT_PIPELINE)}, plan): "
          f"{ir_time:.2f} s")

    blocks = n_ops // 3

    class Deep(irflow.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([8])

        def forward(self, x):
            h = x
            for _ in range(blocks):
                h = irflow.tanh(h * self.w) + x
            return h.sum()

    model = Deep()
    x = irflow.to_tensor(np.linspace(-1, 1, 8).astype("float32"))
    start = time.perf_counter()
    loss = irflow.compile(model)(x)
    loss.backward()
    total = time.perf_counter() - start
    assert model.w.grad is not None
    print(f"irflow.compile of a {3 * blocks}-op Layer, its call and backward() "
          f"(forward, vjp split, plans): {total:.2f} s (target: under 10 s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 16,000 ops only")
    args = parser.parse_args()
    sizes = [4000, 8000, 16000] if args.quick else [4000, 8000, 16000, 32000, 64000]
    gradient_compile(30000)  # first, in a fresh process, as a user's compile would run
    scaling_table(sizes)


if __name__ == "__main__":
    main()

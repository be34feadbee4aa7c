"""Compiled training steps against eager ones: cases found while hunting for silent
wrong answers after fusion learned to join ops above a group's outside reader (a row
sum without keepdim, [N,N] -> [N], broadcast back along the last axis was read per
row once its reader's group merged with the sum's)."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.ir import parse
from irflow.passes import PassManager


def test_a_row_sum_broadcast_along_the_last_axis_stays_outside_the_kernel():
    module = parse("""
func @f(%x: f32[5,5], %b: f32[5]) -> f32[5,5] {
  %e = exp %x : f32[5,5]
  %r = sum %e {axis=[1]} : f32[5]
  %t = add %r, %b : f32[5]
  %y = mul %t, %e : f32[5,5]
  return %y
}""")
    PassManager(["fuse"], verify_each=True).run(module)
    bodies = [[op.name for op in k.regions[-1].blocks[0].ops]
              for k in module.main.block.ops if k.name == "fused"]
    # %r must leave the kernel that computes it: %t reads it along the last axis
    assert not any("reduce" in body and "add" in body for body in bodies), bodies


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_row_sum_broadcast_along_the_last_axis_compiled_equals_eager(backend):
    def f(x, b):
        e = paddle.exp(x)
        t = e.sum(axis=1) + b   # [5]: broadcasts along the last axis below
        return t * e

    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((5, 5)).astype("float32"))
    b = paddle.to_tensor(np.arange(5, dtype="float32"))
    np.testing.assert_allclose(paddle.compile(f, backend=backend)(x, b).numpy(),
                               f(x, b).numpy(), rtol=1e-5)


class KernelSmooth(nn.Layer):
    """An RBF kernel between the batch's items, normalised by its degree from the
    right (dinv * A broadcasts dinv along the last axis: A D^-1/2, A symmetric)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.fc(x))
        a = paddle.exp(paddle.matmul(h, h, transpose_y=True) - 1.0)  # [N, N]
        dinv = paddle.rsqrt(a.sum(axis=1))                             # [N]
        return self.out(paddle.matmul(dinv * a, h))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_training_a_degree_normalised_kernel_model_compiled_equals_eager(backend):
    paddle.seed(0)
    eager_model, compiled_model = KernelSmooth(), KernelSmooth()
    compiled_model.set_state_dict(eager_model.state_dict())

    def make_step(model):
        opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager, compiled = make_step(eager_model), paddle.compile(make_step(compiled_model),
                                                             backend=backend)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = paddle.to_tensor(rng.standard_normal((7, 6)).astype("float32"))
        y = paddle.to_tensor(rng.integers(0, 3, 7))
        np.testing.assert_allclose(compiled(x, y).numpy(), eager(x, y).numpy(), rtol=1e-4)
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5)

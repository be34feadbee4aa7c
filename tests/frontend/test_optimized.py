"""What the pass pipeline makes of compiled models: the pass report, fused kernels
(LayerNorm(x + GELU(x*w + b)) in one), compiled training through fused programs,
frozen inference compiles (Conv2D+BatchNorm+ReLU as one conv with its epilogue)
and jit.save of a frozen eval model."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.ir.registry import lookup
from irflow.ir.traits import Terminator, View
from irflow.passes import DEFAULT_PIPELINE, INFERENCE_PIPELINE
from irflow.static import InputSpec
from tests.support.models import LayerNormGelu

FUSED = (*DEFAULT_PIPELINE, "fuse") if "fuse" not in DEFAULT_PIPELINE else DEFAULT_PIPELINE
FROZEN = (*INFERENCE_PIPELINE, "fuse") if "fuse" not in INFERENCE_PIPELINE \
    else INFERENCE_PIPELINE


def kernels(compiled) -> list[str]:
    """The ops the program runs as kernels: fused ops and compute ops outside them
    (constants, views and terminators aside)."""
    return [op.name for op in compiled.ir.main.block.ops
            if op.name != "const" and not lookup(op.name).has(Terminator)
            and not lookup(op.name).has(View)]


class ConvBNReLU(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2D(6)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def trained_statistics(model: ConvBNReLU) -> ConvBNReLU:
    """Running statistics and affine parameters that are not the identity."""
    model.train()
    for _ in range(3):
        model(paddle.randn([4, 3, 5, 5]) * 2.0 + 0.5)
    model.bn.weight.set_value(paddle.rand([6]) + 0.5)
    model.bn.bias.set_value(paddle.randn([6]))
    model.eval()
    return model


def test_the_pass_report_says_what_each_pass_did():
    model = LayerNormGelu(8)
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 8], "float32")],
                              pipeline=FUSED)
    report = compiled.pass_report
    assert [r.name for r in report] == list(FUSED)
    assert report["fuse"].statistics["fused-ops"] == 1
    assert report["fuse"].statistics["ops-fused"] >= 17
    assert report["fold"].ops_before >= report["dce"].ops_after
    assert str(report).splitlines()[0].split()[:3] == ["pass", "time", "ops"]


def test_layer_norm_of_x_plus_gelu_is_one_kernel_and_computes_what_eager_does():
    model = LayerNormGelu(16)
    x = paddle.randn([5, 16])
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 16], "float32")],
                              pipeline=FUSED)
    assert kernels(compiled) == ["fused"]
    np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_softmax_and_an_mlp_epilogue():
    class Head(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return F.softmax(F.relu(self.fc(x)), -1)
    model = Head()
    x = paddle.randn([3, 8])
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 8], "float32")],
                              pipeline=FUSED)
    assert kernels(compiled) == ["fused"]
    np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-6, atol=1e-7)


def test_compiled_training_differentiates_before_fusing():
    """The gradients of a fused compile are those of the unfused one: autodiff sees the
    program as traced, and both halves are fused after."""
    grads = []
    for pipeline in (DEFAULT_PIPELINE, FUSED):
        paddle.seed(7)
        model = LayerNormGelu(8)
        x = paddle.randn([4, 8])
        compiled = paddle.compile(model, input_spec=[InputSpec([None, 8], "float32")],
                                  pipeline=pipeline)
        (compiled(x) ** 2).sum().backward()
        grads.append([p.grad.numpy() for p in model.parameters()])
    for unfused, fused in zip(*grads):
        np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)


def test_conv_batch_norm_relu_in_eval_is_one_conv_with_an_epilogue():
    model = trained_statistics(ConvBNReLU())
    x = paddle.randn([2, 3, 5, 5])
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 3, 5, 5], "float32")],
                              freeze=True, pipeline=FROZEN)
    assert kernels(compiled) == ["fused"]
    (fused,) = [op for op in compiled.ir.walk() if op.name == "fused"]
    assert [op.name for op in fused.regions[0].blocks[0].body_ops()] == ["conv2d"]
    assert [op.name for op in fused.regions[1].blocks[0].body_ops()] == ["add", "relu"]
    assert [a.name for a in compiled.ir.main.args] == ["x"]  # the parameters are constants
    np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)


def test_a_frozen_program_compiles_anew_when_a_parameter_changes():
    model = trained_statistics(ConvBNReLU())
    x = paddle.randn([2, 3, 5, 5])
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 3, 5, 5], "float32")],
                              freeze=True)
    before = compiled(x).numpy()
    model.bn.weight.set_value(model.bn.weight * 3.0)
    after = compiled(x).numpy()
    assert not np.allclose(after, before)
    np.testing.assert_allclose(after, model(x).numpy(), rtol=1e-5, atol=1e-5)


def test_freezing_leaves_training_programs_alone():
    model = ConvBNReLU()
    model.train()
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 3, 5, 5], "float32")],
                              freeze=True)
    compiled(paddle.randn([2, 3, 5, 5]))
    assert "conv.weight" in [a.name for a in compiled.ir.main.args]
    assert [r.name for r in compiled.pass_report] == list(DEFAULT_PIPELINE)


def test_jit_save_of_a_frozen_eval_model_saves_the_folded_program(tmp_path):
    model = trained_statistics(ConvBNReLU())
    path = str(tmp_path / "model")
    spec = [InputSpec([None, 3, 5, 5], "float32")]
    paddle.jit.save(model, path, input_spec=spec, freeze=True)
    loaded = paddle.jit.load(path)
    names = {op.name for op in loaded.ir.walk()}
    assert "rsqrt" not in names and "sub" not in names  # BatchNorm is in the weights
    assert list(loaded.state_dict()) == ["conv.weight"] and loaded.parameters() == []
    x = paddle.randn([3, 3, 5, 5])
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)
    model.train()  # saved all the same as the inference program, as Paddle saves
    paddle.jit.save(model, path, input_spec=spec, freeze=True)
    assert model.training
    want = model.eval()(x).numpy()
    np.testing.assert_allclose(paddle.jit.load(path)(x).numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("freeze", [False, True])
def test_linear_then_batch_norm_folds_into_the_linear(freeze):
    class LinearBN(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.bn = nn.BatchNorm1D(3)

        def forward(self, x):
            return self.bn(self.fc(x))
    model = LinearBN()
    model.train()
    model(paddle.randn([8, 4]) + 1.0)
    model.eval()
    compiled = paddle.compile(model, input_spec=[InputSpec([None, 4], "float32")],
                              freeze=freeze)
    x = paddle.randn([5, 4])
    np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    names = [op.name for op in compiled.ir.walk()]
    assert ("rsqrt" in names) is not freeze


def test_gradients_of_gradients_of_a_fused_compile():
    def f(x):
        return paddle.tanh(x * 2.0 + 1.0).sum()
    x = paddle.to_tensor(np.linspace(-1, 1, 5))
    x.stop_gradient = False
    (g,) = paddle.grad(paddle.compile(f, pipeline=FUSED)(x), x, create_graph=True)
    (gg,) = paddle.grad(g.sum(), x)
    t = np.tanh(2 * x.numpy() + 1)
    np.testing.assert_allclose(g.numpy(), 2 * (1 - t ** 2), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), -8 * t * (1 - t ** 2), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_adding_zero_keeps_the_sign_eager_gives(backend):
    """-0.0 + 0.0 is +0.0: folding ``x + 0.0`` to ``x`` would return -0.0; ``x - 0.0``
    and ``x + -0.0`` are x for every float, -0.0 included."""
    def f(x):
        return x + 0.0, x - 0.0, x * 1.0
    x = paddle.to_tensor(np.array([-0.0, 0.0, -1.5, np.nan], np.float32))
    for got, want in zip(paddle.compile(f, backend=backend)(x), f(x)):
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
        np.testing.assert_array_equal(got.numpy(), want.numpy())

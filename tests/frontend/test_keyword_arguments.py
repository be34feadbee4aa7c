"""Compiled calls that pass keyword-only parameters (``forward(self, x, *, mask=None)``)
or ``**kwargs`` by keyword, as Paddle's ``to_static`` runs them: tensors passed so
are inputs of the program (with gradients when they require them), None, numbers
and strings constants of the trace, as positional arguments' are, and every call
gives what the eager code gives."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ArgumentError
from irflow.static import InputSpec

BACKENDS = ["numpy", "llvm"]


class Masked(nn.Layer):
    """A linear layer whose output an optional keyword-only mask multiplies."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, *, mask=None):
        y = self.fc(x)
        if mask is not None:
            y = y * mask
        return y


class Scaled(nn.Layer):
    """Reads its options from ``**kwargs``: a number and an optional tensor."""

    def forward(self, x, **kwargs):
        y = x * kwargs.get("scale", 1.0)
        if "bias" in kwargs:
            y = y + kwargs["bias"]
        return y


def tensor(shape, seed: int, stop_gradient: bool = True):
    rng = np.random.default_rng(seed)
    return paddle.to_tensor(rng.standard_normal(shape).astype("float32"),
                            stop_gradient=stop_gradient)


def close(a, b) -> None:
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_only_tensor_with_and_without(backend):
    paddle.seed(0)
    model = Masked()
    static = paddle.jit.to_static(model, backend=backend)
    x, mask = tensor((2, 3), 1), tensor((2, 3), 2)
    close(static(x), model(x))
    close(static(x, mask=mask), model(x, mask=mask))
    close(static(x, mask=None), model(x))
    other = tensor((2, 3), 3)  # the same program, another input
    close(static(x, mask=other), model(x, mask=other))


@pytest.mark.parametrize("backend", BACKENDS)
def test_var_keyword_number_and_tensor(backend):
    model = Scaled()
    static = paddle.jit.to_static(model, backend=backend)
    x, bias = tensor((2, 3), 1), tensor((2, 3), 2)
    close(static(x), model(x))
    close(static(x, scale=2.0), x * 2.0)
    close(static(x, scale=2.0, bias=bias), x * 2.0 + bias)
    close(static(x, bias=bias, scale=0.5), x * 0.5 + bias)


def test_gradient_reaches_keyword_tensor():
    paddle.seed(0)
    model = Masked()
    static = paddle.jit.to_static(model)
    x = tensor((2, 3), 1)
    mask, eager_mask = tensor((2, 3), 2, False), tensor((2, 3), 2, False)
    (static(x, mask=mask) ** 2).sum().backward()
    (model(x, mask=eager_mask) ** 2).sum().backward()
    assert mask.grad is not None
    close(mask.grad, eager_mask.grad)
    # d/dm sum((fc(x) * m)^2) = 2 fc(x)^2 m
    close(mask.grad, 2 * model.fc(x) ** 2 * mask)


def test_gradient_reaches_var_keyword_tensor():
    static = paddle.jit.to_static(Scaled())
    x, bias = tensor((2, 3), 1), tensor((2, 3), 2, False)
    (static(x, scale=3.0, bias=bias) ** 2).sum().backward()
    close(bias.grad, 2 * (x * 3.0 + bias))  # d/db sum((3x + b)^2)


def test_keyword_constant_value_retraces():
    static = paddle.jit.to_static(Scaled())
    x = tensor((2, 3), 1)
    for scale in (2.0, 3.0, 2.0, -1.5):
        close(static(x, scale=scale), x * scale)
    assert len({id(p) for p in static._programs.values()}) == 3


def test_positional_dict_and_keywords_take_their_own_programs():
    def f(x, d=None, **kw):
        if kw:
            return x + kw["a"] * 10.0
        return x + d["a"]

    static = paddle.jit.to_static(f)
    x, a = tensor((2, 3), 1), tensor((3,), 2)
    for _ in range(2):  # each after the other's program exists
        close(static(x, {"a": a}), x + a)
        close(static(x, a=a), x + a * 10.0)
    close(static(x, d={"a": a}), x + a)  # a positional parameter given by keyword


def test_keyword_with_positional_parameter_skipped():
    def f(x, y=None, *, z):
        return x * z if y is None else x * z + y

    static = paddle.jit.to_static(f)
    x, y, z = tensor((3,), 1), tensor((3,), 2), tensor((3,), 3)
    close(static(x, z=z), x * z)
    close(static(x, y, z=z), x * z + y)
    close(static(x, z=z, y=y), x * z + y)


def test_keyword_list_of_tensors():
    def f(x, *, extra=()):
        for e in extra:
            x = x + e
        return x

    static = paddle.jit.to_static(f)
    x, a, b = tensor((3,), 1), tensor((3,), 2), tensor((3,), 3)
    close(static(x, extra=[a, b]), x + a + b)
    close(static(x), x)


def test_check_mode_with_keywords():
    paddle.seed(0)
    model = Masked()
    model.eval()
    static = paddle.compile(model, check=True)
    x, mask = tensor((2, 3), 1), tensor((2, 3), 2)
    close(static(x, mask=mask), model(x, mask=mask))


def test_input_spec_refuses_keywords():
    paddle.seed(0)
    static = paddle.jit.to_static(Masked(), input_spec=[InputSpec([None, 3], "float32")])
    x = tensor((2, 3), 1)
    with pytest.raises(ArgumentError, match="input_spec.*mask"):
        static(x, mask=x)


def test_save_after_keyword_call(tmp_path):
    paddle.seed(0)
    model = Masked()
    static = paddle.jit.to_static(model)
    x, mask = tensor((2, 3), 1), tensor((2, 3), 2)
    static(x, mask=mask)
    paddle.jit.save(static, str(tmp_path / "masked"))
    loaded = paddle.jit.load(str(tmp_path / "masked"))
    close(loaded(x, mask), model(x, mask=mask))

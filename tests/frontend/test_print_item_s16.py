"""Compiled code shows and computes Python numbers and NumPy arrays taken from tensors
as eager code does: ``t.item()`` and ``float(t)`` are doubles (``t.item() * 0.1``
rounds as in Python, not in float32) that meet tensors as Python numbers; ``print``
shows ``t.numpy()`` as NumPy does, ``t.tolist()`` as a list, and a tensor requiring a
gradient as ``stop_gradient=False``."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.codegen import run
from irflow.ir import parse, verify

BACKENDS = ["numpy", "llvm"]


def _outputs(fn, capsys, *args):
    """(what `fn` returns, what it prints) eagerly, then compiled on each backend."""
    found = []
    for backend in [None, *BACKENDS]:
        f = fn if backend is None else paddle.compile(fn, backend=backend)
        result = f(*args)
        found.append((result, capsys.readouterr().out))
    return found


def _number(value):
    return value.item() if isinstance(value, paddle.Tensor) else value


def running_rate(x):
    rate = 0.0
    for v in x:
        rate = rate * 0.9 + v.item() * 0.1
    return rate


def number_arithmetic(x, k):
    n = int(k[0])
    return (float(x[0]) * 0.1, x[1].item() / 3, n / 3, n * 0.5, n ** -1, 2 / n,
            x.sum().item() / x.shape[0], round(x[2].item() * 2.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_numbers_from_tensors_compute_as_python_does(backend):
    x = paddle.to_tensor([1.0, -2.0, 3.0])
    k = paddle.to_tensor([7, 2], dtype="int32")
    want = running_rate(x)
    assert want != float(np.float32(np.float32(0.1) * np.float32(3.0)))  # float32 differs
    got = paddle.compile(running_rate, backend=backend)(x)
    assert got.item() == want
    compiled = paddle.compile(number_arithmetic, backend=backend)(x, k)
    for got, want in zip(compiled, number_arithmetic(x, k), strict=True):
        assert got.item() == want and type(got.item()) is type(want)


def numbers_meet_tensors(x, h, k):
    v = x[2].item() * 0.1
    return (x * v, h * x[1].item(), k * int(k[1]), k * v, x > v, paddle.full([2], v),
            paddle.where(x > 0, x, v), paddle.clip(x, min=v), x[int(k[1])])


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbers_from_tensors_meet_tensors_as_python_numbers(backend):
    x = paddle.to_tensor([1.0, -2.0, 3.0])
    h = paddle.to_tensor([0.1, 0.2, 0.3], dtype="float16")
    k = paddle.to_tensor([7, 2, 1], dtype="int32")
    compiled = paddle.compile(numbers_meet_tensors, backend=backend)(x, h, k)
    for got, want in zip(compiled, numbers_meet_tensors(x, h, k), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def printed_values(x):
    y = x * 2
    print(y, y.detach())
    print(x.numpy(), x.sum().numpy(), f"{x.numpy()} {x.sum().numpy():.3f}")
    print(repr(x.numpy()), [x.numpy()], {"sum": x.sum().item(), "n": 3})
    print(x.tolist(), x.sum().tolist(), float(x[0]), x[1].item() * 0.1)
    rows = x.reshape([2, 1]).tolist()
    print(rows, rows[1][0] * 0.1, len(rows))
    return y


@pytest.mark.parametrize("grad", [True, False])
def test_print_shows_what_eager_print_shows(capsys, grad):
    x = paddle.to_tensor([1.0, 2.5])
    x.stop_gradient = not grad
    (_, eager), *compiled = _outputs(printed_values, capsys, x)
    assert ("stop_gradient=False" in eager) == grad
    assert "[1.  2.5] 3.5 [1.  2.5] 3.500" in eager and "[1.0, 2.5] 3.5 1.0" in eager
    for _, printed in compiled:
        assert printed == eager


def numpy_spread(x):
    a = x.numpy()
    return paddle.to_tensor(a.std()), paddle.to_tensor(a.var(axis=0, ddof=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_std_and_var_are_numpys(backend):
    """NumPy's std and var divide by n (Paddle's by n - 1): compiled, x.numpy().std()
    computed Paddle's."""
    x = paddle.to_tensor([[1.0, 2.0], [4.0, 8.0]])
    got = paddle.compile(numpy_spread, backend=backend)(x)
    data = x.numpy().astype(np.float64)
    want = [data.std(), data.var(axis=0, ddof=1)]
    for g, w, eager in zip(got, want, numpy_spread(x), strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
        np.testing.assert_allclose(eager.numpy(), w, rtol=1e-6)


def test_print_op_attributes_round_trip_and_run(capsys):
    text = ("func @f(%x: f32[2], %n: f64) -> f32[2] {\n"
            '  print %x, %x, %n, %x {fmt="{} {!r} {:.3f} {}", scalars=[2], arrays=[1], '
            "grads=[0]}\n"
            "  return %x\n}\n")
    module = parse(text)
    verify(module)
    assert str(module) == text
    run(module, np.array([1.0, 2.5], np.float32), np.array(math.pi))
    x_text = "Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient={},\n" \
             "       [1.        , 2.50000000])"
    assert capsys.readouterr().out == \
        f"{x_text.format(False)} array([1. , 2.5], dtype=float32) 3.142 " \
        f"{x_text.format(True)}\n"


class LoopPrinter(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(2, 2)

    def forward(self, x, n):
        h, s = x, x
        for _ in range(n):
            h = self.fc(h)
            s = s * 2
            print(h, s)
        print(h, s)
        return h


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_of_loop_values_says_which_require_a_gradient(capsys, backend):
    """A loop's float values are taken to require a gradient while it is traced;
    printed, only those that depend on a parameter say so, as eagerly."""
    paddle.seed(3)
    model = LoopPrinter()
    x, n = paddle.to_tensor([[1.0, 2.0]]), paddle.to_tensor(2)
    model(x, n)
    eager = capsys.readouterr().out
    assert eager.count("stop_gradient=False") == 3 and eager.count("stop_gradient=True") == 3
    paddle.compile(model, backend=backend)(x, n)
    assert capsys.readouterr().out == eager


def checked_peak(x):
    assert x.max() < 4, f"max {x.max()} of {x.numpy()}, first {x[0].item() * 0.1}"
    return x * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_assert_message_shows_values_of_the_run(backend):
    compiled = paddle.compile(checked_peak, backend=backend)
    x = paddle.to_tensor([1.0, 2.0])
    np.testing.assert_array_equal(compiled(x).numpy(), [2.0, 4.0])
    big = paddle.to_tensor([3.0, 5.0])
    with pytest.raises(AssertionError) as eager:
        checked_peak(big)
    with pytest.raises(AssertionError) as run_time:
        compiled(big)
    want = "max 5.0 of [3. 5.], first 0.30000000000000004"
    assert str(eager.value).startswith(want)  # (pytest adds its explanation)
    assert str(run_time.value).endswith(": " + want)


def test_assert_message_operands_round_trip():
    text = ("func @f(%p: bool, %x: f32[2], %n: f64) -> f32[2] {\n"
            '  assert %p, %x, %n {msg="at {}: {:.2f}", arrays=[0], scalars=[1]}\n'
            "  return %x\n}\n")
    module = parse(text)
    verify(module)
    assert str(module) == text
    x = np.array([1.0, 2.5], np.float32)
    run(module, np.array(True), x, np.array(math.pi))
    with pytest.raises(AssertionError, match=r"^at \[1.  2.5\]: 3.14$"):
        run(module, np.array(False), x, np.array(math.pi))


def numbers_to_tensors(x, k):
    v = x[0].item() * 0.1
    return (paddle.to_tensor(v), paddle.to_tensor([v, 1.0]), paddle.to_tensor(int(k[0])),
            paddle.to_tensor((x > 0).any().item()), paddle.full([2], (x > 0).all().item()),
            paddle.to_tensor(x.tolist()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensors_made_of_numbers_from_tensors_have_eager_dtypes(backend):
    x = paddle.to_tensor([1.0, -2.0])
    k = paddle.to_tensor([7], dtype="int32")
    compiled = paddle.compile(numbers_to_tensors, backend=backend)(x, k)
    for got, want in zip(compiled, numbers_to_tensors(x, k), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())

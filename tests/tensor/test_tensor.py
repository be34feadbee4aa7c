"""The eager Tensor object: what it reports (shape, dtype, stop_gradient), getting its
values out (numpy, item, __array__, Python conversions), astype, NumPy interplay and
repr, with Paddle's behaviour (checked against PaddlePaddle 3.3) where they differ
from NumPy's."""
import re

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import IrflowError


def test_properties():
    x = paddle.to_tensor(np.zeros((2, 3, 4), np.float32))
    assert x.shape == [2, 3, 4] and isinstance(x.shape, list)
    assert x.ndim == 3 and x.dim() == 3 and x.size == 24 and x.numel().item() == 24
    assert x.numel().dtype == paddle.int64 and x.numel().shape == []
    assert x.dtype == paddle.float32 and x.dtype == "float32" and str(x.dtype) == "paddle.float32"
    assert x.dtype != paddle.float64
    assert x.place == "Place(cpu)"
    assert len(x) == 2
    scalar = paddle.to_tensor(2.0)
    assert scalar.shape == [] and scalar.ndim == 0 and scalar.size == 1


def test_numpy_returns_a_copy():
    x = paddle.to_tensor([1.0, 2.0])
    a = x.numpy()
    a[0] = 5.0
    assert x.numpy().tolist() == [1.0, 2.0]
    assert isinstance(a, np.ndarray) and a.dtype == np.float32


def test_item_and_python_conversions():
    assert paddle.to_tensor([[3]]).item() == 3 and type(paddle.to_tensor([[3]]).item()) is int
    assert type(paddle.to_tensor(2.5).item()) is float
    assert paddle.to_tensor(True).item() is True
    assert paddle.to_tensor([[1, 2], [3, 4]]).item(1, 0) == 3
    assert float(paddle.to_tensor(2.5)) == 2.5 and int(paddle.to_tensor(2.9)) == 2
    assert bool(paddle.to_tensor(1.0)) and not bool(paddle.to_tensor([0]))
    assert [1, 2, 3][paddle.to_tensor(1)] == 2          # an int tensor is an index
    with pytest.raises(TypeError):
        [1, 2][paddle.to_tensor(1.0)]
    with pytest.raises((IrflowError, ValueError)):
        paddle.to_tensor([1.0, 2.0]).item()
    with pytest.raises((IrflowError, ValueError)):
        bool(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(TypeError):
        len(paddle.to_tensor(1.0))


def test_iteration_and_tolist():
    x = paddle.to_tensor([[1, 2], [3, 4]])
    rows = list(x)
    assert len(rows) == 2 and all(r.shape == [2] for r in rows)
    assert rows[1].numpy().tolist() == [3, 4]
    assert x.tolist() == [[1, 2], [3, 4]]


def test_array_protocol():
    x = paddle.to_tensor([[1.0, 2.0]])
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.array(x), [[1.0, 2.0]])


def test_numpy_operands_give_tensors():
    """As in Paddle, NumPy defers to the Tensor: ndarray (op) tensor is a Tensor with
    the array converted as to_tensor would (float64 here), and ufuncs refuse tensors."""
    x = paddle.to_tensor([1.0, 2.0])
    a = np.array([3.0, 5.0])
    for result, expected in [(a + x, [4.0, 7.0]), (a - x, [2.0, 3.0]), (a * x, [3.0, 10.0]),
                             (a / x, [3.0, 2.5]), (a ** x, [3.0, 25.0])]:
        assert isinstance(result, paddle.Tensor) and result.dtype == paddle.float64
        np.testing.assert_allclose(result.numpy(), expected)
    assert isinstance(a > x, paddle.Tensor) and (a > x).numpy().tolist() == [True, True]
    scaled = np.float32(2) * x
    assert isinstance(scaled, paddle.Tensor) and scaled.dtype == paddle.float32
    with pytest.raises(TypeError):
        np.exp(x)


@pytest.mark.parametrize("src, dst", [
    ("float32", "int32"), ("float32", "float64"), ("float64", "int64"), ("int64", "float32"),
    ("int32", "bool"), ("float32", "bool"), ("bool", "float32"), ("int64", "int32"),
])
def test_astype_matches_numpy(src, dst):
    values = np.array([-2.7, -1.0, 0.0, 0.5, 3.9]).astype(src)
    x = paddle.to_tensor(values)
    for y in (x.astype(dst), paddle.cast(x, dst)):
        assert y.dtype == dst
        np.testing.assert_array_equal(y.numpy(), values.astype(dst))


def test_astype_accepts_dtype_objects_and_keeps_same_dtype():
    x = paddle.to_tensor([1.5])
    assert x.astype(paddle.float64).dtype == paddle.float64
    assert x.astype(paddle.float32).numpy().tolist() == [1.5]


_HEADER = re.compile(r"^Tensor\(shape=\[(.*)\], dtype=(\w+), place=Place\(cpu\), "
                     r"stop_gradient=(True|False),\n       ")


def _body_values(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[+-]?\d+)?|nan|inf", text)]


@pytest.mark.parametrize("data, dtype", [
    ([1.0, 2.5, -3.0], "float32"), (3.0, "float32"), (3, "int64"), ([True, False], "bool"),
    ([[1.123456789, 2.0], [3.0, 4.0]], "float64"), (np.arange(24).reshape(2, 3, 4), "int64"),
])
def test_repr_has_paddles_header_and_the_values(data, dtype):
    x = paddle.to_tensor(data, dtype=dtype)
    text = repr(x)
    header = _HEADER.match(text)
    assert header, text
    assert header.group(1) == ", ".join(str(d) for d in x.shape)
    assert header.group(2) == dtype and header.group(3) == "True"
    assert text.endswith(")") and str(x) == text
    body = text[header.end():-1]
    if dtype == "bool":
        assert body == "[True , False]", body                 # Paddle pads to the widest
    else:
        expected = np.asarray(data, dtype=np.float64).ravel()
        np.testing.assert_allclose(_body_values(body), expected, rtol=1e-8)


def test_repr_of_a_tensor_requiring_grad_and_of_a_big_one():
    y = paddle.to_tensor([1.0], stop_gradient=False) * 2
    assert "stop_gradient=False" in repr(y)
    big = repr(paddle.to_tensor(np.arange(2000.0, dtype=np.float32).reshape(2, 1000)))
    assert "..." in big and big.count("\n") < 10          # summarised, as Paddle does


def test_repr_prints_integral_floats_without_exponent():
    big = repr(paddle.to_tensor(np.arange(2000.0, dtype=np.float32).reshape(2, 1000)))
    assert "e+" not in big and "1999." in big


def test_shape_is_a_paddle_size():
    """Paddle 3's Tensor.shape is a paddle.Size: a list that prints as
    paddle.Size([2, 3]) (so print(x.shape) reads as in Paddle), equals lists and
    tuples, and stays a Size when sliced, added to or repeated."""
    s = paddle.ones([2, 3]).shape
    assert isinstance(s, paddle.Size) and isinstance(s, list)
    assert str(s) == repr(s) == f"{s}" == "paddle.Size([2, 3])"
    assert str([s]) == "[paddle.Size([2, 3])]"
    assert str(paddle.to_tensor(1.0).shape) == "paddle.Size([])"
    assert s == [2, 3] and s == (2, 3) and s != (3, 2) and not (s != [2, 3])
    assert repr(s[1:]) == "paddle.Size([3])" and s[0] == 2 and type(s[-1]) is int
    assert repr(s + [4]) == "paddle.Size([2, 3, 4])" and repr([4] + s) == "paddle.Size([4, 2, 3])"
    assert repr(s * 2) == "paddle.Size([2, 3, 2, 3])" and s.numel() == 6
    assert np.zeros(s).shape == (2, 3) and list(s) == [2, 3] and tuple(s) == (2, 3)


def test_repr_is_paddles_text_character_for_character():
    """Paddle 3.3's to_string: 8 decimals, integral floats as "3.", items padded to the
    widest (a space kept for the sign when any is negative), 1000+ elements summarised
    to 3 per edge, long rows wrapped at 80 columns."""
    head = "Tensor(shape={}, dtype={}, place=Place(cpu), stop_gradient=True,\n       "
    x = paddle.to_tensor(np.array([[1.5, -2.25, 3.0], [0.125, 4.0, -1.0]], np.float32))
    assert repr(x) == head.format([2, 3], "float32") + (
        "[[ 1.50000000, -2.25000000,  3.        ],\n"
        "        [ 0.12500000,  4.        , -1.        ]])")
    assert repr(paddle.to_tensor(3.5)) == head.format([], "float32") + "3.50000000)"
    assert repr(paddle.to_tensor(np.array([1e-8, 1e6], np.float32))) == \
        head.format([2], "float32") + "[0.00000001, 1000000.  ])"
    assert repr(paddle.to_tensor(np.array([np.nan, np.inf, 1.0], np.float32))) == \
        head.format([3], "float32") + "[nan , inf., 1.  ])"
    assert repr(paddle.to_tensor([[1, -2], [30, 4]])) == head.format([2, 2], "int64") + (
        "[[ 1, -2],\n        [30,  4]])")
    big = repr(paddle.to_tensor(np.arange(2000.0, dtype=np.float32).reshape(2, 1000)))
    assert big.endswith("[[0.   , 1.   , 2.   , ..., 997. , 998. , 999. ],\n"
                        "        [1000., 1001., 1002., ..., 1997., 1998., 1999.]])")
    row = repr(paddle.to_tensor(np.arange(30))).splitlines()    # 4 columns an item: 18 a line
    assert row[1:] == ["       [" + ", ".join(f"{i:<2}" for i in range(18)) + ",",
                       "        " + ", ".join(str(i) for i in range(18, 30)) + "])"]


def test_errors_paddle_raises_where_a_value_was_returned():
    """Each returned something before (a promoted concat, all-max clip, a NaN tensor,
    int() of a one-element vector, nonzero of a scalar); Paddle 3.3.1 raises the same
    kinds of exception."""
    with pytest.raises(ValueError, match="float32, float64"):
        paddle.concat([paddle.ones([2], "float32"), paddle.ones([2], "float64")])
    with pytest.raises(ValueError, match="must share one"):
        paddle.stack([paddle.ones([2], "int32"), paddle.ones([2], "int64")])
    with pytest.raises(ValueError, match="min 2 is greater than max 1"):
        paddle.clip(paddle.to_tensor([0.0, 5.0]), 2, 1)
    with pytest.raises(ValueError, match="greater than max"):
        paddle.clip(paddle.to_tensor([0.0, 5.0]), paddle.to_tensor(2.0), paddle.to_tensor(1.0))
    assert paddle.clip(paddle.to_tensor([0.0, 5.0]), 2, 2).numpy().tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="to_tensor"):
        paddle.to_tensor(None)
    with pytest.raises(TypeError, match="needs a 0-d tensor"):
        int(paddle.to_tensor([3.7]))
    with pytest.raises(TypeError, match="needs a 0-d tensor"):
        float(paddle.to_tensor([3.5]))
    assert int(paddle.to_tensor(3.7)) == 3 and paddle.to_tensor([3]).item() == 3
    with pytest.raises(ValueError, match="at least one dim"):
        paddle.nonzero(paddle.to_tensor(3.0))


def test_set_value_of_an_intermediate_keeps_its_graph_at_the_new_value():
    """As Paddle's: gradients flow through the tensor to what made it, and ops that
    read it later are differentiated at the value they read (not the old one)."""
    def grad_of_x(change):
        x = paddle.to_tensor(np.array([1.0, 2.0]), stop_gradient=False)
        h = x * 2
        h = change(h)
        (h * h * x).sum().backward()
        return h, x.grad.numpy()

    new = np.array([5.0, 6.0])

    def set_value(h):
        h.set_value(paddle.to_tensor(new))
        return h

    h, got = grad_of_x(set_value)
    assert not h.stop_gradient and not h.is_leaf
    np.testing.assert_array_equal(h.numpy(), new)
    _, expected = grad_of_x(lambda h: h + paddle.to_tensor(new - h.numpy()))
    np.testing.assert_allclose(got, expected)
    _, assigned = grad_of_x(lambda h: paddle.assign(new, output=h))
    np.testing.assert_allclose(assigned, expected)


def test_assign_to_an_output_connects_it_to_a_tensor_requiring_a_gradient():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    out = paddle.zeros([2])
    assert paddle.assign(x * 3, output=out) is out
    assert not out.stop_gradient
    (out * out).sum().backward()
    x2 = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    ((x2 * 3) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())
    with pytest.raises(IrflowError, match="shape"):
        paddle.assign(x * 3, output=paddle.zeros([3]))


def test_gradient_is_the_grad_as_an_array():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    assert x.gradient() is None
    (x * x).sum().backward()
    assert isinstance(x.gradient(), np.ndarray)
    np.testing.assert_array_equal(x.gradient(), x.grad.numpy())

"""The Tensor object's Python protocol as Paddle 3's: formatting, ``==`` against
non-numbers, ``size`` as a callable int, unary ``+`` and ``item()``'s error type."""
import numpy as np
import pytest

import irflow as paddle


def test_a_0d_tensor_formats_as_its_number_with_or_without_a_spec():
    """Paddle's __format__ is ``item().__format__(spec)`` for 0-d tensors, so an
    f-string shows the Python number (float32 3.5 is exactly 3.5)."""
    loss = paddle.to_tensor(3.5)
    assert f"{loss}" == "3.5" and f"loss={loss:.2f}" == "loss=3.50"
    assert f"{paddle.to_tensor(7)}|{paddle.to_tensor(7):>3}" == "7|  7"
    assert f"{paddle.to_tensor(True)}" == "True"
    assert f"{paddle.to_tensor(1.5, dtype='bfloat16')}" == "1.5"  # its value, not its bits


def test_a_tensor_of_rank_one_or_more_formats_as_its_text_and_refuses_a_spec():
    """Only 0-d tensors are numbers: ``f"{t:.2f}"`` of shape [1] is a TypeError in
    Paddle (object.__format__), where it used to format the one element."""
    t = paddle.to_tensor([3.5])
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match="0-d"):
        f"{t:.2f}"


def test_a_format_spec_on_a_traced_tensor_of_rank_one_is_refused_as_eagerly():
    @paddle.jit.to_static
    def f(x):
        print(f"{x[:1]:.2f}")
        return x + 1

    with pytest.raises(TypeError, match="0-d"):
        f(paddle.to_tensor([1.5, 2.0]))


@pytest.mark.parametrize("other", [None, [1.0, 3.0], (1.0, 3.0), "a", object()],
                         ids=["None", "list", "tuple", "str", "object"])
def test_equality_with_a_non_number_is_a_python_bool(other):
    """Against anything but tensors, numbers and arrays, ``==`` is Python's identity
    comparison (False) and ``!=`` True, on either side, as in Paddle."""
    t = paddle.to_tensor([1.0, 2.0])
    assert (t == other) is False and (other == t) is False
    assert (t != other) is True and (other != t) is True


def test_membership_in_a_list_holding_none_finds_the_tensor():
    """``in`` compares with ``==`` item by item: against None a bool, so the search
    goes on (it used to make an elementwise tensor that has no truth value), while
    numbers and arrays still compare elementwise."""
    t = paddle.to_tensor([1.0, 2.0])
    assert t in [None, t]
    assert t not in [None, "x"]
    for other in [1.0, np.float64(1.0), np.array([1.0, 3.0]), paddle.to_tensor([1.0, 3.0])]:
        assert (t == other).numpy().tolist() == [True, False]
        assert (t != other).numpy().tolist() == [False, True]


def test_size_is_an_int_that_called_gives_the_shape():
    """Paddle 3's TensorSize: ``x.size`` counts elements, ``x.size()`` is the shape
    and ``x.size(d)`` one size, for code written against PyTorch."""
    x = paddle.zeros([2, 3])
    assert x.size == 6 and isinstance(x.size, int) and x.size + 1 == 7
    assert x.size() == [2, 3] and isinstance(x.size(), paddle.Size)
    assert x.size(1) == 3 and x.size(-2) == 2
    assert paddle.to_tensor(1.0).size == 1 and paddle.to_tensor(1.0).size() == []


def test_size_read_in_compiled_code_is_callable_too():
    @paddle.jit.to_static
    def f(x):
        return x * x.size + x.size(1)

    out = f(paddle.ones([2, 3]))
    np.testing.assert_array_equal(out.numpy(), np.full([2, 3], 6.0 + 3.0))


def test_unary_plus_is_the_tensor_and_refuses_bool():
    """Paddle's __pos__ is paddle.positive: the tensor itself; a bool tensor raises."""
    t = paddle.to_tensor([-1.0, 2.0])
    assert (+t) is t
    with pytest.raises(TypeError):
        +paddle.to_tensor([True])


def test_item_of_many_elements_is_a_value_error():
    """Paddle raises ValueError; code catching it must see one here too."""
    with pytest.raises(ValueError, match="one element"):
        paddle.to_tensor([1.0, 2.0]).item()

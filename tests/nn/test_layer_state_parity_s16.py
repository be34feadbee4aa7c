"""nn.Layer state management side by side with Paddle 3.3.1 (each behaviour below was
checked there): `set_state_dict` refuses a value of another dtype (it cast float64 into
a float32 parameter) or kind (a list), `state_dict` takes Paddle's ``use_hook`` and
``keep_vars`` and PyTorch's ``prefix`` form, `add_parameter` refuses a name that is
already an attribute, `float`/`double`/`half`/`float16`/`bfloat16` exist, ``to`` refuses
what is no device (``to("float64")`` left the layer as it was), and a deep copy's
parameters are new ones, renamed, without gradients."""
import copy
import warnings

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ArgumentError, DTypeError

nn = paddle.nn


class _Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.register_buffer("scale", paddle.ones([3]))
        self.register_buffer("index", paddle.to_tensor([0, 1], dtype="int64"))
        self.register_buffer("scratch", paddle.zeros([2]), persistable=False)


def _load(model, state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.set_state_dict(state)


# -- set_state_dict

@pytest.mark.parametrize("value", [np.array([1.0, 2.0, 3.0]),
                                   paddle.to_tensor([1.0, 2.0, 3.0], dtype="float64"),
                                   np.array([1, 2, 3]),
                                   paddle.to_tensor([1.0, 2.0, 3.0], dtype="float16")],
                         ids=["float64_array", "float64_tensor", "int_array", "float16_tensor"])
def test_set_state_dict_refuses_another_dtype_before_loading_anything(value):
    """Paddle 3.3.1 raises "Variable dtype not match" rather than cast."""
    m = _Model()
    weight, bias = m.fc.weight.numpy(), m.fc.bias.numpy()
    state = {"fc.weight": np.ones([2, 3], np.float32), "fc.bias": value}
    with pytest.raises(DTypeError, match="fc.bias"):
        _load(m, state)
    np.testing.assert_array_equal(m.fc.weight.numpy(), weight)
    np.testing.assert_array_equal(m.fc.bias.numpy(), bias)


def test_set_state_dict_refuses_a_list():
    with pytest.raises(ArgumentError, match="fc.bias"):
        _load(_Model(), {"fc.bias": [1.0, 2.0, 3.0]})


def test_set_state_dict_loads_arrays_and_tensors_of_the_dtype():
    m = _Model()
    missing, unexpected = _load(m, {"fc.bias": np.array([1.0, 2.0, 3.0], np.float32),
                                    "scale": paddle.full([3], 4.0),
                                    "index": np.array([5, 6]), "other": np.ones(1)})
    np.testing.assert_array_equal(m.fc.bias.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(m.scale.numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(m.index.numpy(), [5, 6])
    assert missing == ["fc.weight"] and unexpected == ["other"]


def test_set_state_dict_skips_a_shape_mismatch_listing_it_both_ways():
    """Paddle 3.3.1: the key is missing and unexpected, and a warning says why."""
    m = _Model()
    state = {key: value.numpy() for key, value in m.state_dict().items()}
    state["fc.bias"] = np.ones([1, 3], np.float32)
    with pytest.warns(UserWarning, match="fc.bias receives a shape"):
        missing, unexpected = m.set_state_dict(state)
    assert missing == ["fc.bias"] and unexpected == ["fc.bias"]


# -- state_dict

def test_state_dict_keep_vars_false_gives_detached_tensors_sharing_storage():
    m = _Model()
    state = m.state_dict(keep_vars=False, use_hook=False)
    assert list(state) == ["scale", "index", "fc.weight", "fc.bias"]
    assert state["fc.weight"] is not m.fc.weight and state["fc.weight"].stop_gradient
    m.fc.weight.set_value(np.full([2, 3], 7.0, np.float32))
    np.testing.assert_array_equal(state["fc.weight"].numpy(), np.full([2, 3], 7.0))
    assert m.state_dict(keep_vars=True)["fc.weight"] is m.fc.weight
    assert m.state_dict()["fc.weight"] is m.fc.weight


@pytest.mark.parametrize("call", [lambda m: m.state_dict(prefix="net."),
                                  lambda m: m.state_dict(None, "net.")],
                         ids=["keyword", "positional"])
def test_state_dict_in_pytorch_form(call):
    """Paddle 3.3.1 takes ``(destination, prefix, keep_vars=False)`` too."""
    m = _Model()
    state = call(m)
    assert list(state) == ["net.scale", "net.index", "net.fc.weight", "net.fc.bias"]
    assert state["net.fc.weight"] is not m.fc.weight
    assert m.state_dict(prefix="", keep_vars=True)["fc.weight"] is m.fc.weight


# -- add_parameter

@pytest.mark.parametrize("name", ["fc", "scale", "training", "forward"])
def test_add_parameter_refuses_a_name_already_taken(name):
    m = _Model()
    with pytest.raises(KeyError, match="already exists"):
        m.add_parameter(name, paddle.create_parameter([2], "float32"))
    assert name not in m._parameters


def test_add_parameter_checks_the_name_and_value():
    m = _Model()
    with pytest.raises(TypeError, match="should be a string"):
        m.add_parameter(3, paddle.create_parameter([2], "float32"))
    with pytest.raises(TypeError, match="requires Parameter"):
        m.add_parameter("w", paddle.ones([2]))
    p = paddle.create_parameter([2], "float32")
    assert m.add_parameter("w", p) is p and m.w is p
    assert m.register_parameter("v", None) is None and m._parameters["v"] is None


# -- dtypes

def _dtypes(m):
    return m.fc.weight.dtype, m.scale.dtype, m.index.dtype


@pytest.mark.parametrize("cast, want", [
    (lambda m: m.double(), paddle.float64),
    (lambda m: m.half(), paddle.float16),
    (lambda m: m.float16(), paddle.float16),
    (lambda m: m.bfloat16(), paddle.bfloat16),
    (lambda m: m.double().float(), paddle.float32),
], ids=["double", "half", "float16", "bfloat16", "float"])
def test_casting_a_layer_casts_its_floats_in_place(cast, want):
    """Integer buffers keep their dtype (Paddle's double and half cast them too,
    contrary to their documentation; its float and bfloat16 do not)."""
    m = _Model()
    weight = m.fc.weight
    assert cast(m) is m
    assert _dtypes(m) == (want, want, paddle.int64)
    assert m.fc.weight is weight and not weight.stop_gradient


def test_float_keeps_excluded_layers():
    m = _Model().double()
    m.float(excluded_layers=nn.Linear)
    assert _dtypes(m) == (paddle.float64, paddle.float32, paddle.int64)
    with pytest.raises(TypeError, match="excluded_layers"):
        m.float(excluded_layers=m.fc)


def test_float16_keeps_batch_norm_by_default():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm(2))
    net.float16()
    assert net[0].weight.dtype == paddle.float16
    assert net[1].weight.dtype == paddle.float32


def test_to_refuses_what_is_no_device():
    """Paddle 3.3.1: ``to("float64")`` is a ValueError (the device comes first)."""
    m = _Model()
    with pytest.raises(ValueError, match="float64"):
        m.to("float64")
    assert m.fc.weight.dtype == paddle.float32
    assert m.to("cpu") is m and m.to("gpu:0") is m and m.to(paddle.CPUPlace()) is m
    assert _dtypes(m.to(dtype="float64")) == (paddle.float64, paddle.float64, paddle.int64)


# -- deepcopy

def test_a_deep_copy_has_new_parameters_renamed_without_gradients():
    """Paddle 3.3.1 names the copy of ``linear_0.w_0`` ``linear_0.w_0_deepcopy_N``."""
    m = _Model()
    m.shared = m.fc
    m.fc(paddle.ones([1, 2])).sum().backward()
    c = copy.deepcopy(m)
    assert c.fc.weight is not m.fc.weight and c.shared is c.fc
    assert c.fc.weight.name.startswith(m.fc.weight.name + "_deepcopy_")
    assert c.fc.weight.grad is None and m.fc.weight.grad is not None
    np.testing.assert_array_equal(c.fc.weight.numpy(), m.fc.weight.numpy())
    c.fc.weight.set_value(np.zeros([2, 3], np.float32))
    assert np.abs(m.fc.weight.numpy()).sum() > 0

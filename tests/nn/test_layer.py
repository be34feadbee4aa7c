"""nn.Layer mechanics: registration on assignment, traversal order, state_dict round
trips, train/eval, forward hooks, create_parameter/ParamAttr, buffers, containers
and Paddle's repr."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.nn import initializer as I
from irflow.nn.param_attr import ParamAttr


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.register_buffer("steps", paddle.to_tensor([0.0]))
        self.scale = self.create_parameter([4], default_initializer=I.Constant(2.0))
        self.norm = nn.BatchNorm1D(4)

    def forward(self, x):
        return self.norm(self.fc(x) * self.scale)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


def test_registration_order_of_parameters_and_state_dict():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "block.scale", "block.fc.weight", "block.fc.bias", "block.norm.weight",
        "block.norm.bias", "block.norm._mean", "block.norm._variance", "head.weight",
        "head.bias"]
    assert list(net.state_dict()) == [
        "block.scale", "block.steps", "block.fc.weight", "block.fc.bias", "block.norm.weight",
        "block.norm.bias", "block.norm._mean", "block.norm._variance", "head.weight",
        "head.bias"]
    assert isinstance(net.state_dict(), OrderedDict)
    assert net.state_dict()["head.weight"] is net.head.weight
    assert [n for n, _ in net.named_sublayers()] == ["block", "block.fc", "block.norm", "head"]
    assert [n for n, _ in net.named_sublayers(include_self=True)][0] == ""
    assert list(net.children()) == [net.block, net.head]
    assert [n for n, _ in net.named_children()] == ["block", "head"]
    assert net.sublayers() == [net.block, net.block.fc, net.block.norm, net.head]
    assert [n for n, _ in net.named_buffers()] == ["block.steps"]
    assert len(net.parameters(include_sublayers=False)) == 0


def test_parameters_are_trainable_and_persistable():
    net = Net()
    for name, p in net.named_parameters():
        assert isinstance(p, paddle.Parameter) and p.persistable
        running = name.endswith(("_mean", "_variance"))
        assert p.stop_gradient is running and p.trainable is not running


def test_trainable_false_freezes_a_parameter():
    """``p.trainable = False`` is ``p.stop_gradient = True``, both ways, as in Paddle:
    the optimizer leaves the weight alone (it trained on before)."""
    model = nn.Linear(3, 2)
    model.weight.set_value(np.ones((3, 2), "float32"))
    model.weight.trainable = False
    assert model.weight.stop_gradient
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    (model(paddle.ones([4, 3])) ** 2).sum().backward()
    opt.step()
    np.testing.assert_array_equal(model.weight.numpy(), np.ones((3, 2), "float32"))
    assert not np.array_equal(model.bias.numpy(), np.zeros(2, "float32"))
    model.bias.stop_gradient = True
    assert not model.bias.trainable
    model.weight.trainable = True
    assert not model.weight.stop_gradient


def test_shared_layers_and_parameters_are_listed_once():
    class Shared(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = self.a
            self.w = self.a.weight

    m = Shared()
    assert [n for n, _ in m.named_parameters()] == ["w", "a.bias"]
    assert m.sublayers() == [m.a]
    assert list(m.state_dict()) == ["w", "a.weight", "a.bias", "b.weight", "b.bias"]


def test_reassignment_moves_between_registries_and_none_clears():
    m = nn.Linear(2, 3)
    m.extra = paddle.ones([1])
    assert "extra" in m._buffers
    m.extra = nn.ReLU()
    assert "extra" not in m._buffers and "extra" in m._sub_layers
    with pytest.raises(TypeError, match="sublayer 'extra' should be of type Layer"):
        m.extra = paddle.ones([1])
    m.bias = None
    assert m.bias is None and list(m.state_dict()) == ["weight"]
    with pytest.raises(TypeError, match="parameter 'weight'"):
        m.weight = 3
    m.plain = 5
    assert m.plain == 5 and "plain" in m.__dict__
    del m.extra
    assert "extra" not in m._sub_layers
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        m.nothing


def test_assigning_before_super_init_is_an_error():
    class Early(nn.Layer):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
            super().__init__()

    with pytest.raises(ValueError, match="super"):
        Early()


def test_unregistered_local_layers_are_not_parameters():
    class Bad(nn.Layer):
        def __init__(self):
            super().__init__()
            nn.Linear(4, 3)

    assert Bad().parameters() == []


def test_buffers_persistable_flag_and_tensor_attributes():
    m = nn.Layer()
    m.register_buffer("kept", paddle.ones([2]))
    m.register_buffer("scratch", paddle.zeros([2]), persistable=False)
    m.implicit = paddle.ones([3])
    assert list(m.state_dict()) == ["kept"]
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch", "implicit"]
    assert m.kept.persistable and not m.scratch.persistable
    assert list(m.state_dict(include_non_persistable_buffer=True)) == ["kept", "scratch",
                                                                        "implicit"]
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("register_buffer", paddle.ones([1]))
    with pytest.raises(KeyError):
        m.register_buffer("a.b", paddle.ones([1]))
    with pytest.raises(TypeError, match="Tensor"):
        m.register_buffer("arr", np.ones(2))


def test_state_dict_round_trip_and_mismatches():
    src, dst = Net(), Net()
    x = paddle.randn([5, 3])
    src.train()
    src(x)  # moves the running statistics away from their initial values
    missing, unexpected = dst.set_state_dict(src.state_dict())
    assert missing == [] and unexpected == []
    src.eval()
    dst.eval()
    np.testing.assert_allclose(dst(x).numpy(), src(x).numpy())
    state = {k: v.numpy() for k, v in src.state_dict().items()}
    state["head.bias"] = np.zeros(7, np.float32)
    del state["head.weight"]
    state["stray"] = np.ones(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        missing, unexpected = dst.load_dict(state)
    assert missing == ["head.weight", "head.bias"] and unexpected == ["head.bias", "stray"]
    assert len(caught) == 2 and "head.weight" in str(caught[0].message)
    assert dst.set_dict == dst.set_state_dict


def test_set_state_dict_by_parameter_names():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    state = {b.weight.name: a.weight.numpy(), b.bias.name: a.bias.numpy()}
    assert b.set_state_dict(state, use_structured_name=False) == ([], [])
    np.testing.assert_array_equal(b.weight.numpy(), a.weight.numpy())


def test_set_state_dict_keeps_the_parameter_objects():
    m = nn.Linear(2, 2)
    weight = m.weight
    m.set_state_dict({"weight": np.ones((2, 2), np.float32), "bias": paddle.zeros([2])})
    assert m.weight is weight and m.weight.dtype == paddle.float32
    np.testing.assert_array_equal(m.weight.numpy(), 1.0)


def test_train_and_eval_reach_every_sublayer():
    net = Net()
    assert net.training and net.block.norm.training
    assert net.eval() is net
    assert not any(layer.training for layer in net.sublayers(include_self=True))
    net.train()
    assert all(layer.training for layer in net.sublayers(include_self=True))
    with pytest.raises(ValueError, match="boolean"):
        net.train(1)


def test_forward_hooks_modify_inputs_and_outputs_and_are_removable():
    m = nn.Linear(2, 2, bias_attr=False)
    m.weight.set_value(np.eye(2, dtype=np.float32))
    calls = []
    pre = m.register_forward_pre_hook(lambda layer, inputs: inputs[0] * 2)
    post = m.register_forward_post_hook(lambda layer, inputs, out: out + 1)
    m.register_forward_post_hook(lambda layer, inputs, out: calls.append(out.numpy()))
    x = paddle.to_tensor([[1.0, 2.0]])
    np.testing.assert_allclose(m(x).numpy(), [[3.0, 5.0]])
    np.testing.assert_allclose(calls[-1], [[3.0, 5.0]])
    pre.remove()
    np.testing.assert_allclose(m(x).numpy(), [[2.0, 3.0]])
    post.remove()
    post.remove()
    np.testing.assert_allclose(m(x).numpy(), [[1.0, 2.0]])
    first = m.register_forward_post_hook(lambda layer, inputs, out: out * 10, prepend=True)
    m(x)
    np.testing.assert_allclose(calls[-1], [[10.0, 20.0]])
    first.remove()
    m(x)
    np.testing.assert_allclose(calls[-1], [[1.0, 2.0]])


def test_pre_hook_returning_a_tuple_replaces_all_inputs():
    class Add(nn.Layer):
        def forward(self, a, b):
            return a + b

    m = Add()
    m.register_forward_pre_hook(lambda layer, inputs: (inputs[1], inputs[1]))
    out = m(paddle.to_tensor([1.0]), paddle.to_tensor([5.0]))
    assert out.item() == 10.0


def test_create_parameter_with_param_attr():
    m = nn.Linear(3, 2, weight_attr=ParamAttr(name="my_w", initializer=I.Constant(0.5),
                                              trainable=False, learning_rate=0.1),
                  bias_attr=False)
    assert m.weight.name == "my_w" and m.weight.stop_gradient and not m.weight.trainable
    assert m.weight.optimize_attr == {"learning_rate": 0.1}
    np.testing.assert_array_equal(m.weight.numpy(), 0.5)
    assert m.bias is None and list(m.state_dict()) == ["weight"]
    m = nn.Linear(3, 2, weight_attr=I.Constant(1.5), bias_attr="named_bias")
    np.testing.assert_array_equal(m.weight.numpy(), 1.5)
    assert m.bias.name == "named_bias"
    with pytest.raises(TypeError, match="ParamAttr"):
        nn.Linear(3, 2, weight_attr=3.0)


def test_layer_and_parameter_names_are_unique_as_in_paddle():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    ka, kb = int(a.full_name().split("_")[-1]), int(b.full_name().split("_")[-1])
    assert a.full_name().startswith("linear_") and kb == ka + 1
    assert a.weight.name == f"{a.full_name()}.w_0" and a.bias.name == f"{a.full_name()}.b_0"
    bn = nn.BatchNorm2D(2)
    assert bn.full_name().startswith("batch_norm2d_")
    assert [p.name.split(".")[1] for p in bn.parameters()] == ["w_0", "b_0", "w_1", "w_2"]
    assert nn.ReLU().full_name().startswith("re_lu_")


def test_add_sublayer_add_parameter_and_apply():
    m = nn.Layer()
    fc = m.add_sublayer("fc", nn.Linear(2, 2))
    assert m.fc is fc
    p = paddle.Parameter(np.zeros(3, np.float32))
    assert m.add_parameter("extra", p) is p and m.extra is p
    with pytest.raises(TypeError, match="Parameter"):
        m.add_parameter("bad", paddle.ones([1]))
    visited = []
    m.apply(lambda layer: visited.append(type(layer).__name__))
    assert visited == ["Linear", "Layer"]


def test_clear_gradients_and_to_dtype():
    m = nn.Linear(2, 2)
    paddle.sum(m(paddle.ones([1, 2]))).backward()
    m.clear_gradients()
    np.testing.assert_array_equal(m.weight.grad.numpy(), 0.0)
    m.to(dtype="float64")
    assert m.weight.dtype == paddle.float64 and m(paddle.ones([1, 2], "float64")).dtype == \
        paddle.float64


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Layer()(paddle.ones([1]))


# ---------------------------------------------------------------- containers

def test_sequential_indexing_and_names():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert seq(paddle.ones([4, 2])).shape == [4, 1]
    named = nn.Sequential(("a", nn.Linear(2, 3)), ("b", nn.ReLU()))
    assert list(named.state_dict()) == ["a.weight", "a.bias"] and named["b"] is named[1]
    od = nn.Sequential(OrderedDict([("x", nn.ReLU()), ("y", nn.Tanh())]))
    assert [n for n, _ in od.named_children()] == ["x", "y"]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[1]
    assert len(seq) == 2
    with pytest.raises(IndexError):
        seq[5]


def test_layer_list():
    layers = nn.LayerList([nn.Linear(2, 2)])
    layers.append(nn.ReLU())
    layers.insert(0, nn.Tanh())
    layers.extend([nn.Sigmoid()])
    assert [type(m).__name__ for m in layers] == ["Tanh", "Linear", "ReLU", "Sigmoid"]
    assert list(layers.state_dict()) == ["1.weight", "1.bias"]
    del layers[0]
    assert list(layers.state_dict()) == ["0.weight", "0.bias"] and len(layers) == 3
    assert isinstance(layers[-1], nn.Sigmoid) and len(layers[:2]) == 2
    layers[0] = nn.Linear(2, 5)
    assert layers[0].weight.shape == [2, 5]


def test_layer_dict():
    d = nn.LayerDict({"fc": nn.Linear(2, 2), "act": nn.ReLU()})
    d["out"] = nn.Linear(2, 1)
    assert list(d.keys()) == ["fc", "act", "out"] and "act" in d and len(d) == 3
    assert list(d.state_dict()) == ["fc.weight", "fc.bias", "out.weight", "out.bias"]
    assert isinstance(d.pop("act"), nn.ReLU) and list(d) == ["fc", "out"]
    d.update([("act2", nn.Tanh())])
    assert [type(v).__name__ for v in d.values()] == ["Linear", "Linear", "Tanh"]
    d.clear()
    assert len(d) == 0


# ---------------------------------------------------------------- repr (Paddle's text)

def test_repr_matches_paddle():
    class MLP(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 512)
            self.body = nn.Sequential(nn.ReLU(), nn.Dropout(0.5))

    assert repr(MLP()) == (
        "MLP(\n"
        "  (fc1): Linear(in_features=784, out_features=512, dtype=float32)\n"
        "  (body): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Dropout(p=0.5, axis=None, mode=upscale_in_train, inplace=False)\n"
        "  )\n"
        ")")
    expected = {
        nn.Conv2D(3, 8, 3, padding=1): "Conv2D(3, 8, kernel_size=[3, 3], padding=1, "
                                       "data_format=NCHW)",
        nn.Conv2D(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias_attr=False):
            "Conv2D(3, 8, kernel_size=[3, 5], stride=[2, 2], padding=1, dilation=[2, 2], "
            "data_format=NCHW)",
        nn.BatchNorm2D(8): "BatchNorm2D(num_features=8, momentum=0.9, epsilon=1e-05)",
        nn.BatchNorm1D(4): "BatchNorm1D(num_features=4, momentum=0.9, epsilon=1e-05, "
                           "data_format=NCL)",
        nn.MaxPool2D(2): "MaxPool2D(kernel_size=2, stride=None, padding=0)",
        nn.AvgPool2D(3, 2, 1, exclusive=False): "AvgPool2D(kernel_size=3, stride=2, padding=1)",
        nn.AdaptiveAvgPool2D(1): "AdaptiveAvgPool2D(output_size=1)",
        nn.Flatten(): "Flatten()",
        nn.GELU(approximate=True): "GELU(approximate=True)",
        nn.LayerNorm([4, 5], epsilon=1e-6): "LayerNorm(normalized_shape=[4, 5], epsilon=1e-06)",
        nn.Softmax(axis=1): "Softmax(axis=1)",
        nn.LeakyReLU(0.1): "LeakyReLU(negative_slope=0.1)",
        nn.Embedding(10, 4, padding_idx=0): "Embedding(10, 4, padding_idx=0, sparse=False, "
                                            "scale_grad_by_freq=False)",
        nn.Identity(): "Identity()",
    }
    for layer, text in expected.items():
        assert repr(layer) == text
    assert repr(nn.LayerList([nn.Linear(2, 3)])) == (
        "LayerList(\n  (0): Linear(in_features=2, out_features=3, dtype=float32)\n)")

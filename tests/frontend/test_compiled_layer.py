"""``paddle.jit.to_static(layer)`` stands for the layer, as Paddle's returns the layer
itself: it is an instance of the layer's class, can replace a sublayer, and indexes,
iterates and prints as the layer does, while calls run the compiled programs."""
import numpy as np

import irflow as paddle
import irflow.nn as nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.enc(x))


def test_a_compiled_layer_is_an_instance_of_its_class():
    layer = nn.Linear(3, 2)
    static = paddle.jit.to_static(layer)
    assert isinstance(static, nn.Layer) and isinstance(static, nn.Linear)
    assert type(static) is not nn.Linear  # the compiled layer itself
    assert repr(static) == repr(layer) and static.weight is layer.weight


def test_a_compiled_sublayer_replaces_the_eager_one():
    net = Net()
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((3, 4)).astype("float32"))
    want = net(x).numpy()
    net.enc = paddle.jit.to_static(net.enc)
    np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-6, atol=1e-6)
    assert len(net.parameters()) == 6
    assert sorted(net.state_dict()) == sorted(Net().state_dict())
    net.eval()
    assert not net.enc.training and not net.enc[0].training
    whole = paddle.jit.to_static(net)  # the outer program traces the inner layer's code
    np.testing.assert_allclose(whole(x).numpy(), want, rtol=1e-6, atol=1e-6)


def test_a_compiled_container_indexes_iterates_and_has_a_length():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    static = paddle.jit.to_static(seq)
    assert static[0] is seq[0] and len(static) == 2 and bool(static)
    assert [type(layer).__name__ for layer in static] == ["Linear", "ReLU"]
    assert seq[1] in static
    assert not paddle.jit.to_static(nn.Sequential())  # empty, as the layer is


def test_a_deep_copy_is_a_compiled_copy_of_the_layer():
    """``copy.deepcopy`` of a compiled layer (an EMA model) copies the layer and
    compiles the copy: its parameters are its own."""
    import copy
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    static = paddle.jit.to_static(seq)
    x = paddle.ones([1, 2])
    want = static(x).numpy()
    twin = copy.deepcopy(static)
    assert isinstance(twin, nn.Sequential) and twin[0].weight is not seq[0].weight
    np.testing.assert_allclose(twin(x).numpy(), want)
    twin[0].weight.set_value(np.zeros((2, 2), np.float32))
    np.testing.assert_allclose(static(x).numpy(), want)  # the original is unchanged

"""DenseNet, GoogLeNet, InceptionV3 and ShuffleNetV2: Paddle's weights load only if
the state-dict names, shapes and order are Paddle's, so each constructor's are
checked against Paddle 3.3.1's (recorded as count, total size and a digest of the
"name:shape" list); the trainable sizes against the published architectures; the
numbers of their building blocks against NumPy."""
import functools
import hashlib
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.vision import models
from irflow.vision.models.densenet import DenseLayer
from irflow.vision.models.shufflenetv2 import channel_shuffle

# From Paddle 3.3.1: for paddle.vision.models.<name>(**kwargs).state_dict(), the
# number of entries, their total number of elements, and the first 16 hex digits of
# sha256(";".join(f"{key}:{'x'.join(map(str, shape))}")) in Paddle's order.
PADDLE_STATE = {
    ("densenet121", ()): (606, 8062504, "b9cd3ba6a66ae03b"),
    ("densenet161", ()): (806, 28900936, "4e76426b105c2eef"),
    ("densenet169", ()): (846, 14307880, "645d7a21db002645"),
    ("densenet201", ()): (1006, 20242984, "59a975c5e8b1278b"),
    ("densenet264", ()): (1326, 33736232, "07430ce11d29ec71"),
    ("googlenet", ()): (69, 11535736, "55c92bbc95b0679d"),
    ("inception_v3", ()): (472, 23869000, "e66a00ae3b772337"),
    ("shufflenet_v2_x0_25", ()): (282, 607712, "9e7be6bcb3d1b766"),
    ("shufflenet_v2_x0_33", ()): (282, 652264, "f0ad0a03702b1bac"),
    ("shufflenet_v2_x0_5", ()): (282, 1374744, "9e124d3bdf785624"),
    ("shufflenet_v2_x1_0", ()): (282, 2294784, "7938949251cd2c63"),
    ("shufflenet_v2_x1_5", ()): (282, 3527064, "40c12d6507807c87"),
    ("shufflenet_v2_x2_0", ()): (282, 7399952, "eeffc50f89f986cf"),
    ("shufflenet_v2_swish", ()): (282, 2294784, "7938949251cd2c63"),
    ("densenet121", (("num_classes", 10),)): (606, 7047754, "b830a0c1cd674579"),
    ("googlenet", (("num_classes", 0),)): (57, 5966272, "01ee61cb31b82013"),
    ("shufflenet_v2_x0_25", (("num_classes", 0), ("with_pool", False))):
        (280, 94712, "84917f14395bdeac"),
    ("inception_v3", (("num_classes", 7),)): (472, 21834343, "b37d551ed93a18b5"),
}


@functools.cache
def _model(name, kwargs):
    """One model of each constructor and arguments, shared by the tests (building
    the large ones takes seconds)."""
    return getattr(models, name)(**dict(kwargs))


@pytest.mark.parametrize("name, kwargs", sorted(PADDLE_STATE))
def test_state_dict_names_shapes_and_order_are_paddles(name, kwargs):
    state = _model(name, kwargs).state_dict()
    listing = ";".join(f"{key}:{'x'.join(map(str, value.shape))}"
                       for key, value in state.items())
    total = sum(math.prod(value.shape) for value in state.values())
    digest = hashlib.sha256(listing.encode()).hexdigest()[:16]
    assert (len(state), total, digest) == PADDLE_STATE[name, kwargs]


def test_a_few_state_dict_entries_spelled_out():
    # Paddle 3.3.1's names: DenseNet's legacy BatchNorm (with its fused ReLU) first
    # in each BNACConvLayer; InceptionV3's ConvNormActivation sublayers 0 and 1
    dense = _model("densenet121", ()).state_dict()
    assert list(dense)[5] == "db_conv_2.conv2_1.bn_ac_func1._batch_norm.weight"
    assert list(dense["tr_conv2_blk.conv_ac_func._conv.weight"].shape) == [128, 256, 1, 1]
    assert list(dense["out.weight"].shape) == [1024, 1000]
    goog = _model("googlenet", ()).state_dict()
    assert list(goog["_ince3a._conv5._conv.weight"].shape) == [32, 16, 5, 5]
    assert list(goog["_fc_o1.weight"].shape) == [1152, 1024]
    inception = _model("inception_v3", ()).state_dict()
    assert list(inception["inception_block_list.4.branch7x7_2.0.weight"].shape) == \
        [128, 128, 1, 7]
    shuffle = _model("shufflenet_v2_x1_0", ()).state_dict()
    assert list(shuffle["2_1._conv_dw_1.0.weight"].shape) == [24, 1, 3, 3]
    assert list(shuffle["4_4._conv_linear.1._variance"].shape) == [232]


# Trainable sizes of the published architectures (torchvision's documented counts;
# Paddle's ShuffleNetV2 x2.0 differs from torchvision's, so it is not here)
TRAINABLE = {"densenet121": 7_978_856, "densenet161": 28_681_000,
             "densenet169": 14_149_480, "densenet201": 20_013_928,
             "shufflenet_v2_x0_5": 1_366_792, "shufflenet_v2_x1_0": 2_278_604,
             "shufflenet_v2_x1_5": 3_503_624}


@pytest.mark.parametrize("name", sorted(TRAINABLE))
def test_trainable_size_is_the_architectures(name):
    model = _model(name, ())
    assert sum(math.prod(p.shape) for p in model.parameters() if not p.stop_gradient) == \
        TRAINABLE[name]


@pytest.mark.parametrize("make, size, shapes", [
    (lambda: models.densenet121(num_classes=7), 32, [[1, 7]]),
    (lambda: models.densenet121(with_pool=False, num_classes=0), 32, [[1, 1024, 1, 1]]),
    (lambda: models.googlenet(num_classes=0), 96, [[1, 1024, 1, 1], [1, 512, 1, 1],
                                                    [1, 528, 1, 1]]),
    (lambda: models.inception_v3(num_classes=3), 75, [[1, 3]]),
    (lambda: models.inception_v3(num_classes=0, with_pool=False), 75, [[1, 2048, 1, 1]]),
    (lambda: models.shufflenet_v2_x0_33(num_classes=5), 32, [[1, 5]]),
    (lambda: models.shufflenet_v2_swish(num_classes=0), 32, [[1, 1024, 1, 1]]),
])
def test_forward_output_shapes(make, size, shapes):
    model = make()
    model.eval()
    out = model(paddle.randn([1, 3, size, size]))
    out = out if isinstance(out, tuple) else (out,)
    assert [o.shape for o in out] == shapes


def test_googlenet_classifies_a_224_image_three_times():
    # the auxiliary classifiers' Linear layers take the 3x3 maps of a 224x224 input
    model = models.googlenet(num_classes=4)
    model.eval()
    assert [o.shape for o in model(paddle.randn([1, 3, 224, 224]))] == [[1, 4]] * 3


def test_channel_shuffle_interleaves_the_groups():
    x = np.arange(2 * 6 * 2 * 1, dtype=np.float32).reshape(2, 6, 2, 1)
    expected = x.reshape(2, 3, 2, 2, 1).transpose(0, 2, 1, 3, 4).reshape(2, 6, 2, 1)
    np.testing.assert_array_equal(channel_shuffle(paddle.to_tensor(x), 3).numpy(), expected)
    # groups (0, 2), (4, 6), (8, 10) of channel values interleave
    assert expected[0, :, 0, 0].tolist() == [0, 4, 8, 2, 6, 10]


def _bn_relu(x, state, prefix, eps=1e-5):
    scale = state[prefix + ".weight"] / np.sqrt(state[prefix + "._variance"] + eps)
    shift = state[prefix + ".bias"] - state[prefix + "._mean"] * scale
    return np.maximum(x * scale[:, None, None] + shift[:, None, None], 0)


def _conv(x, weight, pad):
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    k = weight.shape[-1]
    h, w = x.shape[1] - k + 1, x.shape[2] - k + 1
    patches = np.stack([x[:, i:i + h, j:j + w] for i in range(k) for j in range(k)], -1)
    return np.einsum("chwk,ock->ohw", patches, weight.reshape(*weight.shape[:2], -1))


def test_dense_layer_appends_its_features_to_its_input():
    layer = DenseLayer(num_channels=3, growth_rate=2, bn_size=2, dropout=0.0)
    layer.eval()
    rng = np.random.default_rng(0)
    state = {}
    for key, value in layer.state_dict().items():
        low = 0.5 if key.endswith("_variance") else -1.0
        state[key] = rng.uniform(low, 1.5, value.shape).astype(np.float32)
    layer.set_state_dict(state)
    x = rng.normal(size=(3, 5, 5)).astype(np.float32)
    hidden = _conv(_bn_relu(x, state, "bn_ac_func1._batch_norm"),
                   state["bn_ac_func1._conv.weight"], 0)
    new = _conv(_bn_relu(hidden, state, "bn_ac_func2._batch_norm"),
                state["bn_ac_func2._conv.weight"], 1)
    out = layer(paddle.to_tensor(x[None])).numpy()[0]
    np.testing.assert_allclose(out, np.concatenate([x, new]), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["densenet121", "densenet264", "googlenet", "inception_v3",
                                  "shufflenet_v2_x0_25", "shufflenet_v2_swish"])
def test_pretrained_explains_how_to_load_paddles_weights(name):
    with pytest.raises(NotImplementedError, match=rf"{name}\(pretrained=True\).*paddle.load"):
        getattr(models, name)(pretrained=True)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="DenseNet: supported layers are"):
        models.DenseNet(layers=100)
    with pytest.raises(NotImplementedError, match="ShuffleNetV2: scale 0.75"):
        models.ShuffleNetV2(scale=0.75)
    with pytest.raises(ValueError, match="act must be 'relu', 'swish' or None"):
        models.ShuffleNetV2(act="gelu")


def test_paddles_model_names_are_exported():
    import irflow.vision as vision
    for name in ("DenseNet", "GoogLeNet", "InceptionV3", "ShuffleNetV2", "densenet121",
                 "densenet161", "densenet169", "densenet201", "densenet264", "googlenet",
                 "inception_v3", "shufflenet_v2_swish", "shufflenet_v2_x0_25",
                 "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
                 "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"):
        assert name in models.__all__ and getattr(vision, name) is getattr(models, name)

"""`paddle.vision.models` beyond LeNet: ResNet/ResNeXt/Wide ResNet, VGG, MobileNet
V1/V2/V3, AlexNet, SqueezeNet. Paddle's weights load only if the state-dict names,
shapes and order are Paddle's, so those are checked against the architectures'
rules; the numbers against a NumPy forward of a residual block; compiled against
eager."""
import numpy as np
import pytest

import irflow as paddle
from irflow.vision import models

# Trainable parameter counts of the published architectures (the same networks as
# torchvision's, whose documented counts these are); Paddle's BatchNorm running
# mean and variance are parameters too, but not trainable ones.
TRAINABLE = {
    "resnet18": 11_689_512, "resnet50": 25_557_032, "resnext50_32x4d": 25_028_904,
    "vgg11": 132_863_336, "mobilenet_v2": 3_504_872, "mobilenet_v3_small": 2_542_856,
    "mobilenet_v3_large": 5_483_032, "alexnet": 61_100_840, "squeezenet1_1": 1_235_496,
}


def _trainable(model) -> int:
    return sum(int(np.prod(p.shape)) for p in model.parameters() if not p.stop_gradient)


@pytest.mark.parametrize("name", sorted(TRAINABLE))
def test_parameter_count_is_the_architectures(name):
    assert _trainable(getattr(models, name)()) == TRAINABLE[name]


def test_resnet18_state_dict_names_shapes_and_order_are_paddles():
    # Paddle's rules: Linear weights are [in, out]; BatchNorm holds weight, bias,
    # _mean, _variance in that order; a stage's first block downsamples through
    # `downsample.0` (1x1 conv) and `downsample.1` (BatchNorm)
    state = models.resnet18().state_dict()
    keys = list(state)
    assert keys[:6] == ["conv1.weight", "bn1.weight", "bn1.bias", "bn1._mean",
                        "bn1._variance", "layer1.0.conv1.weight"]
    assert keys[-2:] == ["fc.weight", "fc.bias"]
    assert list(state["fc.weight"].shape) == [512, 1000]
    assert list(state["conv1.weight"].shape) == [64, 3, 7, 7]
    assert list(state["layer2.0.downsample.0.weight"].shape) == [128, 64, 1, 1]
    assert "layer1.0.downsample.0.weight" not in state   # same channels, stride 1
    assert len(keys) == 1 + 4 + 8 * (2 + 2 * 4) + 3 * (1 + 4) + 2


def test_mobilenet_names_follow_paddles_sublayers():
    v1 = models.mobilenet_v1(scale=0.5).state_dict()
    assert list(v1["conv2_1._depthwise_conv.0.weight"].shape) == [16, 1, 3, 3]
    assert list(v1["conv6._pointwise_conv.0.weight"].shape) == [512, 512, 1, 1]
    assert list(v1["fc.weight"].shape) == [512, 1000]
    v2 = models.mobilenet_v2(scale=0.75, num_classes=5).state_dict()
    # 32 * 0.75 = 24 (a multiple of 8); the last 1x1 keeps 1280 for scale <= 1
    assert list(v2["features.0.0.weight"].shape) == [24, 3, 3, 3]
    assert list(v2["classifier.1.weight"].shape) == [1280, 5]
    v3 = models.mobilenet_v3_small().state_dict()
    assert list(v3["blocks.0.mid_se.fc1.weight"].shape) == [8, 16, 1, 1]
    assert "blocks.0.expand_conv.0.weight" not in v3   # 16 -> 16: no expansion
    assert list(v3["lastconv.0.weight"].shape) == [576, 96, 1, 1]


@pytest.mark.parametrize("make, size, shape", [
    (lambda: models.resnet18(num_classes=0), 64, [2, 512, 1, 1]),
    (lambda: models.resnet18(num_classes=0, with_pool=False), 64, [2, 512, 2, 2]),
    (lambda: models.resnet34(num_classes=7), 32, [2, 7]),
    (lambda: models.vgg11(num_classes=0, with_pool=False), 32, [2, 512, 1, 1]),
    (lambda: models.vgg11(batch_norm=True, num_classes=3), 32, [2, 3]),
    (lambda: models.mobilenet_v1(scale=0.25, num_classes=0, with_pool=False), 64,
     [2, 256, 2, 2]),
    (lambda: models.mobilenet_v3_large(scale=0.75, num_classes=0), 32, [2, 720, 1, 1]),
    (lambda: models.alexnet(num_classes=0), 224, [2, 256, 6, 6]),
    # the max poolings after Fire modules 3 and 7 (1.0) or 2 and 4 (1.1)
    (lambda: models.squeezenet1_0(num_classes=5, with_pool=False), 96, [2, 5, 4, 4]),
    (lambda: models.squeezenet1_1(num_classes=5, with_pool=False), 96, [2, 5, 5, 5]),
    (lambda: models.squeezenet1_1(num_classes=5), 96, [2, 5]),
])
def test_constructor_arguments_give_paddles_output_shapes(make, size, shape):
    model = make()
    model.eval()
    assert model(paddle.randn([2, 3, size, size])).shape == shape


def _conv(x, w, stride, pad):
    n, c, h, _ = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h = (h + 2 * pad - k) // stride + 1
    out = np.zeros((n, o, out_h, out_h))
    for i in range(out_h):
        for j in range(out_h):
            patch = xp[:, :, i * stride:i * stride + k, j * stride:j * stride + k]
            out[:, :, i, j] = np.einsum("ncab,ocab->no", patch, w)
    return out


def _bn(x, state, prefix):
    scale = state[prefix + ".weight"] / np.sqrt(state[prefix + "._variance"] + 1e-5)
    shift = state[prefix + ".bias"] - state[prefix + "._mean"] * scale
    return x * scale[None, :, None, None] + shift[None, :, None, None]


def test_basic_block_with_downsample_matches_numpy_in_eval_mode():
    block = models.resnet18().layer2[0]  # stride 2, 64 -> 128, with downsample
    rng = np.random.RandomState(0)
    state = {}
    for k, v in block.state_dict().items():
        value = (rng.rand(*v.shape) + 0.5 if k.endswith("_variance")
                 else rng.randn(*v.shape) * 0.1).astype(np.float32)
        state[k] = value
    block.set_state_dict({k: paddle.to_tensor(v) for k, v in state.items()})
    block.eval()
    x = rng.randn(2, 64, 8, 8).astype(np.float32)
    s = {k: v.astype(np.float64) for k, v in state.items()}
    out = np.maximum(_bn(_conv(x, s["conv1.weight"], 2, 1), s, "bn1"), 0)
    out = _bn(_conv(out, s["conv2.weight"], 1, 1), s, "bn2")
    identity = _bn(_conv(x, s["downsample.0.weight"], 2, 0), s, "downsample.1")
    expected = np.maximum(out + identity, 0)
    np.testing.assert_allclose(block(paddle.to_tensor(x)).numpy(), expected, rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("make, size", [
    (lambda: models.resnet18(num_classes=4), 32),
    (lambda: models.mobilenet_v2(scale=0.5, num_classes=4), 32),
    (lambda: models.mobilenet_v3_small(num_classes=4), 32),
    (lambda: models.squeezenet1_1(num_classes=4), 64),
])
def test_compiled_model_matches_eager_in_eval_mode(make, size):
    model = make()
    model.eval()
    x = paddle.randn([2, 3, size, size])
    eager = model(x).numpy()
    compiled = paddle.jit.to_static(model)(x).numpy()
    np.testing.assert_allclose(compiled, eager, rtol=1e-4, atol=1e-5)


def test_state_dict_transfers_between_instances():
    source, target = models.mobilenet_v3_small(num_classes=3), \
        models.mobilenet_v3_small(num_classes=3)
    source.train()
    source(paddle.randn([4, 3, 32, 32]))   # move the running statistics off their init
    target.set_state_dict({k: v.numpy() for k, v in source.state_dict().items()})
    source.eval()
    target.eval()
    x = paddle.randn([2, 3, 32, 32])
    np.testing.assert_array_equal(target(x).numpy(), source(x).numpy())


def test_pretrained_explains_how_to_load_paddles_weights():
    with pytest.raises(NotImplementedError, match=r"resnet50\(pretrained=True\).*paddle.load"):
        models.resnet50(pretrained=True)


def test_models_are_exported_from_paddle_vision_as_in_paddle():
    assert paddle.vision.resnet18 is models.resnet18
    assert paddle.vision.MobileNetV3Small is models.MobileNetV3Small

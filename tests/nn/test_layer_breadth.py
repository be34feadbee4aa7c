"""pixel_shuffle / pixel_unshuffle, the padding layers (Pad1D/2D/3D, ZeroPad1D/2D/3D),
CosineSimilarity, pairwise_distance, the 1-D adaptive pools and ParameterDict: values
against NumPy references written from the definitions and against numbers from
PaddlePaddle 3.3.1, gradients against finite differences, compiled programs against
eager code, and argument errors."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
BACKENDS = ["numpy", "llvm"]


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- pixel shuffle

def np_pixel_shuffle(x, r):
    """out[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w], element by element."""
    n, c, h, w = x.shape
    out = np.empty((n, c // (r * r), h * r, w * r), x.dtype)
    for index in np.ndindex(out.shape):
        b, ch, row, col = index
        out[index] = x[b, ch * r * r + (row % r) * r + col % r, row // r, col // r]
    return out


@pytest.mark.parametrize("r, shape", [(2, (2, 8, 3, 4)), (3, (1, 9, 2, 2)), (1, (2, 3, 2, 2))])
def test_pixel_shuffle_values_inverse_and_gradients(r, shape):
    x = RNG.standard_normal(shape)
    expected = np_pixel_shuffle(x, r)
    np.testing.assert_array_equal(F.pixel_shuffle(t(x), r).numpy(), expected)
    np.testing.assert_array_equal(F.pixel_unshuffle(t(expected), r).numpy(), x)
    nhwc = F.pixel_shuffle(t(x.transpose(0, 2, 3, 1)), r, "NHWC").numpy()
    np.testing.assert_array_equal(nhwc, expected.transpose(0, 2, 3, 1))
    back = F.pixel_unshuffle(t(expected.transpose(0, 2, 3, 1)), r, data_format="NHWC")
    np.testing.assert_array_equal(back.numpy(), x.transpose(0, 2, 3, 1))
    check_grads(lambda v: F.pixel_shuffle(v, r), x)
    check_grads(lambda v: F.pixel_unshuffle(v, r), expected)


@pytest.mark.parametrize("call, error", [
    (lambda: F.pixel_shuffle(t(np.zeros((2, 8, 3, 3))), 3), ValueError),  # 9 does not divide 8
    (lambda: F.pixel_shuffle(t(np.zeros((8, 3, 3))), 2), ValueError),
    (lambda: F.pixel_shuffle(t(np.zeros((2, 8, 3, 3))), 2.0), TypeError),
    (lambda: F.pixel_shuffle(t(np.zeros((2, 8, 3, 3))), 0), ValueError),
    (lambda: F.pixel_shuffle(t(np.zeros((2, 8, 3, 3))), 2, "NCL"), ValueError),
    (lambda: F.pixel_unshuffle(t(np.zeros((2, 8, 3, 4))), 2), ValueError),  # 2 does not divide 3
    (lambda: nn.PixelShuffle(2.0), TypeError),
    (lambda: nn.PixelUnshuffle(2, "NCL"), ValueError),
])
def test_pixel_shuffle_argument_errors(call, error):
    with pytest.raises(error):
        call()


def test_pixel_shuffle_layers_forward_and_repr_as_paddle():
    x = t(RNG.standard_normal((1, 2, 4, 8)))
    np.testing.assert_array_equal(nn.PixelShuffle(2, "NHWC")(x).numpy(),
                                  F.pixel_shuffle(x, 2, "NHWC").numpy())
    np.testing.assert_array_equal(nn.PixelUnshuffle(2)(x).numpy(),
                                  F.pixel_unshuffle(x, 2).numpy())
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3, "NHWC", name="u")) == \
        "PixelUnshuffle(downscale_factor=3, data_format=NHWC, name=u)"


# ---------------------------------------------------------------- padding layers

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
           "circular": "wrap"}


@pytest.mark.parametrize("layer, shape, pairs, mode", [
    (nn.Pad1D(2), (2, 3, 5), [(0, 0), (0, 0), (2, 2)], "constant"),
    (nn.Pad1D([1, 3], mode="reflect"), (2, 3, 5), [(0, 0), (0, 0), (1, 3)], "reflect"),
    (nn.Pad1D([2, 1], mode="replicate", data_format="NLC"), (2, 5, 3),
     [(0, 0), (2, 1), (0, 0)], "replicate"),
    (nn.Pad3D(1, mode="circular"), (1, 2, 3, 3, 4), [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)],
     "circular"),
    (nn.Pad3D([1, 0, 0, 2, 2, 1], mode="reflect"), (1, 2, 3, 4, 5),
     [(0, 0), (0, 0), (2, 1), (0, 2), (1, 0)], "reflect"),
    (nn.Pad3D([0, 1, 1, 0, 2, 0], data_format="NDHWC"), (1, 3, 3, 4, 2),
     [(0, 0), (2, 0), (1, 0), (0, 1), (0, 0)], "constant"),
    (nn.ZeroPad1D([0, 2]), (1, 2, 3), [(0, 0), (0, 0), (0, 2)], "constant"),
    (nn.ZeroPad2D([1, 0, 2, 3]), (1, 2, 3, 3), [(0, 0), (0, 0), (2, 3), (1, 0)], "constant"),
    (nn.ZeroPad2D(1, "NHWC"), (1, 3, 3, 2), [(0, 0), (1, 1), (1, 1), (0, 0)], "constant"),
    (nn.ZeroPad3D(1), (1, 1, 2, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)], "constant"),
])
def test_padding_layers_against_numpy(layer, shape, pairs, mode):
    x = RNG.standard_normal(shape)
    np.testing.assert_array_equal(layer(t(x)).numpy(), np.pad(x, pairs, mode=NP_MODE[mode]))
    check_grads(layer, x)


def test_pad_value_and_zeropad2d():
    x = RNG.standard_normal((1, 2, 2, 2, 2))
    expected = np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 0), (0, 1)], constant_values=2.5)
    np.testing.assert_array_equal(nn.Pad3D([0, 1, 0, 0, 1, 0], value=2.5)(t(x)).numpy(),
                                  expected)
    x4 = RNG.standard_normal((1, 2, 3, 3))
    np.testing.assert_array_equal(F.zeropad2d(t(x4), [1, 0, 0, 2]).numpy(),
                                  np.pad(x4, [(0, 0), (0, 0), (0, 2), (1, 0)]))


def test_padding_layers_keep_paddles_attributes_and_repr():
    # Paddle 3.3.1's reprs
    assert repr(nn.ZeroPad2D(1)) == \
        "ZeroPad2D(padding=[1, 1, 1, 1], mode=constant, value=0.0, data_format=NCHW)"
    assert repr(nn.Pad1D(2)) == "Pad1D(padding=[2, 2], mode=constant, value=0.0, data_format=NCL)"
    assert nn.Pad3D(1).padding == [1] * 6 and nn.Pad1D([1, 2]).padding == [1, 2]


# ---------------------------------------------------------------- distances

X1, X2 = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))


def np_norm(v, p):
    if p == float("inf"):
        return np.abs(v).max(-1)
    return (np.abs(v) ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("p, epsilon, keepdim", [
    (2.0, 1e-6, False), (1.0, 0.0, True), (3.0, 1e-3, False), (float("inf"), 1e-6, True)])
def test_pairwise_distance_values_and_gradients(p, epsilon, keepdim):
    expected = np_norm(X1 - X2 + epsilon, p)
    out = F.pairwise_distance(t(X1), t(X2), p, epsilon, keepdim)
    np.testing.assert_allclose(out.numpy(), expected[:, None] if keepdim else expected,
                               rtol=1e-12)
    check_grads(lambda a, b: F.pairwise_distance(a, b, p, epsilon, keepdim), X1, X2)
    layer = nn.PairwiseDistance(p, epsilon, keepdim)
    np.testing.assert_array_equal(layer(t(X1), t(X2)).numpy(), out.numpy())


def test_pairwise_distance_of_vectors_and_of_equal_points():
    assert F.pairwise_distance(t(X1[0]), t(X2[0])).shape == []
    x = t(X1, stop_gradient=False)
    out = F.pairwise_distance(x, t(X1), epsilon=0.0)
    paddle.sum(out).backward()
    assert not out.numpy().any() and not x.grad.numpy().any()  # 0, with gradient 0


def test_distance_layers_repr_as_paddle():
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance(p=2.0)"
    assert repr(nn.PairwiseDistance(1.0, 0.1, True, "d")) == \
        "PairwiseDistance(p=1.0, epsilon=0.1, keepdim=True, name=d)"
    assert repr(nn.CosineSimilarity()) == "CosineSimilarity(axis=1, eps=1e-08)"


def test_cosine_similarity_layer():
    expected = (X1 * X2).sum(0) / np.sqrt((X1 ** 2).sum(0) * (X2 ** 2).sum(0))
    np.testing.assert_allclose(nn.CosineSimilarity(axis=0)(t(X1), t(X2)).numpy(), expected,
                               rtol=1e-12)


# ---------------------------------------------------------------- 1-D adaptive pools

X3 = RNG.standard_normal((2, 3, 10))


def np_adaptive_bins(length, out):
    return [(i * length // out, -(-(i + 1) * length // out)) for i in range(out)]


@pytest.mark.parametrize("out", [1, 3, 4, 10, 13])
def test_adaptive_pool1d_values_and_gradients(out):
    bins = np_adaptive_bins(10, out)
    average = np.stack([X3[..., a:b].mean(-1) for a, b in bins], -1)
    maximum = np.stack([X3[..., a:b].max(-1) for a, b in bins], -1)
    argmax = np.stack([X3[..., a:b].argmax(-1) + a for a, b in bins], -1)
    np.testing.assert_allclose(F.adaptive_avg_pool1d(t(X3), out).numpy(), average, rtol=1e-12)
    np.testing.assert_array_equal(F.adaptive_max_pool1d(t(X3), [out]).numpy(), maximum)
    values, mask = F.adaptive_max_pool1d(t(X3), out, return_mask=True)
    np.testing.assert_array_equal(values.numpy(), maximum)
    assert mask.dtype == paddle.int32  # as Paddle's
    np.testing.assert_array_equal(mask.numpy(), argmax)
    check_grads(lambda v: F.adaptive_avg_pool1d(v, out), X3)
    check_grads(lambda v: F.adaptive_max_pool1d(v, out), X3)


def test_adaptive_max_pool1d_gives_a_tie_to_the_first_cell():
    """PaddlePaddle 3.3.1: the gradient of F.adaptive_max_pool1d([[[1, 1, 2, 0.5]]], 2)
    is [[[1, 0, 1, 0]]]."""
    x = t(np.array([[[1.0, 1.0, 2.0, 0.5]]]), stop_gradient=False)
    values, mask = F.adaptive_max_pool1d(x, 2, return_mask=True)
    paddle.sum(values).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[1, 0, 1, 0]]])
    np.testing.assert_array_equal(mask.numpy(), [[[0, 2]]])


@pytest.mark.parametrize("call", [
    lambda: F.adaptive_avg_pool1d(t(np.zeros((2, 3, 4, 5))), 2),
    lambda: F.adaptive_max_pool1d(t(np.zeros((2, 3))), 2),
    lambda: F.adaptive_max_pool1d(t(X3), 0),
    lambda: F.adaptive_max_pool1d(t(X3), [2, 3]),
])
def test_adaptive_pool1d_argument_errors(call):
    with pytest.raises(ValueError):
        call()


def test_adaptive_pool1d_layers():
    x = t(X3)
    np.testing.assert_array_equal(nn.AdaptiveAvgPool1D(4)(x).numpy(),
                                  F.adaptive_avg_pool1d(x, 4).numpy())
    values, mask = nn.AdaptiveMaxPool1D(4, return_mask=True)(x)
    np.testing.assert_array_equal(values.numpy(), F.adaptive_max_pool1d(x, 4).numpy())
    assert mask.shape == [2, 3, 4]
    assert repr(nn.AdaptiveMaxPool1D(3)) == "AdaptiveMaxPool1D(output_size=3, return_mask=False)"


# ---------------------------------------------------------------- ParameterDict

def make_parameter(*shape):
    return paddle.create_parameter(list(shape), "float64")


def test_parameter_dict_registers_its_parameters_in_order():
    a, b, c = make_parameter(2), make_parameter(3), make_parameter(1)
    params = nn.ParameterDict({"a": a, "b": b})
    params.update([("c", c)])
    assert list(params) == ["a", "b", "c"] and len(params) == 3
    assert params["b"] is b and "c" in params
    assert list(params.state_dict()) == ["a", "b", "c"]
    assert [p is q for p, q in zip(params.parameters(), (a, b, c))] == [True] * 3
    replacement = make_parameter(5)
    params["a"] = replacement
    assert params["a"] is replacement and list(params) == ["a", "b", "c"]
    copied = nn.ParameterDict(params)
    assert list(copied) == ["a", "b", "c"] and copied["c"] is c


@pytest.mark.parametrize("call, error", [
    (lambda p: p.__setitem__("x", paddle.ones([2])), TypeError),
    (lambda p: p.update([("x", make_parameter(2), 1)]), ValueError),
    (lambda p: p.update(3), TypeError),
    (lambda p: p["missing"], KeyError),
])
def test_parameter_dict_errors(call, error):
    with pytest.raises(error):
        call(nn.ParameterDict({"a": make_parameter(2)}))


class Scaled(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.extra = nn.ParameterDict({"scale": paddle.create_parameter([2], "float32"),
                                       "shift": paddle.create_parameter([2], "float32")})

    def forward(self, x):
        return self.linear(x) * self.extra["scale"] + self.extra["shift"]


def test_parameter_dict_trains_and_compiles():
    model = Scaled()
    assert {"extra.scale", "extra.shift"} <= set(model.state_dict())
    x = t(RNG.standard_normal((4, 3)).astype(np.float32))
    before = model.extra["shift"].numpy().copy()
    optimizer = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    paddle.sum(model(x)).backward()
    optimizer.step()
    np.testing.assert_allclose(model.extra["shift"].numpy(), before - 0.1 * 4, rtol=1e-6)
    np.testing.assert_allclose(paddle.compile(model)(x).numpy(), model(x).numpy(), rtol=1e-6)


# ---------------------------------------------------------------- compiled

class Pipeline(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.up, self.down = nn.PixelShuffle(2), nn.PixelUnshuffle(2)
        self.pad = nn.Pad3D([1, 0, 0, 1, 0, 0], mode="replicate")
        self.max_pool, self.avg_pool = nn.AdaptiveMaxPool1D(3), nn.AdaptiveAvgPool1D(3)
        self.distance = nn.PairwiseDistance(p=1.0)

    def forward(self, x):
        y = self.down(self.up(self.conv(x)))
        y = paddle.squeeze(self.pad(paddle.unsqueeze(y, 2)), 2)
        y = paddle.flatten(y, 2)
        return self.distance(self.max_pool(y), self.avg_pool(y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_layers_match_eager(backend):
    model = Pipeline()
    x = t(RNG.standard_normal((2, 3, 4, 4)).astype(np.float32))
    eager = model(x).numpy()
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(), eager,
                               rtol=1e-5, atol=1e-6)
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 3, 4, 4])],
                                  backend=backend)
    np.testing.assert_allclose(static(x).numpy(), eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(static(x[:1]).numpy(), eager[:1], rtol=1e-5, atol=1e-6)

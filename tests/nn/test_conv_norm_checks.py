"""Parity hunt s14 (convolution, pooling, normalization): layer_norm's check of
`normalized_shape` against x's trailing dims, and the errors that name a symbolic
size where "SAME" padding or conv3d's depth taps need a static one."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.errors import ShapeError, SymbolicShapeError
from irflow.static import InputSpec

X = np.random.default_rng(14).standard_normal((2, 3, 4))


@pytest.mark.parametrize("normalized_shape", [1, 3, [3, 5], [2, 3, 4, 4]])
def test_layer_norm_rejects_a_shape_that_is_not_the_trailing_dims(normalized_shape):
    """Paddle raises when x does not end in normalized_shape; irflow used to normalize
    over as many trailing dims whatever their sizes."""
    with pytest.raises(ShapeError, match="layer_norm: normalized_shape"):
        F.layer_norm(paddle.to_tensor(X), normalized_shape)


@pytest.mark.parametrize("make, rank", [
    (lambda: nn.Conv2D(3, 4, 3, stride=2, padding="SAME"), 4),
    (lambda: nn.MaxPool2D(3, 2, "SAME"), 4),
    (lambda: nn.Conv1D(3, 4, 3, padding="SAME"), 3),
    (lambda: nn.Conv3D(3, 4, 3, padding=1), 5),
])
def test_symbolic_spatial_size_is_named_not_a_type_error(make, rank):
    """"SAME" padding and conv3d's depth taps are computed from the sizes, so a size
    left None in the input_spec cannot be traced: SymbolicShapeError, not a TypeError
    from arithmetic on the size's name."""
    static = paddle.jit.to_static(make(), input_spec=[InputSpec([None, 3] + [None] * (rank - 2))])
    with pytest.raises(SymbolicShapeError, match="static"):
        static(paddle.rand([2, 3] + [5] * (rank - 2)))


def test_circular_padding_wider_than_the_axis_wraps_around_it_again():
    x = np.arange(2 * 3, dtype=np.float32).reshape(1, 2, 3)
    out = F.pad(paddle.to_tensor(x), [3, 4], mode="circular", data_format="NCL")
    np.testing.assert_array_equal(out.numpy(), np.pad(x, [(0, 0), (0, 0), (3, 4)], mode="wrap"))


def _batch_norm_1d():
    layer = nn.BatchNorm1D(3)
    layer.weight.set_value(paddle.to_tensor([2.0, 3.0, 4.0]))
    layer.bias.set_value(paddle.to_tensor([0.5, 0.5, 0.5]))
    layer.train()
    return layer


@pytest.mark.parametrize("shape", [[1, 3], [1, 3, 1]])
def test_batch_norm_of_one_value_per_channel_passes_x_on_as_paddles(shape):
    """A training batch of one sample (the last of an epoch): Paddle's kernel returns x
    unchanged, its gradient the identity, zero gradients for weight and bias, and
    keeps the running statistics (the batch's variance, 0, would pull them toward 0)."""
    layer = _batch_norm_1d()
    x = paddle.to_tensor(np.arange(1.0, 4.0, dtype=np.float32).reshape(shape))
    x.stop_gradient = False
    y = layer(x)
    upstream = np.arange(3, dtype=np.float32).reshape(shape) + 1
    (y * paddle.to_tensor(upstream)).sum().backward()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), upstream)
    np.testing.assert_array_equal(layer.weight.grad.numpy(), np.zeros(3))
    np.testing.assert_array_equal(layer.bias.grad.numpy(), np.zeros(3))
    np.testing.assert_array_equal(layer._mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(layer._variance.numpy(), np.ones(3))


def test_compiled_batch_norm_decides_one_value_per_channel_when_it_runs():
    eager, compiled = _batch_norm_1d(), _batch_norm_1d()
    run = paddle.jit.to_static(compiled, input_spec=[InputSpec([None, 3], "float32")])
    rng = np.random.default_rng(0)
    for batch in (4, 1, 3, 1):
        x = paddle.to_tensor(rng.standard_normal((batch, 3)).astype(np.float32))
        np.testing.assert_allclose(run(x).numpy(), eager(x).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(compiled._variance.numpy(), eager._variance.numpy(),
                                   rtol=1e-6)

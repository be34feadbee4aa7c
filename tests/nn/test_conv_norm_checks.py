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

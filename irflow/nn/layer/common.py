"""Linear, Bilinear, Embedding, Dropout, Dropout2D, ChannelShuffle, Flatten, Unflatten,
Identity, CosineSimilarity and PairwiseDistance layers."""
from __future__ import annotations

from ...context import current_static
from ...errors import ShapeError
from ...tensor import flatten, reshape
from ...tensor.manipulation import exact_shape
from .. import functional as F
from ..functional.common import check_pixel_options
from ..initializer import XavierUniform
from .layers import Layer


class Linear(Layer):
    """y = x @ weight + bias with weight [in_features, out_features] (Paddle's layout),
    initialized XavierUniform, and bias zeros (``bias_attr=False``: no bias)."""

    def __init__(self, in_features: int, out_features: int, weight_attr=None, bias_attr=None,
                 name=None):
        super().__init__()
        self._in_features, self._out_features = in_features, out_features
        self.weight = self.create_parameter([in_features, out_features], weight_attr)
        self.bias = self.create_parameter([out_features], bias_attr, is_bias=True)
        self.name = name

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return (f"in_features={self._in_features}, out_features={self._out_features}, "
                f"dtype={self._dtype}{name}")


class Bilinear(Layer):
    """`F.bilinear`: out = x1 @ weight[o] @ x2 + bias, with weight [out_features,
    in1_features, in2_features] (XavierUniform over those fans, as Paddle) and bias
    [1, out_features] (zeros; ``bias_attr=False``: no bias)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        self._in1_features, self._in2_features = in1_features, in2_features
        self._out_features, self._name = out_features, name
        self.weight = self.create_parameter([out_features, in1_features, in2_features],
                                            weight_attr)
        self.bias = self.create_parameter([1, out_features], bias_attr, is_bias=True)

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return (f"in1_features={self._in1_features}, in2_features={self._in2_features}, "
                f"out_features={self._out_features}, dtype={self._dtype}{name}")


class Embedding(Layer):
    """A lookup table [num_embeddings, embedding_dim] (XavierUniform, of `dtype`, or
    the tensor `_weight` itself), indexed by integer ids; the row `padding_idx`
    starts at zero and gets no gradient. `_freeze` stops gradients to the table
    (for a created one, only without a `weight_attr`, as Paddle). `max_norm`,
    `norm_type` and `scale_grad_by_freq`: see `F.embedding`. `device` is accepted
    for Paddle's signature; irflow runs on the CPU."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None,
                 max_norm=None, norm_type: float = 2.0, *, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight=None, _freeze: bool = False, device=None,
                 dtype=None, weight_attr=None, name=None):
        super().__init__()
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise ValueError("num_embeddings and embedding_dim must be greater than 0")
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"padding_idx must be within [-{num_embeddings}, "
                             f"{num_embeddings})")
        self._num_embeddings, self._embedding_dim = num_embeddings, embedding_dim
        self._padding_idx = padding_idx
        self._max_norm, self._norm_type = max_norm, norm_type
        self._sparse, self._scale_grad_by_freq = sparse, scale_grad_by_freq
        self._name = name
        if _weight is not None:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ShapeError(f"Embedding: _weight has shape {list(_weight.shape)}, "
                                 f"expected [{num_embeddings}, {embedding_dim}]")
            self.weight = _weight
            self.weight.stop_gradient = _freeze
        else:
            self.weight = self.create_parameter([num_embeddings, embedding_dim], weight_attr,
                                                dtype=dtype,
                                                default_initializer=XavierUniform())
            if weight_attr is None:
                self.weight.stop_gradient = _freeze
        if padding_idx is not None and current_static() is None:
            # (as Paddle, in dynamic mode only: a static program's table is the
            # startup program's, or what is set in the scope)
            value = self.weight.numpy()
            value[padding_idx] = 0.0
            self.weight.set_value(value)

    @property
    def padding_idx(self):
        return self._padding_idx

    def forward(self, x):
        return F.embedding(x, self.weight, self._padding_idx, self._max_norm, self._norm_type,
                           self._sparse, self._scale_grad_by_freq)

    def extra_repr(self) -> str:
        text = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx is not None:
            text += f", padding_idx={self._padding_idx}"
        text += f", sparse={self._sparse}, scale_grad_by_freq={self._scale_grad_by_freq}"
        return text + (f", name={self._name}" if self._name is not None else "")


class Dropout(Layer):
    """`F.dropout` while training, the identity (or scaling, see `mode`) in eval."""

    def __init__(self, p: float = 0.5, inplace: bool = False, axis=None,
                 mode: str = "upscale_in_train", name=None):
        super().__init__()
        self.p, self.inplace, self.axis, self.mode, self.name = p, inplace, axis, mode, name

    def forward(self, x):
        return F.dropout(x, self.p, self.axis, self.training, mode=self.mode)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return f"p={self.p}, axis={self.axis}, mode={self.mode}{name}, inplace={self.inplace}"


class AlphaDropout(Layer):
    """`F.alpha_dropout` while training, the identity in eval."""

    def __init__(self, p: float = 0.5, name=None):
        super().__init__()
        self.p, self.name = p, name

    def forward(self, x):
        return F.alpha_dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return f"p={self.p}{name}"


class Dropout2D(Layer):
    """`F.dropout2d` (whole channels dropped) while training, the identity in eval."""

    def __init__(self, p: float = 0.5, data_format: str = "NCHW", name=None):
        super().__init__()
        self.p, self.data_format, self.name = p, data_format, name

    def forward(self, x):
        return F.dropout2d(x, self.p, self.training, self.data_format)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return f"p={self.p}, data_format={self.data_format}{name}"


class ChannelShuffle(Layer):
    """`F.channel_shuffle`: interleave the channels of a 4-D input from `groups`
    groups."""

    def __init__(self, groups: int, data_format: str = "NCHW", name=None):
        super().__init__()
        check_pixel_options("ChannelShuffle", groups, "groups", data_format)
        self._groups, self._data_format, self._name = groups, data_format, name

    def forward(self, x):
        return F.channel_shuffle(x, self._groups, self._data_format)

    def extra_repr(self) -> str:
        text = f"groups={self._groups}"
        if self._data_format != "NCHW":
            text += f", data_format={self._data_format}"
        return text + (f", name={self._name}" if self._name is not None else "")


class Flatten(Layer):
    """Merge the dims from start_axis to stop_axis into one."""

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, x):
        return flatten(x, self.start_axis, self.stop_axis)


class Unflatten(Layer):
    """Split dim `axis` into `shape` (which may hold one -1), as ``paddle.unflatten``."""

    def __init__(self, axis: int, shape, name=None):
        super().__init__()
        self.axis, self.shape, self.name = axis, shape, name

    def forward(self, input):  # noqa: A002  (Paddle's name)
        dims = list(exact_shape(input))
        if not dims:
            raise ValueError("Unflatten: the input must have at least one dim")
        axis = self.axis + len(dims) if self.axis < 0 else self.axis
        if not 0 <= axis < len(dims):
            raise ValueError(f"Unflatten: axis {self.axis} is out of range for a "
                             f"{len(dims)}-D input")
        return reshape(input, dims[:axis] + list(self.shape) + dims[axis + 1:])

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return f"axis={self.axis}, shape={self.shape}{name}"


class Identity(Layer):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class CosineSimilarity(Layer):
    """`F.cosine_similarity` of two inputs along `axis`."""

    def __init__(self, axis: int = 1, eps: float = 1e-8):
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self._axis, self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"


class PairwiseDistance(Layer):
    """`F.pairwise_distance`: the p-norm of x - y + epsilon along the last axis."""

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                 name=None):
        super().__init__()
        self.p, self.epsilon, self.keepdim, self.name = p, epsilon, keepdim, name

    def forward(self, x, y):
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        text = f"p={self.p}"
        if self.epsilon != 1e-6:
            text += f", epsilon={self.epsilon}"
        if self.keepdim:
            text += f", keepdim={self.keepdim}"
        return text + (f", name={self.name}" if self.name is not None else "")

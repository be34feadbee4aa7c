"""Linear, bilinear, dropout, embedding, channel shuffle, padding, one-hot,
sequence masks, normalization and cosine similarity."""
from __future__ import annotations

from ...context import current_tracer
from ...dispatch import apply, user_location
from ...errors import OutOfRangeError, ShapeError
from ...tensor import (Tensor, abs as absolute, add, arange, argmax, assign, clip, concat, einsum,
                       equal, expand_as, full, matmul, max as reduce_max, maximum, pow as power,
                       reshape, scatter, slice as slice_, sqrt, sum as reduce_sum,
                       take_along_axis, transpose, unsqueeze)
from ...tensor.convert import as_tensor
from ...tensor.logic import select
from ...tensor.manipulation import exact_shape, pick
from ...tensor.math import vector_norm
from ...tensor.random import draw, next_seed


def linear(x, weight, bias=None, name=None):
    """x @ weight + bias, with weight laid out [in_features, out_features]."""
    out = matmul(x, weight)
    return out if bias is None else add(out, bias)


def bilinear(x1, x2, weight, bias=None, name=None):
    """out[b, o] = x1[b] @ weight[o] @ x2[b] + bias[o]: x1 [batch, in1], x2 [batch, in2],
    weight [out, in1, in2] and bias [1, out] (Paddle's layouts)."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.ndim != 2 or x2.ndim != 2 or weight.ndim != 3:
        raise ShapeError(f"bilinear: x1 and x2 must be 2-D and weight 3-D, got shapes "
                         f"{x1.shape}, {x2.shape} and {weight.shape}")
    out = einsum("bi,oij,bj->bo", x1, weight, x2)
    return out if bias is None else add(out, bias)


def first_max(x, axis: int) -> tuple:
    """(the maximum of x along `axis`, kept with size 1, and the first index holding
    it). The maximum is read at that index, so a tie gives the whole gradient to the
    first of the tied elements, as Paddle's maxout and max-pool kernels do (irflow's
    `max` shares it among them)."""
    index = argmax(x, axis, keepdim=True)
    return take_along_axis(x, index, axis), index


def test_twins() -> dict | None:
    """Where the static program being built keeps the test-mode result of each op
    that behaves differently in training (Paddle's ``is_test`` ops: dropout, batch
    norm), for ``clone(for_test=True)`` to swap in; None when nothing keeps them
    (eager code; a compiled function, which traces one mode)."""
    tracer = current_tracer()
    return None if tracer is None else tracer.twins


def _dropout_mask(x, axis):
    """1 (keep) or 0 per element of x, or per index of the `axis` dims only (the mask
    broadcasts over the others). Drawn by the seeded `uniform` op on x's exact shape,
    so a symbolic batch dim traces."""
    shape = list(exact_shape(x))
    if axis is not None:
        kept = {a % len(shape) for a in ([axis] if isinstance(axis, int) else axis)}
        shape = [d if i in kept else 1 for i, d in enumerate(shape)]
    return draw("uniform", next_seed(), shape, x.dtype, min=0.0, max=1.0)


def _kept(x, p: float, axis):
    """Whether each element of x survives dropout with probability `p` (a bool tensor
    broadcasting to x; all false for p = 1). Results select, not multiply, so that a
    dropped inf or NaN is dropped too (as Paddle's dropout kernel; its dropout along
    an `axis`, and its alpha dropout, multiply by the mask and give NaN there)."""
    if p == 1:
        return full([], False, "bool")
    return _dropout_mask(x, axis) >= p


def dropout(x, p: float = 0.5, axis=None, training: bool = True, inplace: bool = False,
            mode: str = "upscale_in_train", name=None):
    """Zero each element with probability `p` while training. "upscale_in_train"
    (default) scales the kept ones by 1/(1-p) and is the identity in evaluation;
    "downscale_in_infer" keeps them as they are and scales by (1-p) in evaluation."""
    if not 0 <= p <= 1:
        raise ValueError(f"p argument should between 0 and 1, got {p}")
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"mode argument should be 'downscale_in_infer' or "
                         f"'upscale_in_train', got {mode!r}")
    x = as_tensor(x)
    if not training:
        return x * (1.0 - p) if mode == "downscale_in_infer" and p > 0 else x
    if p == 0:
        return x
    kept = x * (1.0 / (1.0 - p)) if mode == "upscale_in_train" and p < 1 else x
    out = select(_kept(x, p, axis), kept, 0.0)
    twins = test_twins()
    if twins is not None:
        twins[out._ir] = dropout(x, p, axis, False, mode=mode)._ir
    return out


_SELU_ALPHA_P = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


def alpha_dropout(x, p: float = 0.5, training: bool = True, name=None):
    """Dropout for SELU networks: while training, each element is replaced with
    probability `p` by SELU's negative saturation value alpha' = -scale * alpha, and
    the result is mapped by a * y + b, with a = ((1 - p)(1 + p alpha'^2))^-1/2 and
    b = -a alpha' p, which keeps a zero-mean unit-variance input so. The identity in
    evaluation."""
    if not isinstance(p, float | int):
        raise TypeError(f"alpha_dropout: p must be a float or int, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"alpha_dropout: p must lie in [0, 1], got {p}")
    x = as_tensor(x)
    if not training:
        return x
    if p == 1:
        out = select(_kept(x, p, None), x, 0.0)
    else:
        a = ((1 - p) * (1 + p * _SELU_ALPHA_P ** 2)) ** -0.5
        b = -a * _SELU_ALPHA_P * p
        out = select(_kept(x, p, None), x, _SELU_ALPHA_P) * a + b
    twins = test_twins()
    if twins is not None:
        twins[out._ir] = x._ir
    return out


def dropout2d(x, p: float = 0.5, training: bool = True, data_format: str = "NCHW",
              name=None):
    """Zero whole channels of x [N, C, H, W] (or NHWC) with probability `p` while
    training, scaling the kept ones by 1/(1-p); the identity in evaluation."""
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"dropout2d: x must be a 4-D tensor, got shape {x.shape}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"dropout2d: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    return dropout(x, p, [0, 1] if data_format == "NCHW" else [0, 3], training)


def embedding(x, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              sparse: bool = False, scale_grad_by_freq: bool = False, name=None):
    """Rows of `weight` [num_embeddings, dim] picked by the integer ids `x`: result
    x.shape + [dim]. Ids equal to `padding_idx` give rows of +0.0 (whatever the
    table holds there) and no gradient.

    A nonzero `max_norm` first renormalizes, in `weight` itself (as Paddle does),
    each row x looks up whose `norm_type`-norm exceeds max_norm (see
    `_renorm_looked_up`). `scale_grad_by_freq` divides the gradient each row gets by
    the number of times x looks it up."""
    if scale_grad_by_freq and sparse:
        raise ValueError("embedding: scale_grad_by_freq=True is not supported with "
                         "sparse=True")
    x = as_tensor(x)
    _check_ids_not_negative(x)
    if max_norm:
        weight = _renorm_looked_up(x, weight, float(max_norm), norm_type)
    out = pick(weight, x, axis=0)
    if scale_grad_by_freq:
        out = _gradient_by_frequency(out, x, exact_shape(weight)[0])
    if padding_idx is None:
        return out
    if padding_idx < 0:
        padding_idx += weight.shape[0]
    return select(unsqueeze(x != padding_idx, -1), out, full([], 0.0, out.dtype))


def _check_ids_not_negative(x: Tensor) -> None:
    """Ids lie in [0, num_embeddings), as Paddle documents (an id past the table is an
    IndexError of the lookup): a negative one would pick a row from the end, as a
    Python index does, where Paddle's kernel reads outside its table. Checked now
    in eager code, when the program runs in compiled code (an `assert`)."""
    if x._value is not None:
        if x._value.size and x._value.min() < 0:
            raise IndexError(f"embedding: ids must lie in [0, num_embeddings), as in Paddle; "
                             f"got {x._value.min()}")
        return
    apply("assert", [(x >= 0).all()], {
        "msg": f"{user_location()}: embedding: ids must lie in [0, num_embeddings), as in "
               f"Paddle; got a negative id", "error": "IndexError"})


def _renorm_looked_up(x, weight, max_norm: float, norm_type: float):
    """Scale each row of `weight` that x looks up and whose norm exceeds `max_norm` by
    max_norm / (norm + 1e-7), storing the result in `weight` (`set_value`), as
    Paddle's embedding_renorm_. Returns a tensor holding the renormalized table whose
    gradient reaches `weight` as a plain lookup's would: the rescaling is not
    differentiated (Paddle runs it without recording): it is computed from the
    detached table, and the gradient reaches `weight` only through ``weight -
    weight.detach()`` (zero), taken before the update."""
    ids, table = reshape(x, [-1]), weight.detach()
    rows = pick(table, ids, axis=0)
    norms = vector_norm(rows, norm_type, -1, keepdim=True)
    rows = select(norms > max_norm, rows * (max_norm / (norms + 1e-7)), rows)
    renormed = scatter(table, ids, rows)
    through = weight - weight.detach()
    weight.set_value(renormed)
    return renormed + through


def _gradient_by_frequency(out, x, num_embeddings):
    """`out` (the rows looked up for x) with the gradient through each divided by
    how many times x holds its id, so that a row's summed gradient is the mean over
    its lookups; the value is unchanged."""
    ids = reshape(x, [-1])
    counts = scatter(full([num_embeddings], 0.0, out.dtype), ids,
                     full(exact_shape(ids), 1.0, out.dtype), overwrite=False)
    frequency = unsqueeze(pick(counts, x, axis=0), -1)
    return out.detach() + (out - out.detach()) / frequency


def check_pixel_options(function: str, factor, what: str, data_format: str) -> None:
    """Paddle's checks of the options of a pixel (un)shuffle, which its layers run
    when constructed: `factor` (named `what`) a positive int, an NCHW or NHWC layout."""
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{function}: {what} must be an int, got {factor!r}")
    if factor <= 0:
        raise ValueError(f"{function}: {what} must be positive, got {factor}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{function}: data_format must be 'NCHW' or 'NHWC', got "
                         f"{data_format!r}")


def channel_shuffle(x, groups: int, data_format: str = "NCHW", name=None):
    """Interleave the channels of a 4-D x from `groups` groups (ShuffleNet): viewing
    the C channels as [groups, C / groups] and transposing it, so that output channel
    j is input channel (j % groups) * (C / groups) + j // groups."""
    check_pixel_options("channel_shuffle", groups, "groups", data_format)
    x = as_tensor(x)
    if x.ndim != 4:
        raise ShapeError(f"channel_shuffle: x must be a 4-D tensor, got shape {list(x.shape)}")
    dims = list(exact_shape(x))
    axis = 1 if data_format == "NCHW" else 3
    if dims[axis] % groups:
        raise ShapeError(f"channel_shuffle: groups ({groups}) must divide the number of "
                         f"channels ({dims[axis]})")
    split = dims[:axis] + [groups, dims[axis] // groups] + dims[axis + 1:]
    order = list(range(5))
    order[axis], order[axis + 1] = axis + 1, axis
    return reshape(transpose(reshape(x, split), order), dims)


def one_hot(x, num_classes: int = -1, name=None):
    """float32 indicator vectors: result x.shape + [num_classes]; num_classes -1
    (Paddle's default) is max(x) + 1. An index outside [0, num_classes) is a
    ValueError (OutOfRangeError), as in Paddle: checked now in eager code, when the
    program runs in compiled code (an `assert`), where it would give a row of
    zeros."""
    x = as_tensor(x)
    if not isinstance(num_classes, Tensor) and num_classes == -1:
        if 0 in exact_shape(x):
            raise ShapeError(f"one_hot: num_classes=-1 takes max(x) + 1, which an empty x "
                             f"(shape {list(x.shape)}) does not have; pass num_classes")
        num_classes = (int(x._value.max()) + 1 if x._value is not None
                       else reduce_max(x) + 1)
    if x._value is None:  # num_classes -1 is max(x) + 1 here: only 0 bounds x
        inside = x >= 0 if isinstance(num_classes, Tensor) else (x >= 0) & (x < num_classes)
        classes = "max(x) + 1" if isinstance(num_classes, Tensor) else num_classes
        apply("assert", [inside.all()], {
            "msg": f"{user_location()}: one_hot: an index is out of range for num_classes="
                   f"{classes} (expected 0 <= index < {classes})", "error": "OutOfRangeError"})
    elif x._value.size and not isinstance(num_classes, Tensor):
        low, high = int(x._value.min()), int(x._value.max())
        if low < 0 or high >= num_classes:
            bad = low if low < 0 else high
            raise OutOfRangeError(f"one_hot: index {bad} is out of range for num_classes="
                                  f"{num_classes} (expected 0 <= index < {num_classes})",
                                  user_location())
    return equal(unsqueeze(x, -1), arange(num_classes).astype(x.dtype)).astype("float32")


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """A mask of shape x.shape + [maxlen] whose entry j is 1 where j < x (x holds
    lengths; float lengths are compared as they are). maxlen None, or negative
    (Paddle's kernel reads -1 so), is max(x) truncated to an int, and 0 for an empty
    x: the maximum of x and 0, which has a value also when a symbolic dim of x turns
    out 0 (a maximum below 0 gives no step either)."""
    x = as_tensor(x)
    if maxlen is None or not isinstance(maxlen, Tensor) and maxlen < 0:
        maxlen = reduce_max(concat([reshape(x, [-1]), full([1], 0, x.dtype)])).astype("int64")
    steps = arange(maxlen).astype(x.dtype)
    return (steps < unsqueeze(x, -1)).astype(dtype)


def cosine_similarity(x1, x2, axis: int = 1, eps: float = 1e-8):
    """The cosine of the angle between x1 and x2 along `axis` (after broadcasting),
    as Paddle computes it: sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2)), the
    product of the squared norms clamped rather than each norm, so a zero vector
    gives 0."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    product = x1 * x2
    squares1 = reduce_sum(expand_as(x1 * x1, product), axis)
    squares2 = reduce_sum(expand_as(x2 * x2, product), axis)
    return reduce_sum(product, axis) / sqrt(clip(squares1 * squares2, min=eps * eps))


def pairwise_distance(x, y, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                      name=None):
    """The p-norm of x - y + epsilon along the last axis (after broadcasting), as
    Paddle computes it: epsilon is added to each difference (not to the norm), and
    the gradient at a zero difference is 0."""
    diff = as_tensor(x) - y
    if epsilon != 0.0:
        diff = diff + float(epsilon)
    return vector_norm(diff, p, -1, keepdim)


def normalize(x, p: float = 2, axis: int = 1, epsilon: float = 1e-12, out=None, name=None):
    """x / max(||x||_p, epsilon) along `axis`; `out` takes the result. The clamp is
    applied before the root, max(s, eps**p) ** (1/p), which is the same value but
    keeps the gradient of an all-zero slice finite."""
    result = _normalized(as_tensor(x), p, axis, epsilon)
    return result if out is None else assign(result, out)


def _normalized(x: Tensor, p: float, axis: int, epsilon: float) -> Tensor:
    if p == 2:
        total = reduce_sum(x * x, axis, keepdim=True)
        return x / sqrt(maximum(total, epsilon ** 2))
    if p in (0, float("inf"), float("-inf")):  # no root of a sum: the norm itself, clamped
        return x / maximum(vector_norm(x, p, axis, keepdim=True), epsilon)
    total = reduce_sum(power(absolute(x), float(p)), axis, keepdim=True)
    return x / power(maximum(total, float(epsilon) ** p), 1.0 / p)


def _pad_pairs(ndim: int, pad: list[int], data_format: str | None,
               pad_from_left_axis: bool) -> tuple:
    """Paddle's reading of `pad` as one (low, high) pair per axis.

    A list of 2 * (ndim - 2) numbers pads the spatial axes, innermost first:
    ``[left, right, top, bottom, ...]``. Any other even length pads whole axes:
    2 * ndim numbers in axis order (pad_from_left_axis), else pairs from the last
    axis backwards."""
    if len(pad) % 2:
        raise ValueError(f"pad must have an even number of entries, got {pad}")
    pairs = [(0, 0)] * ndim
    given = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
    if ndim > 2 and len(pad) == 2 * (ndim - 2):
        channels_last = data_format is not None and data_format.upper().endswith("C")
        spatial = list(range(1, ndim - 1)) if channels_last else list(range(2, ndim))
        for axis, pair in zip(reversed(spatial), given):
            pairs[axis] = pair
    elif len(pad) == 2 * ndim and pad_from_left_axis:
        pairs = given
    elif len(pad) <= 2 * ndim:
        for axis, pair in zip(range(ndim - 1, -1, -1), given):
            pairs[axis] = pair
    else:
        raise ValueError(f"pad has {len(pad)} entries, more than 2 per axis of a rank-{ndim} "
                         "tensor")
    return tuple(pairs)


def pad(x, pad, mode: str = "constant", value: float = 0.0, data_format=None,
        pad_from_left_axis: bool = True, name=None):
    """Pad x with `value` (mode "constant"), or by mirroring without the edge
    ("reflect"), repeating the edge ("replicate") or wrapping around ("circular");
    see `_pad_pairs` for `pad`. A negative amount crops that many cells instead, after
    the other side is padded from the whole input (so a circular pad still wraps the
    cropped cells in), as Paddle's spatial pads do."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode should be one of constant, reflect, replicate, "
                         f"circular, got {mode!r}")
    x = as_tensor(x)
    pad = [int(v) for v in (pad.tolist() if isinstance(pad, Tensor) else pad)]
    pairs = _pad_pairs(x.ndim, pad, data_format, pad_from_left_axis)
    grown = tuple((max(low, 0), max(high, 0)) for low, high in pairs)
    if mode != "constant":
        from .resample import pad_by_gather
        out = pad_by_gather(x, grown, mode)
    else:
        out = apply("pad", (x,), {"pads": grown, "value": float(value)})
    return _crop(out, pairs)


def _crop(x, pairs):
    """x without the cells the negative entries of the (low, high) `pairs` remove."""
    for axis, (low, high) in enumerate(pairs):
        if low < 0 or high < 0:
            x = slice_(x, [axis], [max(-low, 0)], [high if high < 0 else exact_shape(x)[axis]])
    return x


def zeropad2d(x, padding, data_format: str = "NCHW", name=None):
    """`pad` of a 4-D tensor's spatial dims with zeros, by [left, right, top, bottom]."""
    return pad(x, padding, "constant", 0.0, data_format)

"""`summary`: Paddle's ``paddle.summary``, a per-layer table of a model.

The model runs once, in eval mode and without gradients, on random inputs of the
given sizes; a forward post-hook on every layer records its input and output shapes
and its own parameter count. The table and the totals follow Paddle's format: rows
are named ``<Class>-<k>`` after the layer's full name (``linear_3`` is ``Linear-4``),
containers (Sequential, LayerList) get no row of their own, and parameters that are
not trainable (BatchNorm's running statistics) count as non-trainable.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..dispatch import no_grad
from ..tensor.random import rand
from .layer.container import LayerList, Sequential
from .layer.layers import Layer, forcing_eval


def summary(net: Layer, input_size=None, dtypes=None, input=None) -> dict:
    """Print `net`'s layer table and return ``{'total_params': n,
    'trainable_params': m}``, counts of type np.int64 (the int 0 when there are no
    such parameters), as Paddle's.

    `input_size` is one shape (tuple of ints; the batch dim may be None or -1, read
    as 1), an InputSpec, or a list of those for several inputs; `dtypes` the input
    dtype(s) (default float32). Alternatively pass the `input` tensor(s) themselves."""
    if input_size is None:
        if input is None:
            raise ValueError("summary needs input_size or input")
        input_size = _sizes_of(input)
    sizes = _checked_sizes(_as_sizes(input_size))
    with forcing_eval():  # eval mode in this thread, no layer's own flag changed
        rows = _run_with_hooks(net, sizes, dtypes, input)
    text, totals = _format(rows, sizes)
    print(text)
    return totals


def _sizes_of(input):
    if isinstance(input, list | tuple):
        return [tuple(t.shape) for t in input]
    if isinstance(input, dict):
        return [tuple(t.shape) for t in input.values()]
    return tuple(input.shape)


def _as_sizes(input_size):
    """A shape tuple, or a list of shape tuples, from Paddle's accepted forms."""
    if isinstance(input_size, int):
        return (input_size,)
    if hasattr(input_size, "shape") and not isinstance(input_size, list | tuple):
        return tuple(input_size.shape)
    if isinstance(input_size, list):
        return [(item,) if isinstance(item, int) else _as_sizes(item) for item in input_size]
    return tuple(input_size)


def _is_shape(size) -> bool:
    return all(not isinstance(d, list | tuple) for d in size)


def _checked_sizes(size):
    if not _is_shape(size):
        return [_checked_sizes(s) for s in size]
    unknown = [d for d in size if d is None or d == -1]
    if len(unknown) > 1:
        raise ValueError("Option input_size only the dim of batch_size can be None or -1.")
    for d in size:
        if isinstance(d, numbers.Number) and d != -1 and d <= 0:
            raise ValueError(f"Expected element in input size greater than zero, but got {d}")
    return tuple(1 if d is None or d == -1 else d for d in size)


def _random_inputs(size, dtypes) -> list:
    if _is_shape(size):
        dtype = dtypes[0] if isinstance(dtypes, list | tuple) else dtypes
        return [rand(list(size)).astype(dtype or "float32")]
    if not isinstance(dtypes, list | tuple):
        dtypes = [dtypes] * len(size)
    return [t for s, d in zip(size, dtypes) for t in _random_inputs(s, d)]


def _shape_of(value):
    if isinstance(value, list | tuple):
        return [_shape_of(v) for v in value]
    return list(value.shape) if hasattr(value, "shape") else []


def _run_with_hooks(net: Layer, sizes, dtypes, input) -> dict:
    rows: dict = {}

    def record(layer, inputs, outputs):
        try:
            index = int(layer._full_name.split("_")[-1])
        except ValueError:
            index = len(rows)
        params = [p for p in layer._parameters.values() if p is not None]
        rows[f"{type(layer).__name__}-{index + 1}"] = {
            "input_shape": _shape_of(inputs),
            "output_shape": _shape_of(outputs),
            "nb_params": sum(_param_count(p) for p in params),
            "trainable_params": sum(_param_count(p) for p in params if p.trainable),
        }

    has_sublayers = bool(net.sublayers())
    handles = [layer.register_forward_post_hook(record)
               for layer in net.sublayers(include_self=True)
               if not isinstance(layer, Sequential | LayerList)
               and (layer is not net or not has_sublayers)]
    try:
        with no_grad():
            if input is not None:
                net(input)
            else:
                net(*_random_inputs(sizes, dtypes))
    finally:
        for handle in handles:
            handle.remove()
    return rows


def _param_count(param) -> np.int64:
    """A parameter's element count as NumPy's int64, as Paddle counts them (with
    np.prod), so that the totals `summary` returns have Paddle's types: np.int64, or
    the int 0 where nothing was counted."""
    return np.int64(math.prod(param.shape))


def _numel(shape) -> int:
    if shape and isinstance(shape[0], list):
        return sum(_numel(s) for s in shape)
    return math.prod(shape)


def _input_megabytes(size) -> float:
    if _is_shape(size):
        return abs(math.prod(size) * 4.0 / 1024 ** 2)
    return sum(_input_megabytes(s) for s in size)


def _format(rows: dict, sizes) -> tuple[str, dict]:
    widths = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for name, row in rows.items():
        widths["layer"] = max(widths["layer"], len(name))
        widths["input"] = max(widths["input"], len(str(row["input_shape"])))
        widths["output"] = max(widths["output"], len(str(row["output_shape"])))
        widths["params"] = max(widths["params"], len(str(row["nb_params"])))
    table_width = max(75, sum(widths.values()) + 5)

    def line(*cells) -> str:
        return " ".join(f"{cell:^{width}}" for cell, width in zip(cells, widths.values()))

    out = ["-" * table_width, line("Layer (type)", "Input Shape", "Output Shape", "Param #"),
           "=" * table_width]
    total = trainable = outputs = 0
    for name, row in rows.items():
        out.append(line(name, str(row["input_shape"]), str(row["output_shape"]),
                        f"{row['nb_params']:,}"))
        total += row["nb_params"]
        trainable += row["trainable_params"]
        outputs += _numel(row["output_shape"])
    input_mb = _input_megabytes(sizes)
    output_mb = abs(2.0 * outputs * 4.0 / 1024 ** 2)  # x2 for gradients, as Paddle
    params_mb = abs(total * 4.0 / 1024 ** 2)
    out += ["=" * table_width,
            f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}",
            "-" * table_width,
            f"Input size (MB): {input_mb:0.2f}",
            f"Forward/backward pass size (MB): {output_mb:0.2f}",
            f"Params size (MB): {params_mb:0.2f}",
            f"Estimated Total Size (MB): {params_mb + output_mb + input_mb:0.2f}",
            "-" * table_width]
    return "\n".join(out) + "\n", {"total_params": total, "trainable_params": trainable}

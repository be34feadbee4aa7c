"""Turning user values into Tensors and deciding the dtype of mixed operations.

The rules are Paddle 3's (checked against PaddlePaddle 3.3):
- A Python scalar takes the dtype of the tensor it meets (``x * 2``), except that a
  float scalar with an integer or bool tensor gives float32, and an int scalar with
  a bool tensor int64.
- A 0-d tensor meets a tensor of higher rank the same way, as a scalar: the other
  tensor's dtype wins unless the 0-d tensor is of a higher kind (bool < int <
  float), then its own dtype does (``int32[2] + float64[]`` is float64).
- Two 0-d tensors meet at the wider dtype: bool < uint8 < int8 < int16 < int32 < int64
  < float16 < bfloat16 < float32 < float64.
- Two tensors of rank >= 1 and different dtypes meet at the wider one only if both
  are floats; any other mix (``int64[2] + float32[2]``, ``int32 + int64``) is a
  TypeError, as in Paddle: cast one of them explicitly.
"""
from __future__ import annotations

import numbers
from contextvars import ContextVar

import numpy as np

from ..dispatch import apply
from ..ir import dtypes
from ..ir.types import Dim, TensorType, dim_add, dim_div, dim_mul, dim_sub, numel
from .tensor import Tensor

_RANK = {d: i for i, d in enumerate((
    dtypes.bool_, dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
    dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64))}
_HALF_FLOATS = {dtypes.float16, dtypes.bfloat16}
_KIND_RANK = {"bool": 0, "int": 1, "float": 2, "bfloat16": 2}
_NUMBER_OF_KIND = {"bool": True, "int": 0, "float": 0.0, "bfloat16": 0.0}  # one of each kind
# the dtype compiled code computes a Python number of each kind in: Python's own
# (an int is an int64, a float a double)
_PYTHON_DTYPES = {"bool": dtypes.bool_, "int": dtypes.int64, "float": dtypes.float64,
                  "bfloat16": dtypes.float64}
_SUPPORTED = {d.np for d in dtypes.ALL}


_DEFAULT_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bfloat16)
_default_dtype: ContextVar[dtypes.DType] = ContextVar("irflow.default_dtype",
                                                     default=dtypes.float32)


def set_default_dtype(d) -> None:
    """Make `d` (float16, float32, float64 or bfloat16, as a name or a dtype) the
    float dtype that tensors get when nothing else decides theirs: made from Python
    floats (``to_tensor(1.5)``), by `zeros`, `ones`, `full`, `eye`, `linspace`, a float
    `arange`, and the random functions (`randn`, `rand`, `uniform`, `normal`).
    Promotion does not read it: an int tensor times 1.5 stays float32, as in Paddle.

    Unlike Paddle's, the setting is per thread (a context variable, as irflow's grad
    mode is): a thread or asyncio task that sets it changes what its own code
    creates, never what code running at the same time in another thread creates. A
    new thread starts with float32; to carry the caller's setting into one, run its
    target in ``contextvars.copy_context()``. A compiled program keeps the dtypes it
    was traced with."""
    _default_dtype.set(_float_default(d))


def _float_default(d) -> dtypes.DType:
    try:
        found = None if d is None else dtypes.dtype(d)  # np.dtype(None) is float64
    except TypeError:
        found = None
    if found is None or found not in _DEFAULT_DTYPES:  # a DType equals None (float64)
        raise TypeError(f"set_default_dtype takes float16, float32, float64 or bfloat16, as "
                        f"Paddle's, got {d!r}")
    return found


def get_default_dtype() -> str:
    """The name of the current thread's default float dtype (see `set_default_dtype`),
    such as ``'float32'``, as Paddle's."""
    return _default_dtype.get().name


def default_float_dtype() -> dtypes.DType:
    """The dtype of floats that nothing else types (see `set_default_dtype`): every
    creation function reads it through here."""
    return _default_dtype.get()


def default_dtype_of(data) -> dtypes.DType:
    """Paddle's dtype for Python data: floats the default float dtype (float32 unless
    `set_default_dtype` says otherwise), ints int64, bools bool."""
    array = np.asarray(data)
    if array.dtype.kind == "b":
        return dtypes.bool_
    if array.dtype.kind in "iu":
        return dtypes.int64
    return default_float_dtype()


def python_number_dtype(d: dtypes.DType) -> dtypes.DType:
    """The dtype compiled code holds a Python number taken from a tensor of dtype `d`
    in (``t.item()``, ``float(t)``): Python's own, so that arithmetic on it rounds
    as eager Python does (``t.item() * 0.1`` of a float32 `t` is a double)."""
    return _PYTHON_DTYPES[d.kind]


def python_number_of(t: Tensor):
    """A Python number of the kind the stand-in `t` (`Tensor.python_number`) stands
    for: what eager code has in its place, to make a dtype from as Paddle would."""
    return _NUMBER_OF_KIND[t.dtype.kind]


def to_array(data, dtype=None) -> np.ndarray:
    """A NumPy array of `data` with Paddle's dtype defaults (NumPy arrays keep theirs)."""
    if isinstance(data, Tensor):
        array = data._concrete("to_tensor()")
    elif isinstance(data, np.ndarray | np.generic):
        array = _not_complex(np.asarray(data))
        if array.dtype not in _SUPPORTED:  # uint32, uint64, float128...
            array = array.astype(np.int64 if array.dtype.kind in "iu" else np.float32)
    elif isinstance(data, list | tuple) and any(isinstance(v, Tensor) for v in data):
        array, found = _tensor_list_array(data)
        dtype = found if dtype is None else dtype
    else:
        if isinstance(data, list | tuple) and holds_tensors(data):
            data = _nested_values(data)
        array = _not_complex(np.asarray(data))
        if dtype is None:
            dtype = default_dtype_of(array)
    if dtype is not None:
        dtype = dtypes.dtype(dtype)
        if dtype is dtypes.bfloat16 and array.dtype != dtype.np:  # values to bits
            return dtypes.astype(array, dtype)
        array = array.astype(dtype.np, copy=False)
    return array


def _not_complex(array: np.ndarray) -> np.ndarray:
    """`array`, unless it is complex: cast, it would keep its real parts alone."""
    if array.dtype.kind == "c":
        raise TypeError(f"to_tensor: irflow has no complex dtypes, got {array.dtype} data "
                        "(Paddle makes a complex64 or complex128 tensor); pass the real and "
                        "imaginary parts as two float tensors")
    return array


def _flat(data):
    for v in data:
        if isinstance(v, list | tuple):
            yield from _flat(v)
        else:
            yield v


def holds_tensors(data) -> bool:
    """Whether the (nested) list or tuple `data` holds a Tensor."""
    return any(isinstance(v, Tensor) for v in _flat(data))


def _nested_values(data):
    """`data` with each tensor in it as its array (of any shape, a bfloat16 one's as
    float32 values), for NumPy to stack."""
    if isinstance(data, list | tuple):
        return [_nested_values(v) for v in data]
    return data._numbers("to_tensor()") if isinstance(data, Tensor) else data


def _tensor_list_array(data) -> tuple[np.ndarray, dtypes.DType]:
    """The array and dtype Paddle's `to_tensor` makes of a list holding a tensor at its
    top level: NumPy stacks the items, each tensor keeping its shape, and the dtype
    is NumPy's, not the default float one (``[f32[], 2.5]`` is float64, ``[i32[1],
    i32[1]]`` int32 of shape [2, 1]). A list of bfloat16 tensors alone stays bfloat16."""
    array = _not_complex(np.asarray(_nested_values(data)))
    if all(isinstance(v, Tensor) and v.dtype is dtypes.bfloat16 for v in data):
        return array, dtypes.bfloat16
    return array, dtypes.from_numpy(array)


def dims(values) -> tuple:
    """A shape (or a list of axes) from user values: ints, int tensors, or while
    tracing the symbolic sizes ``x.shape`` gives in converted code (which stay symbols,
    such as ``N``, so one program serves every size)."""
    if isinstance(values, Tensor) and values._value is not None:
        return tuple(int(v) for v in values._value.reshape(-1))
    if isinstance(values, Tensor) and values._ir.type.rank == 1:
        return _vector_dims(values)
    if isinstance(values, int) or isinstance(values, Tensor):
        values = (values,)
    return tuple(_dim(v) for v in values)


def _vector_dims(t: Tensor) -> tuple:
    """The dims of a traced 1-D tensor of sizes, such as ``paddle.shape(x)`` gives:
    each element's dim, when the tensor stacks sizes the program knows."""
    op = getattr(t._ir, "op", None)  # a block argument has none
    found = [_value_dim(v) for v in op.operands] if op is not None and op.name == "stack" \
        else [None]
    if None in found:
        raise _computed_size("a shape given as a tensor", "paddle.shape(x)", t._ir)
    return tuple(found)


def _computed_size(what: str, symbolic: str, value=None):
    """The error for a shape that the program computes while tracing: from tensor
    values, or from symbolic sizes by more than +, - and * (``x.shape[0] // 2``),
    which has no polynomial of the symbols for a type to hold."""
    from ..dispatch import user_location
    from ..errors import ConversionError, SymbolicShapeError
    if value is not None and _from_sizes(value):
        return SymbolicShapeError(
            f"{what} needs sizes known when the program is compiled, or sizes that are "
            f"sums and products of the symbolic sizes {symbolic} gives; this one divides "
            "or otherwise computes them (such as x.shape[0] // 2), which gives no such "
            "size. Give that axis as -1, or give the input_spec static sizes for the axes "
            "it is computed from", user_location())
    return ConversionError(f"{what} needs sizes known when the program is compiled, or "
                           f"symbolic sizes such as {symbolic} gives; this one is computed "
                           "from tensor values", user_location())


def _from_sizes(v) -> bool:
    """Whether the traced value `v` is computed from constants and tensor sizes alone
    (``numel``), reading no tensor's values (each value visited once: the values a
    shape comes from may be a whole model's)."""
    pending, seen = [v], set()
    while pending:
        op = getattr(pending.pop(), "op", None)
        if op is None or not (op.operands or op.name == "const"):  # an input's values
            return False
        if op.name in ("const", "numel") or id(op) in seen:
            continue
        seen.add(id(op))
        pending.extend(op.operands)
    return True


def _dim(v):
    if isinstance(v, str):  # a symbolic dim, such as exact_shape gives
        return v
    if not isinstance(v, Tensor):
        return int(v)
    if v._value is not None:
        return int(v.item())
    symbol = traced_dim(v)
    if symbol is None:
        raise _computed_size("a shape", "x.shape", v._ir)
    return symbol


_DIM_ARITHMETIC = {"add": dim_add, "sub": dim_sub, "mul": dim_mul}


def traced_dim(t: Tensor) -> Dim | None:
    """The dim a traced integer scalar computes when it is a polynomial of the
    program's symbolic dims (``x.shape[1] - 1`` in converted code is ``S1-1``), or
    None when it depends on tensor values."""
    return _value_dim(t._ir)


def _value_dim(v) -> Dim | None:
    t, op = v.type, getattr(v, "op", None)
    if op is None or not isinstance(t, TensorType) or not t.dtype.is_int or numel(t.shape) != 1:
        return None
    if op.name == "const":
        return int(op.attrs["value"].reshape(()))
    if op.name == "numel":
        x, axes = op.operands[0].type, op.attrs["axis"]
        return numel(x.shape if axes is None else tuple(x.shape[a] for a in axes))
    if op.name in ("cast", "reshape", "squeeze", "broadcast_to"):  # paddle.full([1], k)
        return _value_dim(op.operands[0])
    if op.name == "slice":  # one element of a stack of sizes: paddle.shape(x)[i]
        source = op.operands[0]
        if getattr(source, "op", None) is not None and source.op.name == "stack" and \
                op.attrs["axes"] == (0,) and op.attrs["steps"] == (1,):
            return _value_dim(source.op.operands[op.attrs["starts"][0]])
    if op.name == "neg":
        a = _value_dim(op.operands[0])
        return None if a is None else dim_sub(0, a)
    if op.name in _DIM_ARITHMETIC:
        a, b = (_value_dim(u) for u in op.operands)
        return None if a is None or b is None else _DIM_ARITHMETIC[op.name](a, b)
    if op.name == "div":
        a, b = (_value_dim(u) for u in op.operands)
        return None if a is None or b is None else dim_div(a, b)
    return None


def cast(x: Tensor, dtype) -> Tensor:
    dtype = dtypes.dtype(dtype)
    return x if x.dtype is dtype else apply("cast", (x,), {"dtype": dtype})


def as_tensor(value, like: Tensor | None = None) -> Tensor:
    """`value` as a Tensor; Python scalars take `like`'s dtype where that keeps them."""
    if isinstance(value, Tensor):
        return value
    if like is not None and isinstance(value, numbers.Number):
        dtype = scalar_dtype(like.dtype, value)
        if dtype is dtypes.bfloat16:  # the value's bits, not the value as bits
            return Tensor._from_array(dtypes.astype(np.asarray(float(value)), dtype))
        if dtype.is_int and isinstance(value, numbers.Integral):
            value = _wrapped_int(value, dtype)
        return Tensor._from_array(np.asarray(value, dtype=dtype.np))
    return Tensor._from_array(to_array(value))


def _wrapped_int(value: int, dtype: dtypes.DType) -> int:
    """The Python int `value` as an integer of `dtype` holds it, wrapping modulo 2**bits
    when it is out of range, as Paddle's kernels do (``uint8 - 1`` adds 255, an int8
    tensor + 200 adds -56) rather than NumPy's OverflowError. (Paddle passes scalars
    beyond int32 through a float, which saturates or rounds them; irflow wraps them
    exactly.)"""
    bits = 8 * dtype.np.itemsize
    wrapped = int(value) % (1 << bits)
    signed = np.issubdtype(dtype.np, np.signedinteger)
    return wrapped - (1 << bits) if signed and wrapped >= 1 << (bits - 1) else wrapped


def scalar_dtype(tensor_dtype: dtypes.DType, scalar) -> dtypes.DType:
    if isinstance(scalar, bool):
        return tensor_dtype
    if isinstance(scalar, float) and not _is_floating(tensor_dtype):
        return dtypes.float32
    if isinstance(scalar, numbers.Integral) and tensor_dtype.is_bool:
        return dtypes.int64
    return tensor_dtype


def promote(x, y) -> tuple[Tensor, Tensor]:
    """Two operands of a binary op as Tensors of one dtype (Paddle's rules, above)."""
    if type(x) is Tensor and type(y) is Tensor and x._value is not None and \
            y._value is not None and x._value.dtype == y._value.dtype:
        return x, y  # the common case, kept cheap for eager code
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = as_tensor(x)
    if not isinstance(x, Tensor):
        x = _operand(x, y)
    if not isinstance(y, Tensor):
        y = _operand(y, x)
    if x.dtype is not y.dtype:
        common = result_dtype(x, y)
        x, y = cast(x, common), cast(y, common)
    return x, y


def _operand(value, other: Tensor) -> Tensor:
    """The operand `value` (not a Tensor) meeting the tensor `other` as a Tensor. A
    Python number meeting a stand-in for one (`Tensor.python_number`) is a stand-in
    of Python's dtype for it, as two numbers meet in Python (``n * 0.5`` of an int
    `n` is a double)."""
    if not (other.python_number and isinstance(value, numbers.Number)):
        return as_tensor(value, like=other)
    dtype = _PYTHON_DTYPES["bool" if isinstance(value, bool) else
                           "int" if isinstance(value, numbers.Integral) else "float"]
    if dtype.is_int:
        value = _wrapped_int(value, dtype)
    return type(other)._from_array(np.asarray(value, dtype=dtype.np))


def result_dtype(x: Tensor, y: Tensor) -> dtypes.DType:
    """The dtype two tensors of different dtypes meet at. A traced stand-in for a
    Python number (`Tensor.python_number`) meets a tensor as the number would."""
    if x.python_number != y.python_number:
        tensor, number = (y, x) if x.python_number else (x, y)
        return scalar_dtype(tensor.dtype, python_number_of(number))
    dx, dy = x.dtype, y.dtype
    x_scalar, y_scalar = x.ndim == 0, y.ndim == 0
    if x_scalar != y_scalar:
        (tensor, scalar) = (dy, dx) if x_scalar else (dx, dy)
        return tensor if _KIND_RANK[tensor.kind] >= _KIND_RANK[scalar.kind] else scalar
    if {dx, dy} == _HALF_FLOATS:  # neither holds the other's values: Paddle meets at float32
        return dtypes.float32
    if x_scalar or (_is_floating(dx) and _is_floating(dy)):
        return dx if _RANK[dx] >= _RANK[dy] else dy
    raise TypeError(f"operands of dtypes {dx.name} and {dy.name} do not mix (as in Paddle, "
                    "only two float dtypes promote); cast one with .astype()")


def _is_floating(d: dtypes.DType) -> bool:
    """Whether `d` holds floats for promotion: bfloat16 too, which promotes as a float
    (``bf16[2] * f32[2]`` is float32, as in Paddle) though irflow's ops do not
    compute in it."""
    return d.is_float or d is dtypes.bfloat16

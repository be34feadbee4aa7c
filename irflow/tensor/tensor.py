"""`Tensor`: an n-dimensional array with Paddle's dynamic-graph behaviour.

An eager Tensor holds a NumPy array (its value is computed when the op runs) and,
if an op that made it has an input requiring a gradient, the dynamic-graph `Node`
that `backward()` differentiates. While the frontend traces a Layer into IR, a Tensor
may instead stand for an IR value: then `_value` is None and `_ir` is the value.

Operators and most methods are defined once, as functions in `irflow.tensor.math`,
`.logic`, `.manipulation` and `.search`, and attached to the class in
`irflow.tensor.methods`.
"""
from __future__ import annotations

import functools
from copy import deepcopy

import numpy as np

from ..context import current_tracer
from ..device import CPU, CPUPlace
from ..errors import ArgumentError, IrflowError, ShapeError
from ..ir import dtypes
from ..names import unique_name
from ..ops.formatting import tensor_text


class Size(list):
    """Paddle 3's ``paddle.Size``, what ``Tensor.shape`` returns: a list of ints that
    prints as ``paddle.Size([2, 3])``, equals lists and tuples of the same ints, and
    stays a Size when sliced, added to or repeated."""
    __slots__ = ()

    def __repr__(self) -> str:
        return f"paddle.Size({list.__repr__(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        item = list.__getitem__(self, index)
        return type(self)(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return type(self)([*self, *other])

    def __radd__(self, other):
        return type(self)([*other, *self])

    def __mul__(self, times):
        return type(self)(list.__mul__(self, times))

    __rmul__ = __mul__

    def __eq__(self, other):
        return list.__eq__(self, list(other) if isinstance(other, tuple) else other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        if isinstance(equal, Tensor):
            return ~equal
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


class TensorSize(int):
    """Paddle 3's ``Tensor.size``: the number of elements as an int that, called as
    ``x.size()`` or ``x.size(dim)`` (code written for PyTorch), gives the shape or
    one of its sizes instead."""

    def __new__(cls, shape: list) -> "TensorSize":
        size = super().__new__(cls, int(np.prod(shape, dtype=np.int64)))
        size.shape = Size(shape)
        return size

    def __call__(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]


class RunTimeSize(Size):
    """A traced tensor's shape with sizes a compiled program knows only when it runs
    (traced scalars; the tracer makes these): ``shape == [3, 4]`` is False if a static
    pair differs, else whether every traced pair is equal, a traced bool (a converted
    ``if`` branches on it). A Size of ints keeps list's comparison."""
    __slots__ = ()

    def __eq__(self, other):
        other = list(other) if isinstance(other, tuple) else other
        if not isinstance(other, list):
            return NotImplemented
        if len(self) != len(other):
            return False
        traced = []
        for a, b in zip(self, other):
            if isinstance(a, Tensor) or isinstance(b, Tensor):
                traced.append(a == b)
            elif a != b:
                return False
        return functools.reduce(lambda p, q: p & q, traced) if traced else True


class Tensor:
    # `_hooks` (a leaf's gradient hooks) is set only by register_hook: read it with
    # getattr(t, "_hooks", None), so that making a tensor does not pay for it.
    __slots__ = ("_value", "_ir", "_tracer", "stop_gradient", "_grad", "_node", "_index",
                 "name", "persistable", "_hooks", "__weakref__")
    # True for the frontend's traced stand-in for a Python number (a counter, a float
    # a loop carries): it meets other tensors' dtypes as the number would
    python_number = False

    def __init__(self, value=None, dtype=None, stop_gradient: bool = True, name: str | None = None):
        if dtype is not None and dtypes.dtype(dtype) is dtypes.bfloat16:
            from .convert import to_array
            array = to_array(value, dtype)
        else:
            array = np.array(value, dtype=dtypes.dtype(dtype).np if dtype is not None else None)
        if array.dtype not in _SUPPORTED:
            array = array.astype(dtypes.dtype(_default_dtype_for(array)).np)
        self._init(array)
        self.stop_gradient = stop_gradient
        self.name = name

    def _init(self, array) -> None:
        self._value = array
        self._ir = None
        self._tracer = None
        self.stop_gradient = True
        self._grad = None
        self._node = None
        self._index = 0
        self.name = None
        self.persistable = False

    @classmethod
    def _from_array(cls, array: np.ndarray) -> "Tensor":
        """A stop-gradient Tensor around `array` (no copy, no checks)."""
        t = cls.__new__(cls)
        t._init(array)
        return t

    # -- what the tensor is
    @property
    def shape(self) -> list[int]:
        if self._value is None:
            return self._tracer.shape_of(self)
        return Size(self._value.shape)

    @property
    def dtype(self) -> dtypes.DType:
        if self._value is None:
            return self._ir.type.dtype
        return dtypes.from_numpy(self._value)

    @property
    def ndim(self) -> int:
        return len(self._value.shape) if self._value is not None else self._ir.type.rank

    def dim(self) -> int:
        return self.ndim

    ndimension = dim

    def element_size(self) -> int:
        """The bytes one element takes (2 for float16 and bfloat16, 1 for bool)."""
        return self.dtype.np.itemsize

    def is_contiguous(self) -> bool:
        """True: irflow's tensors are never strided views (a transpose is a copy),
        where Paddle's ``x.T`` is one and answers False."""
        return True

    def contiguous(self) -> "Tensor":
        """The tensor itself, which is contiguous already (see `is_contiguous`)."""
        return self

    @property
    def size(self) -> int:
        """The number of elements: a `TensorSize`, an int that called (``x.size()``)
        gives the shape, as Paddle 3's; a traced scalar when the program computes it."""
        if self._value is not None:
            return TensorSize(self._value.shape)
        n = self._tracer.numel(self)
        return TensorSize(self.shape) if isinstance(n, int) else n

    def numel(self) -> "Tensor":
        """The number of elements as a 0-D int64 tensor, as Paddle's (while tracing, a
        size computed when the program runs; `size` is the Python int)."""
        from .attribute import numel
        return numel(self)

    @property
    def place(self) -> CPUPlace:
        """Where the tensor lives: the CPU (``Place(cpu)``)."""
        return CPU

    def cpu(self) -> "Tensor":
        """The tensor on the CPU: itself, since irflow computes on the CPU."""
        return self

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad(self) -> "Tensor | None":
        tracer = current_tracer()
        if tracer is not None:
            return tracer.grad_of(self)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        self._grad = None if value is None else _as_tensor(value)

    @property
    def T(self) -> "Tensor":
        from .manipulation import transpose
        return transpose(self, list(range(self.ndim))[::-1])

    @property
    def mT(self) -> "Tensor":  # noqa: N802  (Paddle's name)
        """The tensor with its last two dims swapped (each matrix transposed); it needs
        at least 2 dims, as in Paddle."""
        from .manipulation import transpose
        if self.ndim < 2:
            raise ShapeError(f"Tensor.mT needs at least 2 dims, as in Paddle, got "
                             f"{self.ndim}")
        return transpose(self, [*range(self.ndim - 2), self.ndim - 1, self.ndim - 2])

    # -- values
    def _concrete(self, what: str) -> np.ndarray:
        if self._value is None:
            return self._tracer.concrete(self, what)
        tracer = self._tracing_state()
        if tracer is not None:
            return tracer.concrete(self, what)
        return self._value

    def _tracing_state(self):
        """The tracer of the program being traced when this tensor, which holds a value,
        is one of its arguments (a parameter, a buffer): the program reads what the
        tensor holds when it runs, so its value now must not become a constant."""
        tracer = current_tracer()
        if tracer is None or tracer.state_known_when_traced or not tracer.is_state(self):
            return None
        return tracer

    def numpy(self) -> np.ndarray:
        return self._concrete("numpy()").copy()

    def __array__(self, dtype=None, copy=None):
        """A copy, as Paddle's (``np.array(t)`` and ``np.asarray(t)`` are writable
        arrays of their own): the tensor's array is shared with the graph's saved
        values and other tensors, so writing into it would change them silently."""
        array = self._concrete("np.asarray()")
        return array.astype(dtype) if dtype is not None else array.copy()

    def _numbers(self, what: str) -> np.ndarray:
        """The concrete array, a bfloat16 tensor's as its float32 values (its storage
        holds the bits, which item() and float() gave as integers)."""
        array = self._concrete(what)
        return dtypes.from_bfloat16_bits(array) if array.dtype == dtypes.bfloat16.np else array

    def item(self, *index):
        if self._value is None:
            return self._tracer.item(self, index)
        tracer = self._tracing_state()
        if tracer is not None:
            return tracer.item(tracer.detach(self), index)
        array = self._numbers("item()")
        if index:
            return array.item(*index)
        if array.size != 1:
            raise ShapeError(f"item() needs a tensor with one element, this one has shape "
                             f"{list(array.shape)}")
        return array.item()

    def tolist(self):
        return self._concrete("tolist()").tolist()

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def _scalar(self, what: str):
        """The number a 0-d tensor holds, for float() and int(), which Paddle allows
        on 0-d tensors only (int(to_tensor([3.7])) is a TypeError there)."""
        array = self._numbers(what)
        if array.ndim:
            raise TypeError(f"{what} needs a 0-d tensor, as in Paddle; this one has shape "
                            f"{list(array.shape)}: use .item()")
        return array.item()

    def __index__(self) -> int:
        if not self.dtype.is_int:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._value is None:
            return self._tracer.to_bool(self)
        if self._value.size != 1:
            raise IrflowError(f"the truth value of a tensor with shape {self.shape} is "
                              "ambiguous; use paddle.any() or paddle.all()")
        return bool(self._value.item())

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        if self._value is None:
            return self._tracer.iterate(self)
        return (self[i] for i in range(len(self)))

    __hash__ = object.__hash__

    # -- autograd
    def backward(self, grad_tensor=None, retain_graph: bool = False) -> None:
        tracer = current_tracer()
        if tracer is not None:
            return tracer.backward(self, grad_tensor)
        from ..autograd import backward
        backward([self], None if grad_tensor is None else [grad_tensor], retain_graph)

    def gradient(self) -> np.ndarray | None:
        """The gradient as a NumPy array (None before any backward()), as Paddle's
        older ``Tensor.gradient()``."""
        grad = self.grad
        return None if grad is None else grad.numpy()

    def _accumulate_grad(self, g: np.ndarray) -> None:
        """Add `g` to ``.grad``: in place (a Tensor taken from ``.grad`` earlier sees
        the sum), except after `clear_gradient`, where the gradient is a new Tensor,
        as in Paddle, so that one taken after clearing keeps its zeros."""
        if self._grad is None or is_cleared_gradient(self._grad._value):
            self._grad = Tensor._from_array(g)
        else:
            self._grad._value = self._grad._value + g

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Paddle 3: keep a zero-filled gradient (or drop it with set_to_zero=False)."""
        tracer = current_tracer()
        if tracer is not None:
            tracer.clear_grad(self, set_to_zero)
            return
        if self._grad is None:
            return
        if set_to_zero:
            old = self._grad._value
            self._grad._value = cleared_gradient(old.dtype, old.shape)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def retain_grads(self) -> None:
        """Keep in ``.grad`` the gradient each ``backward()`` computes for this
        intermediate tensor (the latest one: an intermediate's is replaced, not
        accumulated, as in Paddle); a leaf keeps its gradient anyway. Eager code only:
        compiled code raises rather than leave ``.grad`` None where eager code fills it."""
        if self.stop_gradient:
            return
        if self._value is None:
            self._refuse_in_compiled_code("retain_grads", "compute its gradient with "
                                                          "paddle.grad(loss, tensor)")
        if self._node is None:
            return

        def keep(grad):
            self._grad = Tensor._from_array(grad._value)
        self.register_hook(keep)

    def register_hook(self, hook) -> "TensorHookRemoveHelper":
        """Call ``hook(grad)`` when backward() computes this tensor's gradient; a
        Tensor it returns replaces the gradient (what a leaf accumulates, or what flows
        on to the ops before an intermediate tensor). Eager code only."""
        if self._value is None:
            self._refuse_in_compiled_code("register_hook", "register it eagerly")
        if self.stop_gradient:
            raise IrflowError("cannot register a hook on a tensor that stops gradients "
                              "(stop_gradient=True)")
        if self._node is None:
            if getattr(self, "_hooks", None) is None:
                self._hooks = {}
            hooks = self._hooks
        else:
            if self._node.hooks is None:
                self._node.hooks = {}
            hooks = self._node.hooks.setdefault(self._index, {})
        return TensorHookRemoveHelper(hooks, hook)

    @staticmethod
    def _refuse_in_compiled_code(method: str, instead: str) -> None:
        """Raise for a gradient `method` that compiled code cannot honour: the program's
        autodiff has no per-tensor gradient callbacks."""
        from ..dispatch import user_location
        from ..errors import ConversionError
        raise ConversionError(f"Tensor.{method} is not supported in compiled code "
                              f"(irflow.compile, to_static); {instead} instead",
                              user_location())

    def detach(self) -> "Tensor":
        """A tensor of this one's value that stops gradients and, for a leaf (a
        parameter, a buffer, a tensor made without recording the graph), shares its
        storage, as Paddle's: a change in place of either is a change of both
        (``p.detach().add_(y)`` changes p, an optimizer's step on p shows in its
        detached tensor; see `SharedTensor`). An intermediate of the dynamic graph
        gives a tensor of its value alone (Paddle's would share: a change of it in
        place does not reach the intermediate). While a program is traced it is the program's value, never
        the array this tensor holds now: a parameter or buffer detached in compiled
        code reads what it holds when the program runs (after a ``set_value`` earlier
        in the same call, or an optimizer's step between calls), not a constant of its
        value at tracing; a change of it in place changes the tensor detached
        (`TracedSharedTensor`)."""
        tracer = self._tracer if self._value is None else current_tracer()
        if tracer is not None:
            detached = tracer.detach(self)
            if detached._value is None:
                return TracedSharedTensor.of(self, detached)
        if self._node is not None:
            # an intermediate of the dynamic graph shares nothing: sharing would keep
            # its graph (every activation saved for backward) alive with the detached
            # tensor, which code keeping ``loss.detach()`` for its log holds all run
            # (20 steps of a 512 x 1000 layer kept 164 MB)
            return Tensor._from_array(self._value)
        return SharedTensor.of(self)

    @property
    def data(self) -> "Tensor":
        """Paddle's ``x.data``: `detach()`, a tensor that stops gradients and shares
        the storage of a leaf x, so that ``p.data.clamp_(-c, c)``, ``p.data.mul_(s)``
        or ``p.data.copy_(q)`` change p, as weight clipping and EMA code expect."""
        return self.detach()

    @data.setter
    def data(self, value) -> None:
        """``x.data = t``: x takes t's value, shape and dtype too, and stays what it was
        (a Parameter keeps its name, gradient and trainability), as in Paddle. Paddle's
        x then shares t's storage; irflow's does not, so t (or the tensor whose
        ``.data`` or ``detach()`` t is) may not be another Parameter, which an
        optimizer goes on changing in place: Paddle ties the two (x changes with it),
        which irflow would silently not."""
        if not isinstance(value, Tensor):
            raise ArgumentError(f"Tensor.data takes a Tensor, as in Paddle, got "
                                f"{type(value).__name__} (convert it with paddle.to_tensor)")
        source = getattr(value, "_base", value)
        if isinstance(source, Parameter) and source is not self:
            raise IrflowError(f"x.data = t where t is (the .data or detach() of) parameter "
                              f"{source.name or ''}: in Paddle x and the parameter then "
                              "share storage, which irflow does not support; copy the "
                              "value with x.set_value(t), or tie the parameters by "
                              "assigning the same Parameter to both layers")
        if self._value is None or current_tracer() is not None:
            self._set_data_in_program(value)
        elif value._value is not self._value:
            self._store(value._value)

    def _set_data_in_program(self, value: "Tensor") -> None:
        """``x.data = t`` while a program is traced: a state update or a traced
        tensor's new value (`set_value`), which keeps x's shape and dtype."""
        from .manipulation import exact_shape
        if value.dtype is not self.dtype or \
                tuple(exact_shape(value)) != tuple(exact_shape(self)):
            from ..dispatch import user_location
            from ..errors import ConversionError
            raise ConversionError(
                f"x.data = t with t of shape {list(exact_shape(value))} and dtype "
                f"{value.dtype.name}, where x has shape {list(exact_shape(self))} and dtype "
                f"{self.dtype.name}: compiled code keeps a tensor's shape and dtype (cast "
                "or reshape t first, or change x eagerly)", user_location())
        self.set_value(value)

    def _store(self, array: np.ndarray) -> None:
        """Take `array` as the value in place, as a change through a tensor sharing
        this one's storage does (`SharedTensor`): a leaf takes it as it is, shape and
        dtype too; an intermediate of the dynamic graph keeps passing gradients on to
        what it was made from (`_take_value_in_graph`), so it keeps its shape."""
        if self._node is None or self.stop_gradient:
            self._value = array
            return
        if array.shape != self._value.shape:
            raise ShapeError(f"a tensor of the dynamic graph (stop_gradient=False, made by "
                             f"an op) keeps its shape {list(self._value.shape)}; a change "
                             f"through its .data or detach() gave shape {list(array.shape)}")
        self._take_value_in_graph(array)

    def detach_(self) -> "Tensor":
        """Make this tensor a leaf that stops gradients, in place, as Paddle's: what is
        computed from it from now on records no graph, and backward() no longer reaches
        what it was computed from through it. Returns the tensor."""
        if self._value is None:
            self._refuse_in_compiled_code("detach_", "use detach()")
        self.stop_gradient, self._node, self._index = True, None, 0
        return self

    def set_value(self, value) -> None:
        """Replace this tensor's value in place (same shape and dtype), as Paddle's.

        Optimizers store every update through here. A Tensor of the same dtype and
        shape is taken without a copy: irflow never mutates an array in place, so the
        two tensors can share it. Anything else is converted and copied."""
        tracer = current_tracer()
        if tracer is not None:
            return tracer.set_value(self, value)
        array = value._value if isinstance(value, Tensor) else None
        if array is None or array.dtype != self._value.dtype or \
                array.shape != self._value.shape:
            array = np.asarray(getattr(value, "_value", value))
            if array.shape != self._value.shape:
                raise IrflowError(f"set_value: shape {list(array.shape)} differs from the "
                                  f"tensor's {self.shape}")
            array = dtypes.astype(array, dtypes.from_numpy(self._value))
        if self._node is not None and not self.stop_gradient:
            self._take_value_in_graph(array)
        else:
            self._value = array

    def _take_value_in_graph(self, array: np.ndarray) -> None:
        """Give this intermediate tensor of the dynamic graph the value `array` while
        gradients still flow through it to what it was made from, as Paddle's
        set_value does. Rebinding `_value` alone would leave ops that read it later
        differentiated at the old value (the graph's), not the one they computed with:
        so it becomes ``self + (array - self)``, recorded, holding `array` exactly."""
        from ..dispatch import apply, enable_grad
        delta = apply("sub", (Tensor._from_array(array), Tensor._from_array(self._value)))
        with enable_grad():
            out = apply("add", (self, delta))
        out._node.outputs[out._index] = array
        self._value, self._node, self._index = array, out._node, out._index

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """A new leaf of this tensor's value, dtype and stop_gradient, as Paddle's: no
        gradient and no graph come with it (a copy of a parameter is a parameter: see
        `Parameter.__deepcopy__`). Its name is this one's with ``_deepcopy_N`` after it,
        as in Paddle."""
        if self._value is None:
            self._refuse_in_compiled_code("__deepcopy__", "use clone()")
        cls = Tensor if isinstance(self, SharedTensor) else type(self)  # shares no more
        copy = cls.__new__(cls)
        memo[id(self)] = copy
        copy._init(self._value)  # arrays are never changed in place: sharing copies
        copy.stop_gradient, copy.persistable = self.stop_gradient, self.persistable
        copy.name = None if self.name is None else self.name + unique_name("_deepcopy")
        return copy

    def __format__(self, spec: str) -> str:
        """``f"{t}"`` and ``f"{t:.3f}"`` as Paddle's: a 0-d tensor formats as its
        number (``f"loss {loss}"`` shows ``loss 0.25``), any other tensor as its text,
        which takes no format spec. While tracing, text the program fills in when it
        prints (see `Tracer.text_of`), the number for a 0-d tensor there too."""
        if spec and self.ndim:
            raise ArgumentError(f"unsupported format string {spec!r} for a Tensor of shape "
                                f"{list(self.shape)}: only a 0-d tensor formats as a "
                                "number, as in Paddle (use t.item())")
        if self._value is None:
            return self._tracer.text_of(self, spec)
        tracer = self._tracing_state()
        if tracer is not None:  # a parameter's text is what it holds when the program runs
            text = format(tracer.detach(self), spec)
            return text if spec or not isinstance(self, Parameter) else \
                "Parameter containing:\n" + text
        if self.ndim == 0:
            return format(self.item(), spec)
        return str(self)

    def __repr__(self) -> str:
        if self._value is None:
            return self._tracer.describe(self)
        return tensor_text(self._value, self.stop_gradient)

    __str__ = __repr__


class TensorHookRemoveHelper:
    """The handle `Tensor.register_hook` returns: `remove()` unregisters the hook."""

    def __init__(self, hooks: dict, hook) -> None:
        self._hooks, self._key = hooks, object()  # a key no other registration has
        hooks[self._key] = hook

    def remove(self) -> bool:
        return self._hooks.pop(self._key, None) is not None


class Parameter(Tensor):
    """A trainable tensor owned by a Layer (``stop_gradient=False`` by default).
    ``trainable`` is ``not stop_gradient``, as in Paddle: setting either freezes or
    unfreezes the parameter (``p.trainable = False`` is how a backbone is frozen)."""

    __slots__ = ("optimize_attr", "regularizer", "need_clip")

    def __init__(self, value, dtype=None, name: str | None = None, trainable: bool = True):
        super().__init__(value, dtype, stop_gradient=not trainable, name=name)
        self.optimize_attr = {"learning_rate": 1.0}
        self.regularizer = None
        self.need_clip = True
        self.persistable = True

    def __deepcopy__(self, memo: dict) -> "Parameter":
        """`Tensor.__deepcopy__` keeping the parameter's settings (learning rate,
        regularizer, clipping) and, for a subclass, its attributes."""
        copy = super().__deepcopy__(memo)
        copy.optimize_attr = deepcopy(self.optimize_attr, memo)
        copy.regularizer = deepcopy(self.regularizer, memo)
        copy.need_clip = self.need_clip
        if hasattr(self, "__dict__"):
            copy.__dict__.update(deepcopy(self.__dict__, memo))
        return copy

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not value

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


class SharedTensor(Tensor):
    """A tensor sharing another's storage, what `Tensor.detach` and ``.data`` give,
    as Paddle's: irflow's tensors hold immutable arrays that a change in place
    replaces (`_value` is rebound), so this one holds no array of its own but reads
    and replaces the base tensor's. A change in place of either is a change of both,
    its shape and dtype included (Paddle's ``x.detach().reshape_(...)`` reshapes x),
    while each keeps its own gradient settings: this one starts as a leaf that stops
    gradients."""
    __slots__ = ("_base",)

    @classmethod
    def of(cls, tensor: Tensor) -> "SharedTensor":
        shared = cls.__new__(cls)
        shared._base = getattr(tensor, "_base", tensor)
        shared._init(shared._base._value)
        return shared

    @property
    def _value(self) -> np.ndarray:
        return self._base._value

    @_value.setter
    def _value(self, array: np.ndarray) -> None:
        if array is not self._base._value:  # storing what it holds changes nothing
            self._base._store(array)


_IR = Tensor._ir  # the slot a traced tensor's IR value is kept in


class TracedSharedTensor(Tensor):
    """`SharedTensor` in traced code: the program's value of the base tensor, whose
    changes in place (a new IR value for this one) are the base's too: a state
    update of a parameter or buffer, or a traced tensor's new value (`set_value`),
    so that ``p.data.clamp_(-c, c)`` in a compiled training step changes p. It reads
    the base's value when it was made: a change of the base in place afterwards
    does not show in it, as it would in Paddle."""
    __slots__ = ("_base",)

    @classmethod
    def of(cls, tensor: Tensor, detached: Tensor) -> "TracedSharedTensor":
        shared = cls._from_array(None)
        shared._ir, shared._tracer = detached._ir, detached._tracer
        shared._base = getattr(tensor, "_base", tensor)
        return shared

    @property
    def _ir(self):
        return _IR.__get__(self)

    @_ir.setter
    def _ir(self, value) -> None:
        base = getattr(self, "_base", None)  # None while it is made
        if base is not None and value is not None and value is not _IR.__get__(self):
            self._change_base(base, self._tracer.wrap(value))
        _IR.__set__(self, value)

    @staticmethod
    def _change_base(base: Tensor, new: Tensor) -> None:
        from ..dispatch import user_location
        from ..errors import ConversionError
        from .manipulation import exact_shape
        if new.dtype is not base.dtype or tuple(exact_shape(new)) != tuple(exact_shape(base)):
            raise ConversionError(
                f"a change in place of a tensor's .data or detach() that makes it shape "
                f"{list(exact_shape(new))} and dtype {new.dtype.name}, where the tensor it "
                f"shares storage with has shape {list(exact_shape(base))} and dtype "
                f"{base.dtype.name}: compiled code keeps a tensor's shape and dtype (work "
                "on a copy, x.clone())", user_location())
        base.set_value(new)


_SUPPORTED = {d.np for d in dtypes.ALL}


def cleared_gradient(dtype, shape) -> np.ndarray:
    """A zero gradient that costs nothing: one zero broadcast to the shape (read-only,
    all strides 0), which the next accumulation replaces instead of adding to (eager
    ``backward()``), and which a compiled program does not read (its trace knows the
    gradient is zero; see `irflow.frontend.tracer.Tracer.grad_of`)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def is_cleared_gradient(array: np.ndarray) -> bool:
    """Whether `array` is all zeros by its layout: one element broadcast (every
    stride 0) that is zero. A check that reads one element, never the whole array."""
    return array.ndim > 0 and not any(array.strides) and not array.item(0)


def _default_dtype_for(array: np.ndarray) -> str:
    """Paddle's choice for data NumPy typed otherwise (e.g. uint32, float128)."""
    if array.dtype.kind == "f":
        return "float32"
    if array.dtype.kind in "iu":
        return "int64"
    raise IrflowError(f"cannot make a tensor from data of dtype {array.dtype}")


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)

"""`ParamAttr`: how a Layer should create one of its parameters (Paddle's
``paddle.ParamAttr``), and `create_parameter`, which does it."""
from __future__ import annotations

from ..context import current_static
from ..ir import dtypes
from ..names import unique_name
from ..tensor.convert import default_float_dtype
from ..tensor.tensor import Parameter
from .initializer import Constant, Initializer, XavierUniform


class ParamAttr:
    """Name, initializer, learning-rate scale, regularizer and trainability of a
    parameter. A Layer argument such as ``weight_attr`` also accepts a name (str), an
    Initializer, or False (no such parameter, e.g. ``bias_attr=False``)."""

    def __init__(self, name: str | None = None, initializer: Initializer | None = None,
                 learning_rate: float = 1.0, regularizer=None, trainable: bool = True,
                 do_model_average: bool = True, need_clip: bool = True):
        if name == "":
            raise ValueError("name of ParamAttr can not be empty str")
        if initializer is not None and not isinstance(initializer, Initializer):
            raise TypeError(f"ParamAttr's initializer must be an Initializer, got "
                            f"{type(initializer).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    @staticmethod
    def _to_attr(arg) -> "ParamAttr | bool":
        """The ParamAttr that `arg` stands for, or False for no parameter."""
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False or isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise TypeError(f"{type(arg).__name__} cannot be used as a ParamAttr")

    def __repr__(self) -> str:
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")


def create_parameter(shape, dtype=None, name: str | None = None, attr=None,
                     is_bias: bool = False, default_initializer: Initializer | None = None,
                     *, prefix: str | None = None) -> Parameter | None:
    """A new Parameter of `shape`, initialized by `attr`'s initializer, else by
    `default_initializer`, else by XavierUniform (weights) or Constant(0) (biases), as
    Paddle. Its name is `attr`'s, else `name`, else ``<prefix>.w_<k>`` (``.b_<k>``
    for biases; the creating Layer's full name is the prefix, else a fresh
    ``create_parameter_<n>``). Returns None when `attr` is False. In static-graph
    mode the current startup program draws its initial value again when it runs,
    and a name the scope already has is that parameter (Paddle's sharing by name:
    ``ParamAttr(name="w")`` twice is one weight). Another program's parameter of
    the name but of another shape is replaced in the scope, as running the new
    startup program replaces it in Paddle's."""
    attr = ParamAttr._to_attr(attr)
    if attr is False:
        return None
    initializer = attr.initializer or default_initializer or (
        Constant(0.0) if is_bias else XavierUniform())
    dtype = dtypes.dtype(dtype or default_float_dtype())
    if attr.name is None and name is None and prefix is None:
        prefix = unique_name("create_parameter")
    name = attr.name or name or unique_name(f"{prefix}.{'b' if is_bias else 'w'}")
    static = current_static()
    shared = static.shared(name) if static is not None else None
    if shared is not None:
        if _fits(shared, shape, dtype):
            static.initialize(shared, initializer)
            return shared
        if static.builds_with(shared):
            raise ValueError(f"create_parameter: the program already has a parameter "
                             f"{name!r} of {shared.dtype.name}{list(shared.shape)}, and "
                             f"parameters of one name are one parameter; this one asks for "
                             f"{dtype.name}{list(shape)}")
    param = Parameter(initializer.array(shape, dtype), name=name, trainable=attr.trainable)
    param.optimize_attr = {"learning_rate": attr.learning_rate}
    param.regularizer = attr.regularizer
    param.need_clip = attr.need_clip
    if static is not None:  # static-graph mode: running the startup program initializes it
        static.initialize(param, initializer)
    return param


def _fits(shared, shape, dtype) -> bool:
    """Whether `shared`, a static-graph variable, can be the parameter asked for."""
    return isinstance(shared, Parameter) and list(shared.shape) == list(shape) \
        and shared.dtype == dtype

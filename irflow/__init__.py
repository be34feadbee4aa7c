"""irflow: Paddle-style dynamic-graph models compiled through an SSA IR.

``import irflow as paddle`` runs code written for PaddlePaddle's dynamic graph (the
part of the API irflow covers); `irflow.compile` turns the same code into IR.
"""
from . import ops as _ops  # noqa: F401  (registers every op)
from . import tensor  # noqa: F401  (first: its API imports dispatch, which imports its Tensor)
from . import codegen, ir, passes
from . import io, jit, linalg, metric, nn, optimizer, regularizer, static, utils
from . import amp, autograd, callbacks, device, distribution, hapi, vision
from .frontend import compile  # noqa: A004  (irflow.compile, by design)
from .autograd import grad
from .codegen.threads import get_num_threads, set_num_threads
from .device import CPUPlace, get_device, is_compiled_with_cuda, set_device
from .dispatch import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .errors import (ConversionError, InputError, IrflowError, LoadError, ParseError,
                     ShapeError, VerificationError)
from .ir.dtypes import DType as dtype
from .ir.dtypes import bool_ as bool  # noqa: A001  (Paddle spells it paddle.bool)
from .ir.dtypes import bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8
from .tensor import *  # noqa: F401,F403  (Paddle's tensor API at top level)
from .tensor.convert import get_default_dtype, set_default_dtype
from .nn.param_attr import ParamAttr, create_parameter
from .hapi import Model
from .nn.summary import summary
from .serialization import load, save
from .static import disable_static, enable_static, in_dynamic_mode
from .tensor import Parameter, Size, Tensor
from .version import __version__

"""``paddle.amp.auto_cast`` and ``paddle.amp.decorate`` as Paddle 3.3.1 runs them on the
CPU: the arguments are checked as Paddle checks them, then ``auto_cast`` warns that it
makes no effect and casts nothing, and ``decorate`` returns what it was given."""
from __future__ import annotations

import contextlib
import warnings

from ..device import CPUPlace
from ..ir.dtypes import DType

__all__ = ["auto_cast", "autocast", "amp_guard", "decorate", "amp_decorate",
           "is_autocast_enabled", "get_autocast_dtype"]

_DTYPES = ("float16", "bfloat16")


def _check_dtype(dtype) -> None:
    """`dtype`, a name or a dtype object, must be float16 or bfloat16."""
    name = dtype.name if isinstance(dtype, DType) else str(dtype).lower()
    if name not in _DTYPES:
        raise ValueError(f"the mixed-precision dtype must be 'float16' or 'bfloat16', "
                         f"got {dtype!r}")


def _check_lists(custom_white_list, custom_black_list) -> None:
    overlap = set(custom_white_list or ()) & set(custom_black_list or ())
    if overlap:
        raise ValueError(f"ops {sorted(overlap)} are in both custom_white_list and "
                         "custom_black_list; put each op in one list")


@contextlib.contextmanager
def amp_guard(enable: bool = True, custom_white_list=None, custom_black_list=None,
              level: str = "O1", dtype="float16", use_promote: bool = True):
    """The context of `auto_cast`: its arguments are checked when it is entered (as
    Paddle's are), and it changes nothing inside."""
    if str(level).upper() not in ("O0", "OD", "O1", "O2"):
        raise ValueError(f"auto_cast's level must be 'O0', 'OD', 'O1' or 'O2', got {level!r}")
    _check_dtype(dtype)
    _check_lists(custom_white_list, custom_black_list)
    if enable:
        warnings.warn(f"auto_cast makes no effect on {CPUPlace()!r}, where irflow runs: "
                      "as in Paddle, mixed precision is enabled on CUDA, XPU and custom "
                      "devices only, so ops compute in their inputs' dtypes",
                      UserWarning, stacklevel=3)
    yield


def auto_cast(enable: bool = True, custom_white_list=None, custom_black_list=None,
              level: str = "O1", dtype="float16", use_promote: bool = True):
    """``with paddle.amp.auto_cast():`` (or as a decorator). On the CPU Paddle computes
    every op in its inputs' dtypes inside it and warns that it makes no effect; so
    does irflow. `level` ('O0', 'OD', 'O1', 'O2', any case), `dtype` ('float16' or
    'bfloat16') and the custom op lists (which must not share an op) are checked when
    the block is entered."""
    return amp_guard(enable, custom_white_list, custom_black_list, level, dtype,
                     use_promote)


def autocast(device_type: str | None, dtype="float16", enabled: bool = True,
             cache_enabled: bool = True):
    """PyTorch's spelling of `auto_cast`, which Paddle accepts (`device_type` and
    `cache_enabled` are ignored, as in Paddle)."""
    return auto_cast(enable=enabled, dtype=dtype)


def is_autocast_enabled(device_type=None) -> bool:
    """Whether ops run in mixed precision here: never on the CPU."""
    return False


def get_autocast_dtype(device_type=None) -> str:
    """The dtype of mixed precision where it is enabled, else Paddle's default,
    'float16': always that on the CPU."""
    return "float16"


def decorate(models, optimizers=None, level: str = "O1", dtype="float16",
             master_weight: bool | None = None, save_dtype: str | None = None,
             master_grad: bool = False, excluded_layers=None):
    """Prepare `models` (and `optimizers`) for mixed precision: on a GPU, level 'O2'
    casts the parameters to `dtype`. On the CPU Paddle leaves them as they are, and
    so does irflow: it returns `models`, or ``(models, optimizers)`` when optimizers
    are given. `level` must be 'O1' or 'O2' and `dtype` 'float16' or 'bfloat16'."""
    if level not in ("O1", "O2"):
        raise ValueError(f"decorate's level must be 'O1' (mixed precision) or 'O2' (pure "
                         f"float16/bfloat16), got {level!r}")
    _check_dtype(dtype)
    return models if optimizers is None else (models, optimizers)


amp_decorate = decorate

"""``paddle.amp``: automatic mixed precision, as Paddle 3.3.1 has it on the CPU.

Paddle enables mixed precision only on CUDA, XPU and custom devices. On the CPU,
where irflow runs, ``auto_cast`` and ``GradScaler`` warn that they make no effect and
then do nothing: every op computes in its inputs' dtypes, the loss is not scaled and
every optimizer step is taken; ``decorate`` returns the models and optimizers
unchanged. So a script written for mixed-precision training runs here and computes
what Paddle computes on a CPU.
"""
from ..device import CPUPlace, set_device
# amp_decorate, amp_guard, autocast and AmpScaler are Paddle's too, outside its __all__
from .auto_cast import (amp_decorate, amp_guard, auto_cast, autocast,  # noqa: F401
                        decorate, get_autocast_dtype, is_autocast_enabled)
from .grad_scaler import AmpScaler, GradScaler  # noqa: F401

__all__ = ["auto_cast", "GradScaler", "decorate", "is_float16_supported",
           "is_bfloat16_supported", "is_autocast_enabled", "get_autocast_dtype",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"]

get_autocast_cpu_dtype = get_autocast_dtype
get_autocast_gpu_dtype = get_autocast_dtype


def _check_cpu(device) -> None:
    """`device` (None for the current one) must be the CPU: irflow has no other, and
    `set_device` raises, naming it, for any other device."""
    if device is not None and not isinstance(device, CPUPlace):
        set_device(device)


def is_float16_supported(device=None) -> bool:
    """Whether `device` (default: the current one) supports float16 mixed precision:
    False for the CPU, as in Paddle."""
    _check_cpu(device)
    return False


def is_bfloat16_supported(device=None) -> bool:
    """Whether `device` (default: the current one) supports bfloat16 mixed precision:
    True for the CPU, as Paddle answers there (its ``auto_cast`` still makes no
    effect on the CPU)."""
    _check_cpu(device)
    return True

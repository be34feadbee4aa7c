"""Devices: Paddle's ``paddle.device`` and ``paddle.set_device``. irflow runs on the
CPU, so ``set_device("cpu")`` is accepted (scripts written for Paddle call it) and
any other device is an error that says so, rather than a silent CPU run."""
from __future__ import annotations

from .ops.formatting import PLACE

__all__ = ["CPUPlace", "set_device", "get_device", "is_compiled_with_cuda",
           "is_compiled_with_rocm", "is_compiled_with_xpu", "get_all_device_type"]


class CPUPlace:
    """The CPU, the one place irflow's tensors live (``Place(cpu)``): a tensor's
    ``place``, answering Paddle's place queries."""

    def __repr__(self) -> str:
        return PLACE

    def is_cpu_place(self) -> bool:
        return True

    def is_gpu_place(self) -> bool:
        return False

    def is_xpu_place(self) -> bool:
        return False

    def is_ipu_place(self) -> bool:
        return False

    def is_custom_place(self) -> bool:
        return False

    def is_cuda_pinned_place(self) -> bool:
        return False

    def is_xpu_pinned_place(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return isinstance(other, CPUPlace) or other == PLACE

    def __hash__(self) -> int:
        return hash(PLACE)


CPU = CPUPlace()  # the place of every tensor


def set_device(device: str) -> CPUPlace:
    """Select the device: only ``"cpu"`` exists in irflow."""
    if not isinstance(device, str):
        raise TypeError(f"set_device takes a device name such as 'cpu', not "
                        f"{type(device).__name__}")
    if device.lower() not in ("cpu", "cpu:0"):
        raise ValueError(f"The device should not be '{device}': irflow runs on the CPU "
                         f"only (use set_device('cpu'))")
    return CPUPlace()


def get_device() -> str:
    return "cpu"


def get_all_device_type() -> list[str]:
    return ["cpu"]


def is_compiled_with_cuda() -> bool:
    return False


def is_compiled_with_rocm() -> bool:
    return False


def is_compiled_with_xpu() -> bool:
    return False

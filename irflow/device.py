"""Paddle's ``paddle.device`` on a CPU-only build: irflow runs on the CPU.

The answers are those of a Paddle built without CUDA: one device type, ``cpu``;
`set_device` accepts it (and says why it refuses a GPU); nothing is stored, since
there is nothing to choose.
"""
from __future__ import annotations


class CPUPlace:
    """The CPU, where every irflow tensor lives (Paddle's ``paddle.CPUPlace()``)."""

    def __eq__(self, other) -> bool:
        return isinstance(other, CPUPlace)

    def __hash__(self) -> int:
        return hash(CPUPlace)

    def __repr__(self) -> str:
        return "Place(cpu)"


def set_device(device: str) -> CPUPlace:
    """Select the device: only ``"cpu"`` (or ``"cpu:0"``) exists."""
    name = str(device).lower()
    if name not in ("cpu", "cpu:0"):
        raise ValueError(f"the device should be 'cpu', got {device!r}: irflow runs on the "
                         "CPU only (is_compiled_with_cuda() is False)")
    return CPUPlace()


def get_device() -> str:
    return "cpu"


def get_all_device_type() -> list[str]:
    return ["cpu"]


def is_compiled_with_cuda() -> bool:
    return False


__all__ = ["CPUPlace", "get_all_device_type", "get_device", "is_compiled_with_cuda",
           "set_device"]

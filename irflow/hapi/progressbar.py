"""The progress display of `paddle.Model`: a bar redrawn in place on a terminal,
plain lines elsewhere (a log file, a pipe, a notebook capture), so logs stay
readable and a terminal shows step/total, the logged values, the time per step and
the ETA."""
from __future__ import annotations

import sys
import time

import numpy as np


def format_value(value) -> str:
    """A logged value as Paddle prints it: a float with 4 decimals when its magnitude
    is above 1e-3, else as %.4e (so an accuracy of 0 reads ``0.0000e+00``); a list
    (the losses) as its elements separated by spaces."""
    if isinstance(value, (list, tuple)):
        return " ".join(format_value(v) for v in value)
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"
    return str(value)


def format_duration(seconds: float) -> str:
    """A time per step as Paddle prints it: whole seconds from 1s (and ``0s`` for no
    time, before the first step), else ``19ms`` or ``899us``."""
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms"
    return f"{seconds * 1e6:.0f}us"


def format_eta(seconds: float) -> str:
    """The time left as Paddle's bar prints it, in whole seconds: ``7s``, ``2:05``
    (above a minute) or ``1:02:05`` (above an hour)."""
    seconds = int(seconds)
    if seconds > 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02}:{seconds % 60:02}"
    if seconds > 60:
        return f"{seconds // 60}:{seconds % 60:02}"
    return f"{seconds}s"


class ProgressBar:
    """Progress over `num` steps (None: unknown). `update(step, values)` redraws the
    bar on a terminal (`file.isatty()`), and on other outputs writes one plain line
    per call; the caller decides how often to call it."""

    def __init__(self, num: int | None = None, width: int = 30, verbose: int = 1,
                 start: bool = True, file=None, name: str = "step") -> None:
        self._num, self._width, self._verbose, self._name = num, width, verbose, name
        self._file = file or sys.stdout
        self._terminal = bool(getattr(self._file, "isatty", lambda: False)())
        self._start = time.perf_counter() if start else None
        self._last_width = 0

    def start(self) -> None:
        self._start = time.perf_counter()

    def update(self, current: int, values=()) -> None:
        now = time.perf_counter()
        if self._start is None:
            self._start = now
        per_step = (now - self._start) / current if current else 0.0
        fields = [f"{k}: {format_value(v)}" for k, v in values]
        count = self._count(current)
        if self._terminal and self._verbose == 1:
            bar = ""
            if self._num:
                done = int(self._width * min(current, self._num) / self._num)
                bar = " [" + "=" * max(done - 1, 0) + (">" if done < self._width else "=") \
                    * (done > 0) + "." * (self._width - done) + "]"
            eta = []
            if self._num and current < self._num:
                eta = [f"ETA: {format_eta(per_step * (self._num - current))}"]
            line = " - ".join([f"{self._name} {count}{bar}", *fields, *eta,
                               f"{format_duration(per_step)}/step"])
            pad = " " * max(0, self._last_width - len(line))
            self._last_width = len(line)
            end = "\n" if self._num and current >= self._num else ""
            self._file.write("\r" + line + pad + end)
        else:
            line = " - ".join([f"{self._name} {count}", *fields,
                               f"{format_duration(per_step)}/step"])
            self._file.write(line + "\n")
        self._file.flush()

    def _count(self, current: int) -> str:
        """``current/num``, `current` right-aligned to the digits of `num` (``step  5/12``),
        or `current` in 3 columns when the total is unknown: Paddle's columns, so that
        the lines of a log align as they do there."""
        if self._num:
            return f"{current:{len(str(self._num))}d}/{self._num}"
        return f"{current:3d}"

    def finish(self) -> None:
        """End a bar whose total was unknown (a terminal line left open)."""
        if self._terminal and self._verbose == 1 and not self._num and self._last_width:
            self._file.write("\n")
            self._file.flush()

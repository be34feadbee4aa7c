"""Whether the calling thread's stack holds the generated code's frames: `stack`.

The GEMM keeps its packed panels on the native stack (up to 160 KiB a call:
`irflow.codegen.llvm.gemm`) and a whole call its intermediates (up to
`irflow.codegen.llvm.whole.STACK_BYTES`). glibc gives a thread 8 MiB, but one made
after ``threading.stack_size(n)`` gets n (32 KiB at least), and such a call there
ran off its stack: SIGSEGV, the process gone. So those calls read ``stack.roomy``
first and, on a thread with less than `ROOMY_BYTES`
(`irflow.codegen.threads`) of stack, take the NumPy path
(or, called directly, raise). It is per thread (a `threading.local`, measured from
pthread's attributes on its first use in each thread): one attribute read a call.

The pool's worker threads (`irflow.codegen.threads`), made with the
``threading.stack_size`` of the moment the pool grows, get no part while that size
is small (`run_parts`); a worker made earlier with a small stack, before the size
was raised again, is not looked at.
"""
from __future__ import annotations

import ctypes
import threading

from ..threads import ROOMY_BYTES


def thread_stack_bytes() -> int | None:
    """The calling thread's stack size, or None where it cannot be asked: for the main
    thread its limit (``RLIMIT_STACK``, up to which it grows; None if unlimited),
    for another glibc's ``pthread_getattr_np`` (which for the main thread reads
    /proc/self/maps: 5 ms of a compile in a process that loaded LLVM)."""
    if threading.current_thread() is threading.main_thread():
        try:
            import resource
            limit = resource.getrlimit(resource.RLIMIT_STACK)[0]
        except (ImportError, OSError, ValueError):
            limit = None
        else:
            return None if limit == resource.RLIM_INFINITY else limit
    try:
        libc = ctypes.CDLL(None)
        getattr_np, getstack = libc.pthread_getattr_np, libc.pthread_attr_getstack
    except (OSError, AttributeError):
        return None
    libc.pthread_self.restype = ctypes.c_ulong
    getattr_np.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
    attr = ctypes.create_string_buffer(256)  # a pthread_attr_t: 56 bytes on x86-64
    if getattr_np(libc.pthread_self(), attr) != 0:
        return None
    try:
        base, size = ctypes.c_void_p(), ctypes.c_size_t()
        if getstack(attr, ctypes.byref(base), ctypes.byref(size)) != 0:
            return None
        return size.value
    finally:
        libc.pthread_attr_destroy(attr)


class _Stack(threading.local):
    """``roomy``: whether this thread's stack has `ROOMY_BYTES` (True where its size
    is unknown: what the code assumed before)."""

    def __init__(self):
        size = thread_stack_bytes()
        self.roomy = size is None or size >= ROOMY_BYTES


stack = _Stack()

"""`Compiler`: turns kernel specs into machine code, once.

Lookups go, in order, through

1. the compiler's in-memory table, keyed by the `KernelSpec` (plain data: equal
   specs are equal kernels). It holds compiled code *weakly*: code stays while a
   kernel uses it, so a kernel is compiled once per process while any program
   uses it, and a dropped program frees its code (memory does not grow across
   thousands of compilations);
2. the on-disk `ObjectCache`, keyed by the spec, irflow's source, the CPU and the
   versions, which skips LLVM entirely;
3. LLVM: generate, verify, optimize at O3 for the host, emit object code.

Each `Code` owns the `Library` (the JIT engine) its machine code lives in.

`default_compiler()` is the one compiler a process shares, made on first use
under a lock. It is the only process-wide state of the backend, and it is there
for the cache: kernels of different programs with equal specs share their code.
Its table is guarded by a lock, so threads may compile at once.
"""
from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from .cache import ObjectCache, default_cache_dir
from .jit import FULL, HostTarget, Library
from .kernel import FUNCTION_NAME, Domain, Kernel, KernelSpec


class Code:
    """Machine code of one kernel function and the library that owns it."""

    __slots__ = ("library", "address", "__weakref__")

    def __init__(self, library: Library):
        self.library = library
        self.address = library.address(FUNCTION_NAME)

    def function(self, n_args: int, keeps_gil: bool = False) -> ctypes.CFUNCTYPE:
        """The kernel function as a ctypes function of `n_args` 64-bit arguments,
        sizes and pointers alike, holding this code. Every argument is declared a
        ``c_void_p``, which ctypes converts an int to in half the time of a
        ``c_int64`` (50 against 110 ns): the same register either way. The call
        releases the GIL unless `keeps_gil`: for code that runs for microseconds,
        whose caller would otherwise wait for the GIL to come back (0.17 µs of a
        2.4 µs batch-1 MLP alone; with another Python thread busy, up to its
        switch interval)."""
        kind = ctypes.PYFUNCTYPE if keeps_gil else ctypes.CFUNCTYPE
        fn = kind(None, *[ctypes.c_void_p] * n_args)(self.address)
        fn.code = self  # the function holds the machine code it calls
        return fn


@dataclass
class Stats:
    """What the compiler did: kernels compiled by LLVM, loaded from disk, reused."""

    compiled: int = 0
    loaded: int = 0
    reused: int = 0


@dataclass
class Compiler:
    """Compiles `KernelSpec`s for the host; `cache_dir` None disables the disk cache."""

    cache_dir: Path | None = field(default_factory=default_cache_dir)
    target: HostTarget = field(default_factory=HostTarget)
    stats: Stats = field(default_factory=Stats)

    def __post_init__(self):
        self._code: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._disk = (ObjectCache(self.cache_dir, self.target.identity)
                      if self.cache_dir is not None else None)

    def kernel(self, spec: KernelSpec, domain: Domain) -> Kernel:
        return Kernel(spec, domain, self.code(spec))

    def code(self, spec) -> Code:
        with self._lock:
            code = self._code.get(spec)
            if code is not None:
                self.stats.reused += 1
                return code
            code = Code(Library(self.target, self._object_code(spec)))
            self._code[spec] = code
            return code

    def llvm_ir(self, spec) -> str:
        """The LLVM IR generated for `spec` (a `KernelSpec`, `FusedSpec` or `GemmSpec`), before
        optimization."""
        return spec.llvm_ir(self.target.has_fma)

    def _object_code(self, spec: KernelSpec) -> bytes:
        key = self._disk.key(spec) if self._disk is not None else None
        if key is not None:
            cached = self._disk.get(key)
            if cached is not None:
                self.stats.loaded += 1
                return cached
        # a spec wanting less than LLVM's full pipeline says so (`GemmSpec.optimization`)
        object_code = self.target.compile(self.llvm_ir(spec), getattr(spec, "optimization", FULL))
        self.stats.compiled += 1
        if key is not None:
            self._disk.put(key, object_code)
        return object_code


_default: Compiler | None = None
_default_lock = threading.Lock()


def default_compiler() -> Compiler:
    """The process's shared compiler (see the module docstring)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Compiler()
        return _default

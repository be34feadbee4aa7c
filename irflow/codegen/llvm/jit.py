"""The host target and the objects that own JIT engines.

`HostTarget` is the LLVM target machine of the CPU this process runs on (its name and
every feature it has, so AVX-512 hosts get 512-bit vectors: LLVM's preference for
256-bit vectors on most AVX-512 CPUs is turned off), at opt level 3, with the
new pass manager's default ``O3`` pipeline (loop and SLP vectorization on). It turns
LLVM IR text into object code: parse, **verify**, optimize, emit. Floating-point
math is never relaxed: no fast-math flags are set anywhere, so NaN and Inf propagate
as in NumPy.

`Library` owns one MCJIT engine into which one object file was loaded, and keeps it
alive as long as anything holds the library (kernels hold theirs). There is no
global engine: when the last kernel of a library goes, the engine and its code are
freed, so compiling a thousand kernels one after the other does not grow memory.
Loading object code rather than IR is what lets the on-disk cache skip LLVM's
optimizer entirely in a second process.

`llvm.initialize()` is never called: llvmlite 0.50 initializes LLVM itself and
raises there; only the native target and its assembly printer are initialized.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property

import llvmlite
import llvmlite.binding as llvm

from ...errors import IrflowError

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()


@dataclass(frozen=True)
class Optimization:
    """How far LLVM optimizes a module: the pipeline's level (at most the target's),
    its vectorizers (loop and SLP, with interleaving), its loop unroller. A kernel
    spec says which it wants (its ``optimization``; `FULL` if it has none)."""

    level: int = 3
    vectorize: bool = True
    unroll: bool = True


FULL = Optimization()
# For kernels whose every call is small (static sizes below `fused.MIN_ELEMENTS`):
# such a call takes microseconds, most of them spent fetching its code, which the
# large products running between its calls evict from the caches; so less code runs
# faster there, and it compiles in a fraction of the time
SMALL = Optimization(level=1, vectorize=False, unroll=False)


class HostTarget:
    """The host CPU as an LLVM target machine, with the optimizer for it.

    Emitting is serialized by a lock: LLVM's target machine and pass builder are not
    documented as safe to share between threads, and kernels are compiled rarely."""

    def __init__(self, opt_level: int = 3):
        self.triple = llvm.get_process_triple()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        if "+avx512f" in self.features.split(","):
            # LLVM's tuning for most AVX-512 CPUs prefers 256-bit vectors (against
            # the clock drop of old Xeons); the math kernels run faster at 512
            self.features += ",-prefer-256-bit"
        self.opt_level = opt_level
        self._lock = threading.Lock()

    @cached_property
    def machine(self) -> llvm.TargetMachine:
        """The machine that optimizes and emits code (this object's own)."""
        return self.new_machine()

    def new_machine(self) -> llvm.TargetMachine:
        """A fresh target machine for the host: an MCJIT engine takes ownership of
        the machine it is given and frees it with itself, so every engine gets one."""
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(cpu=self.cpu, features=self.features,
                                            opt=self.opt_level, jit=True)

    @property
    def identity(self) -> str:
        """What object code depends on besides its IR: the CPU, its features, the
        LLVM and llvmlite versions and the opt level (part of the cache key)."""
        version = ".".join(map(str, llvm.llvm_version_info))
        return (f"{self.triple}/{self.cpu}/{self.features}/llvm{version}/"
                f"llvmlite{llvmlite.__version__}/O{self.opt_level}")

    @property
    def has_fma(self) -> bool:
        return "+fma" in self.features.split(",")

    def compile(self, ir_text: str, options: Optimization = FULL) -> bytes:
        """Object code for the LLVM IR `ir_text`, verified then optimized as `options`
        say."""
        with self._lock:
            return self.machine.emit_object(self._optimized(ir_text, options))

    def optimized_ir(self, ir_text: str, options: Optimization = FULL) -> str:
        """The optimized LLVM IR of `ir_text` (to inspect what was vectorized)."""
        with self._lock:
            return str(self._optimized(ir_text, options))

    def _optimized(self, ir_text: str, options: Optimization) -> llvm.ModuleRef:
        module = llvm.parse_assembly(ir_text)
        module.triple = self.triple
        module.data_layout = str(self.machine.target_data)
        try:
            module.verify()
        except RuntimeError as e:
            raise IrflowError(f"internal error: the generated LLVM module does not verify: "
                              f"{e}") from None
        tuning = llvm.create_pipeline_tuning_options(
            speed_level=min(self.opt_level, options.level))
        tuning.loop_vectorization = tuning.slp_vectorization = options.vectorize
        tuning.loop_interleaving = options.vectorize
        tuning.loop_unrolling = options.unroll
        builder = llvm.create_pass_builder(self.machine, tuning)
        builder.getModulePassManager().run(module, builder)
        return module


class Library:
    """Object code loaded into an engine of its own; `address(name)` finds a function.

    The engine lives exactly as long as this object: whoever calls into the code must
    hold the library (a `Kernel` does)."""

    def __init__(self, target: HostTarget, object_code: bytes):
        with target._lock:
            self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""),
                                                      target.new_machine())
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            self._engine.finalize_object()

    def address(self, name: str) -> int:
        address = self._engine.get_function_address(name)
        if not address:
            raise IrflowError(f"internal error: no function {name!r} in the kernel library")
        return address

"""The LLVM backend: elementwise kernels JIT-compiled with llvmlite for the host CPU.

- `jit`: the host target machine (CPU features, O3) and `Library`, the owner of one
  JIT engine;
- `cache`: object code on disk, keyed by the kernel's LLVM IR, the CPU and versions;
- `compiler`: `Compiler`, which compiles a `KernelSpec` once (memory, disk, LLVM);
- `kernel`: `KernelSpec`, the loop nest over a broadcast domain, and `Kernel`, the
  checked ctypes call;
- `calling`: the source of the calls generated per kernel (`Kernel`, `FusedKernel`):
  the common call's checks one comparison each, any other call the general path's;
- `scalar`, `mathlib`, `mathlib32`: the scalar code of every elementwise op and the
  vectorizable approximations of the transcendental functions (in float64, and
  float32-native for float32 exp, log, tanh, sigmoid and erf);
- `elementwise`: kernels from elementwise IR;
- `gemm`: float32 matrix products (`Gemm`), which the backend's matmuls run.

See docs/llvm.md.
"""
from .compiler import Compiler, default_compiler
from .elementwise import ElementwiseFunction, Unsupported, lower_elementwise
from .gemm import Gemm, GemmSpec
from .kernel import Domain, Instr, Kernel, KernelSpec, plan_domain

__all__ = ["Compiler", "Domain", "ElementwiseFunction", "Gemm", "GemmSpec", "Instr", "Kernel",
           "KernelSpec", "Unsupported", "default_compiler", "lower_elementwise", "plan_domain"]

"""The float32 erf over every float32, in ulps from the correctly rounded erf.

    PYTHONPATH=. python tools/exhaustive_float32_erf.py [nofma]   # ~5 min

Every non-negative bit pattern (NaNs included) goes through the compiled erf; the
reference is the float64 erf (`mathlib`, 8 ulp of float64) rounded to float32, and
every point it leaves not correctly rounded is measured again against math.erf
(correctly rounded to float32 but for double roundings, which the float64 reference
then decides too). The negative patterns must give the positive results' negation,
bit for bit. ``nofma``: the host target without FMA, as test_float32_without_fma.
"""
import math
import sys

import numpy as np

from irflow.codegen.llvm import Compiler, ElementwiseFunction
from irflow.codegen.llvm.jit import HostTarget
from irflow.ir import TensorType, function
from tests.codegen.llvm.jit.ulp import ulp_distance

CHUNK = 1 << 24


def erf_kernel(compiler, dtype):
    fn = function("f", [TensorType(dtype, ["N"])], lambda b, x: b.erf(x))
    return ElementwiseFunction(fn, compiler)


def main():
    target = HostTarget()
    if "nofma" in sys.argv[1:]:
        target.features = target.features.replace("+fma", "-fma")
    compiler = Compiler(cache_dir=None, target=target)
    erf32, erf64 = erf_kernel(compiler, "f32"), erf_kernel(compiler, "f64")
    exact = np.frompyfunc(math.erf, 1, 1)
    worst, worst_x, incorrect, not_odd = 0.0, None, 0, 0
    for start in range(0, 1 << 31, CHUNK):
        x = np.arange(start, start + CHUNK, dtype=np.uint32).view(np.float32)
        (got,) = erf32(x)
        (negated,) = erf32(-x)
        flipped = got.view(np.uint32) ^ (1 << 31)
        not_odd += int(np.count_nonzero(negated.view(np.uint32) != flipped))
        with np.errstate(invalid="ignore"):
            (wide,) = erf64(x.astype(np.float64))
        errors = ulp_distance(got, wide.astype(np.float32))
        recheck = np.flatnonzero(errors >= 1)
        want = exact(x[recheck].astype(np.float64)).astype(np.float64).astype(np.float32)
        errors[recheck] = ulp_distance(got[recheck], want)
        incorrect += int(np.count_nonzero(errors >= 1))
        i = int(np.argmax(errors))
        if errors[i] > worst:
            worst, worst_x = errors[i], x[i]
    print(f"FMA {target.has_fma}: at most {worst:g} ulp (first at {worst_x!r}); "
          f"{incorrect} of 2**31 ({incorrect / 2**31:.2%}) not correctly rounded; "
          f"{not_odd} negative arguments not giving the negation")


if __name__ == "__main__":
    main()

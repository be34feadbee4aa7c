"""Kernels as programs see them: broadcasting, layouts, the argument checks, threads,
the compiler's caches and the lifetime of compiled code."""
import ctypes
import gc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from irflow.codegen import run
from irflow.codegen.llvm import (Compiler, ElementwiseFunction, Instr, Kernel, KernelSpec,
                                 plan_domain)
from irflow.errors import InputError, ShapeError
from irflow.ir import TensorType, dtypes, function


def gelu_like(b, x, w, c):
    h = b.add(b.mul(x, w), c)
    return b.mul(h, b.erf(b.mul(h, b.constant(0.7, "float32")))), b.gt(h, c)


def gelu_function(shapes):
    return function("f", [TensorType("f32", s) for s in shapes], gelu_like)


@pytest.mark.parametrize("shapes, arrays", [
    ([["N", 8], [8], []], [(5, 8), (8,), ()]),
    ([["N", 1], [1, 8], [1]], [(5, 1), (1, 8), (1,)]),
    ([[2, "N", 3], [2, 1, 3], [3]], [(2, 4, 3), (2, 1, 3), (3,)]),
    ([["N"], ["N"], ["N"]], [(0,), (0,), (0,)]),
    ([[], [], []], [(), (), ()]),
])
def test_broadcasting_matches_the_interpreter(compiler, shapes, arrays):
    fn = gelu_function(shapes)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in arrays]
    got = ElementwiseFunction(fn, compiler)(*args)
    want = run(fn, *args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)


def test_non_contiguous_inputs(compiler):
    fn = gelu_function([["N", 8], [8], []])
    x = np.asfortranarray(np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8))
    w = np.linspace(0, 1, 16, dtype=np.float32)[::2]
    c = np.asarray(np.float32(0.1))
    assert not x.flags.c_contiguous and not w.flags.c_contiguous
    got = ElementwiseFunction(fn, compiler)(x, w, c)
    np.testing.assert_allclose(got[0], run(fn, x, w, c)[0], rtol=2e-6, atol=1e-7)


def test_arguments_are_checked_before_the_code_runs(compiler):
    fn = gelu_function([["N", 8], [8], []])
    compiled = ElementwiseFunction(fn, compiler)
    x, w, c = np.ones((3, 8), np.float32), np.ones(8, np.float32), np.ones((), np.float32)
    with pytest.raises(InputError):
        compiled(x.astype(np.float64), w, c)
    with pytest.raises(InputError):
        compiled(np.ones((3, 9), np.float32), w, c)
    kernel = compiled.kernel
    with pytest.raises(ShapeError, match="broadcast"):
        kernel(x, np.ones(1, np.float32), c)  # the IR says [8]: no stretching
    with pytest.raises(ShapeError, match="rank"):
        kernel(x[0], w, c)
    with pytest.raises(ShapeError, match="takes 3"):
        kernel(x, w)
    with pytest.raises(ShapeError, match="must be a writable"):
        kernel(x, w, c, out=[np.empty((3, 8), np.float32), np.empty((3, 7), np.bool_)])
    with pytest.raises(ShapeError, match="overlaps"):
        kernel(x, w, c, out=[x, np.empty((3, 8), np.bool_)])
    out = [np.empty((3, 8), np.float32), np.empty((3, 8), np.bool_)]
    assert kernel(x, w, c, out=out)[0] is out[0]
    np.testing.assert_allclose(out[0], run(fn, x, w, c)[0], rtol=2e-6)


class Sub(np.ndarray):
    """An ndarray subclass: the generated call leaves it to the general path."""


def off_the_fast_path(a):
    """Copies of `a` that the generated call hands to `Kernel.checked_call`: read-only,
    not C-contiguous, a subclass, and of an equal dtype that is not NumPy's own."""
    read_only = a.copy()
    read_only.flags.writeable = False
    strided = np.repeat(a[..., None], 2, axis=-1)[..., 0]
    odd_dtype = a.astype(np.dtype("f4", metadata={"m": 1}))
    return [read_only, strided, a.copy().view(Sub), odd_dtype]


@pytest.mark.parametrize("shapes", [[[5, 8], [8], []], [["N", 8], [8], []]])
def test_calls_off_the_fast_path_give_the_same_results(compiler, monkeypatch, shapes):
    """The generated call takes exact, contiguous, writable ndarrays; any other goes
    the general way, with the same results, given buffers or not."""
    general, checked_call = [], Kernel.checked_call

    def counted(self, arrays, out):
        general.append(1)
        return checked_call(self, arrays, out)
    monkeypatch.setattr(Kernel, "checked_call", counted)
    kernel = ElementwiseFunction(gelu_function(shapes), compiler).kernel
    rng = np.random.default_rng(3)
    x, w, c = (rng.standard_normal(s).astype(np.float32) for s in [(5, 8), (8,), ()])
    want = kernel(x, w, c)
    assert not general
    for odd in off_the_fast_path(x):
        for out in (None, [np.empty((5, 8), np.float32), None]):
            got = kernel(odd, w, c, out=out)
            assert all(g.tobytes() == v.tobytes() for g, v in zip(got, want))
    assert len(general) == 8
    with pytest.raises(ShapeError, match="broadcast"):
        kernel(np.ones((5, 8), np.float32), np.ones(1, np.float32), c)
    with pytest.raises(ShapeError, match="rank"):
        kernel(x[0], w, c)


def test_the_call_releases_the_gil(compiler):
    kernel = ElementwiseFunction(gelu_function([["N"], ["N"], ["N"]]), compiler).kernel
    assert not kernel._fn._flags_ & ctypes._FUNCFLAG_PYTHONAPI


def test_one_kernel_called_from_several_threads(compiler):
    fn = gelu_function([["N", 64], [64], []])
    compiled = ElementwiseFunction(fn, compiler)
    rng = np.random.default_rng(2)
    inputs = [(rng.standard_normal((n, 64)).astype(np.float32),
               rng.standard_normal(64).astype(np.float32), np.asarray(np.float32(n / 10)))
              for n in range(1, 41)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda args: compiled(*args), inputs * 5))
    for args, got in zip(inputs * 5, results):
        np.testing.assert_allclose(got[0], run(fn, *args)[0], rtol=2e-6, atol=1e-7)


def test_contiguous_loops_are_vectorized(compiler):
    spec = ElementwiseFunction(gelu_function([["N", 8], [8], []]), compiler).kernel.spec
    optimized = compiler.target.optimized_ir(compiler.llvm_ir(spec))
    assert "x float>" in optimized and "call float @erf" not in optimized


def add_constant(i):
    domain, masks = plan_domain([TensorType(dtypes.float32, (4,))])
    body = (Instr("const", (), "f32", (("value", float(i)),)), Instr("add", (0, 1), "f32"))
    return KernelSpec(("f32",), masks, body, (2,), 1), domain


def test_equal_specs_share_code_and_the_disk_cache_serves_a_new_compiler(tmp_path):
    first = Compiler(cache_dir=tmp_path)
    spec, domain = add_constant(1)
    kernel = first.kernel(spec, domain)
    again = first.kernel(*add_constant(1))
    assert again._code is kernel._code and first.stats.compiled == 1 and first.stats.reused == 1
    second = Compiler(cache_dir=tmp_path)
    loaded = second.kernel(spec, domain)
    assert second.stats.loaded == 1 and second.stats.compiled == 0
    np.testing.assert_array_equal(loaded(np.zeros(4, np.float32))[0], np.ones(4, np.float32))


def test_a_disk_cache_hit_generates_no_llvm_ir(tmp_path, monkeypatch):
    spec, domain = add_constant(5)
    Compiler(cache_dir=tmp_path).kernel(spec, domain)

    def refuse(self, fma):
        raise AssertionError("LLVM IR generated for a kernel the disk cache holds")
    monkeypatch.setattr(KernelSpec, "llvm_ir", refuse)
    second = Compiler(cache_dir=tmp_path)
    kernel = second.kernel(spec, domain)
    assert second.stats.loaded == 1
    np.testing.assert_array_equal(kernel(np.zeros(4, np.float32))[0], np.full(4, 5, np.float32))


def test_other_irflow_sources_make_other_cache_keys(tmp_path, monkeypatch):
    """The key covers the code that generates LLVM IR, so an edited generator never
    loads object code an older one wrote."""
    from irflow.codegen.llvm import cache
    spec, _ = add_constant(6)
    store = cache.ObjectCache(tmp_path, "host")
    before = store.key(spec)
    monkeypatch.setattr(cache, "source_fingerprint", lambda: "edited")
    assert store.key(spec) != before
    assert store.key(add_constant(7)[0]) != store.key(spec)


def test_the_source_fingerprint_reads_every_backend_source(tmp_path, monkeypatch):
    """An edit of any file of irflow/codegen/llvm (the generators) changes it."""
    from irflow.codegen.llvm import cache
    for path in cache.BACKEND.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(cache, "BACKEND", tmp_path)
    cache.source_fingerprint.cache_clear()
    try:
        first = cache.source_fingerprint()
        for name in ("gemm.py", "mathlib32.py", "scalar.py"):
            edited = tmp_path / name
            edited.write_text(edited.read_text() + "\n# an edit\n")
            cache.source_fingerprint.cache_clear()
            assert cache.source_fingerprint() != first
            first = cache.source_fingerprint()
    finally:
        cache.source_fingerprint.cache_clear()


def test_a_damaged_cache_entry_is_compiled_again(tmp_path):
    spec, domain = add_constant(2)
    Compiler(cache_dir=tmp_path).kernel(spec, domain)
    (entry,) = tmp_path.rglob("*.o")
    entry.write_bytes(entry.read_bytes()[:-7])
    fresh = Compiler(cache_dir=tmp_path)
    kernel = fresh.kernel(spec, domain)
    assert fresh.stats.compiled == 1
    np.testing.assert_array_equal(kernel(np.zeros(4, np.float32))[0], np.full(4, 2, np.float32))


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 20


def test_code_is_freed_with_its_last_kernel(tmp_path):
    """A thousand kernels made and dropped one after the other (each a JIT engine of
    its own, its object code from the disk cache) leave memory where it was."""
    Compiler(cache_dir=tmp_path).kernel(*add_constant(3))

    def cycle(n):
        for _ in range(n):
            compiler = Compiler(cache_dir=tmp_path)
            kernel = compiler.kernel(*add_constant(3))
            assert kernel(np.zeros(4, np.float32))[0][0] == 3
            assert compiler.stats.loaded == 1
        gc.collect()

    cycle(200)
    before = resident_mb()
    cycle(1000)
    assert resident_mb() - before < 8

"""A small call of a whole function as one native function
(`irflow.codegen.llvm.whole`): the products of a few rows (`irflow.codegen.llvm.gemv`)
against the float64 product, at every edge of their column blocks; compiled models
against the NumPy backend; the calls it declines, which the plan's steps run and
whose errors are the plan's; arguments that change between calls; threads."""
import ctypes
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irflow
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.codegen.llvm.jit import HostTarget
from irflow.codegen.llvm.gemm import MIN_ROWS
from irflow.codegen.llvm.whole import (BRIEF_WORK, STACK_BYTES, Product, WholeSpec,
                                       compile_whole)
from irflow.errors import InputError
from irflow.static import InputSpec
from tests.codegen.llvm.jit.test_gemm import check_product

pytestmark = pytest.mark.skipif("+avx512f" not in HostTarget().features.split(","),
                                reason="the native function is made for AVX-512 hosts")


def native(compiler, spec: WholeSpec):
    return compiler.code(spec).function(len(spec.sizes) + spec.buffers)


@pytest.fixture(scope="module")
def symbolic_product(compiler):
    """C = A @ B of any sizes: M, K, N size arguments, the widest blocks."""
    return native(compiler, WholeSpec(("M", "K", "N"), 3, (), (Product(0, 1, 2, "M", "K", "N"),)))


@given(st.integers(1, 7), st.integers(1, 300), st.integers(1, 140), st.integers(0, 2 ** 16))
def test_products_of_a_few_rows_at_every_edge(symbolic_product, m, k, n, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal((m, k)).astype(np.float32)
    b = r.standard_normal((k, n)).astype(np.float32)
    memory = np.full(m * n + 64, 7.0, np.float32)  # C with 32 floats either side
    c = memory[32:32 + m * n].reshape(m, n)
    symbolic_product(m, k, n, a.ctypes.data, b.ctypes.data, c.ctypes.data)
    check_product(c, a, b)
    assert (memory[:32] == 7.0).all() and (memory[32 + m * n:] == 7.0).all()


@pytest.mark.parametrize("n", [1, 10, 16, 17, 33, 48, 64, 65, 130])
def test_blocks_as_wide_as_static_columns_need(compiler, n):
    """A static N picks blocks of 1-4 vectors: each width, and its edge."""
    k = 37
    fn = native(compiler, WholeSpec(("M",), 3, (), (Product(0, 1, 2, "M", k, n),)))
    a = rng_array((3, k))
    b = rng_array((k, n))
    c = np.empty((3, n), np.float32)
    fn(3, a.ctypes.data, b.ctypes.data, c.ctypes.data)
    check_product(c, a, b)


@pytest.mark.parametrize("n", [16, 64, 80, 512])
def test_b_at_every_offset_from_a_cache_line(symbolic_product, n):
    """Rows of B that start mid-line (N a multiple of 16) are read on a grid of
    vectors on cache lines, from before the row's first column: every offset."""
    k = 29
    memory = np.zeros(k * n + 16, np.float32)
    first = (-memory.ctypes.data % 64) // 4
    for offset in range(16):
        start = first + offset if first + offset + k * n <= memory.size else first + offset - 16
        b = memory[start:start + k * n].reshape(k, n)
        b[...] = rng_array((k, n), seed=offset)
        for m in (1, 3):
            a = rng_array((m, k), seed=m)
            c = np.empty((m, n), np.float32)
            symbolic_product(m, k, n, a.ctypes.data, b.ctypes.data, c.ctypes.data)
            check_product(c, a, b)


def test_nan_and_inf_propagate_as_in_numpy(symbolic_product):
    a = rng_array((2, 5))
    b = rng_array((5, 20))
    a[0, 1], b[3, 7] = np.nan, np.inf
    c = np.empty((2, 20), np.float32)
    symbolic_product(2, 5, 20, a.ctypes.data, b.ctypes.data, c.ctypes.data)
    want = a.astype(np.float64) @ b
    np.testing.assert_array_equal(np.isnan(c), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(c), np.isinf(want))


def rng_array(shape, seed=3):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def mlp(*widths, activation=nn.ReLU):
    layers = []
    for k, (i, o) in enumerate(zip(widths, widths[1:])):
        layers.append(nn.Linear(i, o))
        if k < len(widths) - 2:
            layers.append(activation())
    model = nn.Sequential(*layers)
    model.eval()
    return model


def compiled_pair(model, width):
    spec = [InputSpec([None, width], "float32")]
    return (irflow.compile(model, input_spec=spec, backend="llvm"),
            irflow.compile(model, input_spec=spec, backend="numpy"))


def whole_of(compiled):
    """The native call of the compiled function's last program (None: it has none)."""
    return compiled._last.plan.whole


def arguments(compiled, x):
    return [x, *(p.numpy() for p in compiled.parameters())]


@pytest.mark.parametrize("activation", [nn.ReLU, nn.Tanh, nn.Sigmoid, nn.GELU])
@pytest.mark.parametrize("batch", [1, 2, 7])
def test_a_small_mlp_runs_as_one_native_function(activation, batch):
    irflow.seed(1)
    model = mlp(784, 64, 32, 10, activation=activation)
    llvm, numpy = compiled_pair(model, 784)
    x = irflow.randn([batch, 784])
    with irflow.no_grad():
        got, want = llvm(x).numpy(), numpy(x).numpy()
        assert whole_of(llvm)(arguments(llvm, x.numpy()), None) is not None
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_calls_it_declines_run_the_plans_steps():
    """Eight rows and more (the GEMM's), a read-only or non-contiguous input, too
    much scratch for the stack: the plan's steps, the same answer."""
    irflow.seed(2)
    model = mlp(300, 64, 10)
    llvm, numpy = compiled_pair(model, 300)
    wide = mlp(20, STACK_BYTES // 4 // 7 + 64, 3)  # 7 rows of the hidden layer overflow
    wide_llvm, wide_numpy = compiled_pair(wide, 20)
    with irflow.no_grad():
        for x in (rng_array((8, 300)), rng_array((50, 300))):
            llvm(irflow.to_tensor(x))
            assert whole_of(llvm)(arguments(llvm, x), None) is None
            np.testing.assert_allclose(llvm(irflow.to_tensor(x)).numpy(),
                                       numpy(irflow.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-5)
        read_only = rng_array((1, 300))
        read_only.flags.writeable = False
        strided = rng_array((2, 600))[:, ::2]
        for x in (read_only, strided):
            assert whole_of(llvm)(arguments(llvm, x), None) is None
            np.testing.assert_allclose(llvm(x).numpy(), numpy(x).numpy(), rtol=1e-5, atol=1e-5)
        x = rng_array((7, 20))
        got = wide_llvm(x).numpy()
        assert whole_of(wide_llvm)(arguments(wide_llvm, x), None) is None
        np.testing.assert_allclose(got, wide_numpy(x).numpy(), rtol=1e-5, atol=1e-5)
        assert whole_of(wide_llvm)(arguments(wide_llvm, x[:2]), None) is not None


def test_wrong_inputs_raise_the_plans_errors():
    model = mlp(30, 16, 4)
    llvm, numpy = compiled_pair(model, 30)
    with irflow.no_grad():
        llvm(rng_array((1, 30)))
        for bad in (np.ones((1, 31), np.float32), np.ones((1, 30), np.float64),
                    np.ones((30,), np.float32)):
            with pytest.raises(InputError) as got:
                llvm(bad)
            with pytest.raises(InputError) as want:
                numpy(bad)
            # the same message, located at each call's own line
            assert str(got.value).splitlines()[-1] == str(want.value).splitlines()[-1]


def test_parameters_changed_or_rebound_between_calls_are_read_anew():
    """The native call remembers each argument's address: a parameter written in
    place is read as it is now, one rebound to a new array at its own address."""
    irflow.seed(3)
    model = mlp(12, 8, 3)
    llvm, numpy = compiled_pair(model, 12)
    x = irflow.randn([1, 12])
    weight = model[0].weight
    with irflow.no_grad():
        llvm(x)
        weight._value[...] *= 2.0  # in place: the same array
        np.testing.assert_allclose(llvm(x).numpy(), numpy(x).numpy(), rtol=1e-5, atol=1e-6)
        weight.set_value(weight.numpy() * -1.5)  # a new array
        np.testing.assert_allclose(llvm(x).numpy(), numpy(x).numpy(), rtol=1e-5, atol=1e-6)
        assert whole_of(llvm)(arguments(llvm, x.numpy()), None) is not None


def test_a_held_result_is_never_written_again_a_dropped_one_is_reused():
    irflow.seed(6)
    model = mlp(12, 8, 3)
    llvm, numpy = compiled_pair(model, 12)
    x, y = rng_array((2, 12), seed=1), rng_array((2, 12), seed=2)
    with irflow.no_grad():
        held = llvm(x).numpy()
        view = held[1:]
        want_x, want_y = numpy(x).numpy(), numpy(y).numpy()
        np.testing.assert_allclose(llvm(y).numpy(), want_y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(held, want_x, rtol=1e-5, atol=1e-6)
        del held
        np.testing.assert_allclose(llvm(y).numpy(), want_y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(view, want_x[1:], rtol=1e-5, atol=1e-6)
        address = llvm(x).numpy().ctypes.data  # dropped at once
        assert llvm(y).numpy().ctypes.data == address
        assert llvm(rng_array((3, 12))).shape == [3, 3]  # another shape: its own memory


def test_functions_it_cannot_compile_get_no_native_function(compiler):
    """A reduction (softmax), a transposed product, an integer argument: None when
    the plan is built, and nothing compiled."""
    irflow.seed(4)
    head = mlp(16, 8, 4)

    def softmax(x):
        return F.softmax(head(x), axis=-1)

    def transposed(x, w):
        return irflow.matmul(x, w, transpose_y=True)

    def counting(x, n):
        return head(x) * n.astype("float32")

    cases = [(softmax, [InputSpec([None, 16], "float32")]),
             (transposed, [InputSpec([None, 16], "float32"), InputSpec([4, 16], "float32")]),
             (counting, [InputSpec([None, 16], "float32"), InputSpec([1], "int32")])]
    for fn, spec in cases:
        compiled = irflow.compile(fn, input_spec=spec, backend="llvm")
        with irflow.no_grad():
            compiled(*[irflow.ones([2, *s.shape[1:]], s.dtype) if s.shape[0] is None
                       else irflow.ones(s.shape, s.dtype) for s in spec])
        assert whole_of(compiled) is None
        fn_ir = compiled._last.ir.functions[compiled._last.plan.name]
        before = compiler.stats.compiled + compiler.stats.loaded + compiler.stats.reused
        assert compile_whole(fn_ir, compiler) is None
        assert compiler.stats.compiled + compiler.stats.loaded + compiler.stats.reused == before


def native_function(compiled):
    """The ctypes function the compiled function's native call calls."""
    call = whole_of(compiled)
    return dict(zip(call.__code__.co_freevars, (c.cell_contents for c in call.__closure__)))["fn"]


def test_brief_calls_keep_the_gil_long_ones_release_it():
    """A batch-1 MLP's call takes microseconds: releasing the GIL for it would make
    its thread wait to take it back. Weights of more than `BRIEF_WORK` multiply-adds
    at `MIN_ROWS` rows, or of a symbolic size, release it."""
    irflow.seed(6)
    x = irflow.randn([1, 784])
    brief = compiled_pair(mlp(784, 64, 10), 784)[0]
    long = compiled_pair(mlp(784, 256, 10), 784)[0]  # 8 x 784 x 256 > 1 << 20
    with irflow.no_grad():
        brief(x), long(x)
    assert MIN_ROWS * (784 * 64 + 64 * 10) <= BRIEF_WORK < MIN_ROWS * 784 * 256
    assert native_function(brief)._flags_ & ctypes._FUNCFLAG_PYTHONAPI
    assert not native_function(long)._flags_ & ctypes._FUNCFLAG_PYTHONAPI


def test_threads_calling_at_once_get_their_own_answers():
    irflow.seed(5)
    model = mlp(100, 64, 10)
    llvm, numpy = compiled_pair(model, 100)
    inputs = [rng_array((1 + k % 7, 100), seed=k) for k in range(8)]
    with irflow.no_grad():
        want = [numpy(x).numpy() for x in inputs]
    failures = []

    def work(k):
        with irflow.no_grad():
            for _ in range(200):
                got = llvm(inputs[k]).numpy()
                if not np.allclose(got, want[k], rtol=1e-5, atol=1e-5):
                    failures.append(k)
                    return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


ACTIVATIONS = [None, nn.ReLU, nn.Tanh, nn.Sigmoid, nn.GELU, nn.Softplus]


@settings(max_examples=12)
@given(st.lists(st.integers(1, 80), min_size=2, max_size=4), st.integers(1, 7),
       st.sampled_from(ACTIVATIONS), st.integers(0, 2 ** 16))
def test_random_mlps_agree_with_the_interpreter(widths, batch, activation, seed):
    """Whatever the widths (every block edge of the products) and the body over
    each product (softplus's a comparison and a select), the native call agrees
    with the NumPy backend."""
    irflow.seed(seed)
    layers = []
    for i, o in zip(widths, widths[1:]):
        layers.append(nn.Linear(i, o))
        if activation is not None:
            layers.append(activation())
    model = nn.Sequential(*layers)
    model.eval()
    llvm, numpy = compiled_pair(model, widths[0])
    x = rng_array((batch, widths[0]), seed)
    with irflow.no_grad():
        got, want = llvm(x).numpy(), numpy(x).numpy()
        assert whole_of(llvm)(arguments(llvm, x), None) is not None
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

"""What the executor's arena relies on, op by op: a kernel returns memory of its own,
row-major, unless its op is a view, a call or reads a stack or list; an out kernel writes exactly what the kernel
returns, also over an operand it may overwrite (`OpDef.overwrites`). The samples are
every op application of generated programs (and their gradients) plus a table for
the ops the generator does not emit."""
import numpy as np
import pytest

from irflow.codegen import Interpreter
from irflow.ir import CallOp, ContainerOperands, TensorType, View, all_ops, lookup
from irflow.ir.dtypes import from_numpy
from irflow.passes.autodiff import grad
from tests.support.programs import random_program

rng = np.random.default_rng(0)
F = rng.standard_normal((3, 4)).astype(np.float32)
F[0, 0] = 0
with np.errstate(all="ignore"):
    SPECIAL = np.concatenate([np.log(F), F / 0])  # NaN, -inf, inf
IMAGE = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
CONV = dict(stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1)
POOL = dict(kernel_size=(2, 2), stride=(2, 2), padding=(1, 1, 1, 1), ceil_mode=False)

TABLE = [
    ("einsum", [F], {"equation": "ij->ji"}),
    ("einsum", [F, F.T.copy()], {"equation": "ij,jk->ik"}),
    ("tril", [F], {"diagonal": 0}),
    ("triu", [F], {"diagonal": 1}),
    ("cumsum", [F], {"axis": 1, "reverse": False}),
    ("roll", [F], {"shifts": (1,), "axis": (0,)}),
    ("argsort", [F], {"axis": -1, "descending": False}),
    ("round", [F], {}),
    ("erf", [F], {}),
    ("transpose", [F], {"perm": (1, 0)}),
    ("matmul", [F, F], {"transpose_x": True, "transpose_y": False}),
    ("matmul", [F, F], {"transpose_x": False, "transpose_y": True}),
    ("any", [F > 0], {"axis": (1,), "keepdim": False}),
    ("all", [F > 0], {"axis": None, "keepdim": False}),
    ("argmax", [F], {"axis": 1, "keepdim": True}),
    ("argmin", [F], {"axis": None, "keepdim": False}),
    ("isnan", [SPECIAL], {}),
    ("isinf", [SPECIAL], {}),
    ("isfinite", [SPECIAL], {}),
    ("conv2d", [IMAGE, rng.standard_normal((4, 3, 3, 3)).astype(np.float32)], CONV),
    ("conv2d_grad_input", [IMAGE, rng.standard_normal((3, 3, 3, 3)).astype(np.float32)],
     dict(CONV, input_hw=(6, 6))),
    ("max_pool2d", [IMAGE], POOL),
    ("avg_pool2d", [IMAGE], dict(POOL, exclusive=True)),
]


class _Sampler(Interpreter):
    """The interpreter, keeping (op name, operands, attributes, result) of each kernel."""

    def __init__(self, samples):
        super().__init__(check=True)
        self.samples = samples

    def op(self, op, args, bindings):
        results = super().op(op, args, bindings)
        kept = self.samples.setdefault(op.name, [])
        if (not op.regions and len(results) == 1 and isinstance(results[0], np.ndarray)
                and len(kept) < PER_OP):
            kept.append((list(args), dict(op.attrs), results[0]))
        return results


PER_OP = 12


def samples() -> dict[str, list]:
    """Op name -> (operands, attributes, kernel result) of up to `PER_OP` uses."""
    found: dict[str, list] = {}
    for seed in range(60):
        program = random_program(seed, dtype="float64", scalar_output=True, max_ops=16)
        for fn in (program.function, grad(program.function, program.float_args)):
            _Sampler(found).run(fn, program.inputs(seed, program.sizes[-1]))
    for name, args, attrs in TABLE:
        opdef = lookup(name)
        attrs = opdef.complete_attrs(attrs, [TensorType(from_numpy(a), a.shape) for a in args])
        found.setdefault(name, []).append((args, attrs, np.asarray(opdef.kernel(*args, **attrs))))
    return {name: uses for name, uses in found.items() if uses}


SAMPLES = samples()


def test_the_samples_cover_the_ops_that_compute_tensors():
    assert {"add", "mul", "exp", "sum", "mean", "matmul", "select", "cast", "concat",
            "gather", "scatter_add", "set_slice", "pad", "einsum", "conv2d"} <= set(SAMPLES)
    with_out = {o.name for o in all_ops() if o.out_kernel is not None}
    assert len(set(SAMPLES) & with_out) >= 40


def test_ops_with_regions_are_exempt_and_have_no_out_kernel():
    # Not sampled above: `cond`, `while` and `fused` run through their evaluators,
    # not a kernel. Liveness lets their results be whatever flows into them (a fused
    # kernel's, any of its operands or body values), so the arena assumes nothing of
    # their memory and never writes them: none has an out kernel. (What `fused`
    # computes is tested against its ops in tests/ops/test_fused.py, its plans by
    # the checker in tests/passes/test_plan_buffers.py.)
    with_regions = {o.name for o in all_ops() if o.region_op is not None}
    assert {"cond", "while", "fused"} <= with_regions
    assert all(lookup(name).out_kernel is None for name in with_regions)
    assert not with_regions & set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_kernels_return_memory_of_their_own_and_out_kernels_agree(name):
    for args, attrs, result in SAMPLES[name]:
        check_use(name, args, attrs, result)


def check_use(name, args, attrs, result):
    opdef = lookup(name)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not (opdef.has(View) or opdef.has(CallOp) or opdef.has(ContainerOperands)):
        assert not any(np.shares_memory(result, a) for a in arrays), \
            f"the kernel of '{name}' returned an operand's memory"
        assert result.flags.c_contiguous, f"the kernel of '{name}' returned a strided array"
    if opdef.out_kernel is None:
        return
    out = np.full_like(result, 7) if result.dtype.kind != "b" else np.zeros_like(result)
    opdef.out_kernel(*args, out=out, **attrs)
    np.testing.assert_array_equal(out, result, strict=True,
                                  err_msg=f"'{name}' writes another value than its kernel gives")
    for k, a in enumerate(args):  # in place, where it may
        if (opdef.overwrites(k) and isinstance(a, np.ndarray) and a.shape == result.shape
                and a.dtype == result.dtype):
            over = [x.copy() if isinstance(x, np.ndarray) and x is a else x for x in args]
            opdef.out_kernel(*over, out=over[k], **attrs)
            np.testing.assert_array_equal(over[k], result, strict=True,
                                          err_msg=f"'{name}' in place over operand {k}")

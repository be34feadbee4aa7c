"""Compare irflow's eager Tensor API and dynamic graph with PaddlePaddle's (run by hand).

    python benchmarks/compare_paddle_eager.py [--paddle-python /tmp/pdvenv/bin/python]

Every case is one function of named inputs written once against the Paddle API; it
runs here on irflow (``import irflow as paddle``) and, in a subprocess, on real
PaddlePaddle in the interpreter given by --paddle-python (irflow's process never
imports paddle). Inputs are drawn here and passed through an .npz file. For each case
the script compares the result's dtype, shape and values, and, where the result is a
float tensor that requires a gradient, the gradient of ``sum(result * c)`` (c a fixed
cotangent) with respect to every float input. A case that raises on one side only is
a failure; one that raises on both sides is reported as such (an error case both
frameworks reject). Prints the max abs difference of each array and exits 1 if one
exceeds the tolerance (1e-5 for float32 results, relative where values exceed 1).
"""
from __future__ import annotations

import importlib
import json
import sys

import numpy as np

from paddle_side import parse_args, run_paddle_side

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}


# ---------------------------------------------------------------- data

def make_data() -> dict:
    rng = np.random.default_rng(2026)
    f32 = np.float32
    return {
        "a": rng.standard_normal((3, 4)).astype(f32),
        "b": rng.standard_normal((4,)).astype(f32),
        "c": rng.standard_normal((2, 3, 4)).astype(f32),
        "col": rng.standard_normal((3, 1)).astype(f32),
        "pos": rng.uniform(0.2, 3.0, (3, 4)).astype(f32),
        "pos_b": rng.uniform(0.5, 2.0, (4,)).astype(f32),
        "m": rng.standard_normal((4, 5)).astype(f32),
        "batch": rng.standard_normal((2, 3, 4)).astype(f32),
        "batch_m": rng.standard_normal((2, 4, 5)).astype(f32),
        "d": rng.standard_normal((3, 4)),                         # float64
        "d_m": rng.standard_normal((4, 2)),
        "ties": np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]], f32),
        "ties_b": np.array([[1.0, 2.0, 3.0], [2.0, 0.0, -1.0]], f32),
        "special": np.array([1.0, np.nan, np.inf, -np.inf, 0.0], f32),
        "i": rng.integers(-5, 6, (3, 4)).astype(np.int64),
        "i32": rng.integers(-5, 6, (3, 4)).astype(np.int32),
        "nz": rng.integers(1, 4, (3, 4)).astype(np.int64),
        "flags": rng.integers(0, 2, (3, 4)).astype(bool),
        "index": np.array([2, 0, 2], np.int64),
        "index2": np.array([3, 1], np.int64),
        "rows": np.array([2, 0], np.int64),
        "scalar": np.array(1.5, f32),
        "scalar_i": np.array(2, np.int64),
    }


# ---------------------------------------------------------------- cases (both frameworks)

def _set(index, value):
    def fn(paddle, x):
        y = x * 1.0
        y[index] = value
        return y * y
    return fn


def _set_tensor(paddle, x, v):
    y = x * 1.0
    y[1, 1:] = v
    return y * 2


def _set_index(paddle, x, index):
    y = x * 1.0
    y[:, index] = 0.5
    return y


def _set_mask(paddle, x):
    y = x * 1.0
    y[y > 0.5] = 0.0
    return y


def _grad_of_intermediate(paddle, x):
    h = paddle.tanh(x)
    (g,) = paddle.grad(paddle.sum(h * h * x), h)
    return g


def _grad_of_leaf_and_intermediate(paddle, x):
    h = x * x
    gx, gh = paddle.grad(paddle.sum(h * 3 + x), [x, h])
    return paddle.concat([gx, gh])


def _stopped_intermediate(paddle, x):
    y = x * 2
    y.stop_gradient = True
    (y * x).sum().backward()
    return x.grad * 1.0


def _second_derivative(paddle, x):
    (g,) = paddle.grad(paddle.sum(x ** 3), x, create_graph=True)
    (gg,) = paddle.grad(paddle.sum(g * x), x)
    return gg


def _accumulated(paddle, x):
    (x * 2).sum().backward()
    (x * x).sum().backward()
    return x.grad * 1.0


def _cleared(paddle, x):
    (x * 2).sum().backward()
    x.clear_gradient()
    return x.grad * 1.0


def _leaf(paddle, value):
    return paddle.to_tensor(value, stop_gradient=False)


CASES = {
    # arithmetic, broadcasting and Python scalars
    "add_bcast": (["a", "b"], lambda p, x, y: x + y),
    "sub_col": (["a", "col"], lambda p, x, y: x - y),
    "mul_3d": (["c", "b"], lambda p, x, y: x * y),
    "div": (["a", "pos_b"], lambda p, x, y: x / y),
    "rdiv_scalar": (["pos"], lambda p, x: 2.0 / x),
    "rsub_scalar": (["a"], lambda p, x: 3 - x),
    "pow_scalar": (["a"], lambda p, x: x ** 3),
    "pow_tensor": (["pos", "pos_b"], lambda p, x, y: p.pow(x, y)),
    "rpow": (["a"], lambda p, x: 2.0 ** x),
    "floordiv": (["a"], lambda p, x: x // 0.7),
    "mod": (["a"], lambda p, x: x % 0.7),
    "maximum": (["a", "b"], lambda p, x, y: p.maximum(x, y)),
    "minimum": (["a", "col"], lambda p, x, y: p.minimum(x, y)),
    "neg": (["a"], lambda p, x: -x),
    "zero_d_add": (["a", "scalar"], lambda p, x, s: x * s + s),
    "float64": (["d", "d_m"], lambda p, x, w: p.tanh(x @ w) * 2.5),
    # dtype promotion
    "int_plus_float_scalar": (["i"], lambda p, x: x + 2.5),
    "int_times_int_scalar": (["i32"], lambda p, x: x * 3),
    "int_true_divide": (["i", "nz"], lambda p, x, y: x / y),
    "int_floordiv": (["i", "nz"], lambda p, x, y: x // y),
    "int_mod": (["i", "nz"], lambda p, x, y: x % y),
    "int_pow": (["nz"], lambda p, x: x ** 3),
    "int_0d_float": (["i", "scalar"], lambda p, x, s: x + s),
    "float_0d_int": (["a", "scalar_i"], lambda p, x, s: x * s),
    "bool_plus_int": (["flags"], lambda p, x: x + 1),
    "bool_plus_bool": (["flags"], lambda p, x: x + x),
    "f32_plus_f64": (["a", "d"], lambda p, x, y: x + y),
    "int_plus_float_tensor": (["i", "a"], lambda p, x, y: x + y),        # both raise
    "i32_plus_i64": (["i32", "i"], lambda p, x, y: x + y),               # both raise
    # unary math
    **{f"unary_{name}": (["a" if name not in ("log", "sqrt", "rsqrt") else "pos"],
                         lambda p, x, n=name: getattr(p, n)(x))
       for name in ["abs", "exp", "log", "tanh", "sqrt", "rsqrt", "sigmoid", "sin", "cos",
                    "square", "erf", "floor", "ceil", "sign"]},
    "exp_int": (["i"], lambda p, x: p.exp(x)),
    "abs_int": (["i32"], lambda p, x: p.abs(x)),
    "clip": (["a"], lambda p, x: p.clip(x, -0.5, 0.7)),
    "isnan": (["special"], lambda p, x: p.isnan(x)),
    "isinf": (["special"], lambda p, x: p.isinf(x)),
    "isfinite": (["special"], lambda p, x: p.isfinite(x)),
    # comparisons and logic
    "less": (["a", "b"], lambda p, x, y: x < y),
    "equal_int": (["i", "scalar_i"], lambda p, x, y: x == y),
    "ge_scalar": (["a"], lambda p, x: x >= 0.1),
    "logical": (["flags"], lambda p, x: (x & ~x[::-1]) | (x ^ p.logical_not(x[:, ::-1]))),
    "any_axis": (["flags"], lambda p, x: p.any(x, axis=1)),
    "all_keepdim": (["flags"], lambda p, x: p.all(x, axis=0, keepdim=True)),
    "any_float": (["a"], lambda p, x: p.any(x > 1.0)),
    "where": (["a", "b"], lambda p, x, y: p.where(x > 0, x, y)),
    "where_scalar": (["a"], lambda p, x: p.where(x > 0, x, 0.0)),
    # reductions
    **{f"{name}_{tag}": (["c"], lambda p, x, n=name, k=kw: getattr(p, n)(x, **k))
       for name in ["sum", "mean", "max", "min", "prod"]
       for tag, kw in [("all", {}), ("axis1", {"axis": 1}),
                       ("neg_keep", {"axis": -1, "keepdim": True}),
                       ("list", {"axis": [0, 2]}), ("empty_axis", {"axis": []})]},
    "max_ties": (["ties"], lambda p, x: p.max(x, axis=1)),
    "maximum_ties": (["ties", "ties_b"], lambda p, x, y: p.maximum(x, y)),
    "minimum_ties": (["ties", "ties_b"], lambda p, x, y: p.minimum(x, y)),
    "sum_int32": (["i32"], lambda p, x: p.sum(x, axis=0)),
    "sum_bool": (["flags"], lambda p, x: p.sum(x)),
    "argmax": (["ties"], lambda p, x: p.argmax(x)),
    "argmax_axis": (["ties"], lambda p, x: p.argmax(x, axis=1, keepdim=True)),
    "argmin_axis": (["a"], lambda p, x: p.argmin(x, axis=0)),
    "logsumexp": (["a"], lambda p, x: p.logsumexp(x, axis=1)),
    "var": (["a"], lambda p, x: p.var(x, axis=0)),
    "std": (["a"], lambda p, x: p.std(x)),
    "norm": (["a"], lambda p, x: p.norm(x)),
    # matmul
    "matmul": (["a", "m"], lambda p, x, y: p.matmul(x, y)),
    "matmul_vec": (["a", "b"], lambda p, x, y: x @ y),
    "matmul_vec_vec": (["b", "pos_b"], lambda p, x, y: x @ y),
    "matmul_batch": (["batch", "batch_m"], lambda p, x, y: p.matmul(x, y)),
    "matmul_bcast": (["batch", "m"], lambda p, x, y: p.matmul(x, y)),
    "matmul_t": (["a", "m"], lambda p, x, y: p.matmul(x, y.T, transpose_y=True)),
    "matmul_int": (["i", "nz"], lambda p, x, y: p.matmul(x, y.T)),
    # manipulation
    "reshape": (["c"], lambda p, x: p.reshape(x, [0, -1])),
    "transpose": (["c"], lambda p, x: p.transpose(x, [2, 0, 1])),
    "concat": (["a", "pos"], lambda p, x, y: p.concat([x, y, x], axis=-1)),
    "stack": (["a", "pos"], lambda p, x, y: p.stack([x, y], axis=1)),
    "squeeze_unsqueeze": (["col"], lambda p, x: p.unsqueeze(p.squeeze(x, -1), 0)),
    "flatten": (["c"], lambda p, x: p.flatten(x, 1)),
    "split": (["c"], lambda p, x: p.split(x, [1, 3], axis=2)[1]),
    "tile": (["b"], lambda p, x: p.tile(x, [2, 1])),
    "expand": (["col"], lambda p, x: p.expand(x, [3, 4])),
    "flip": (["a"], lambda p, x: p.flip(x, [0, 1])),
    "gather": (["a", "index"], lambda p, x, i: p.gather(x, i)),
    "index_select": (["a", "index2"], lambda p, x, i: p.index_select(x, i, axis=1)),
    "cast": (["a"], lambda p, x: x.astype("int32")),
    # indexing
    "getitem_basic": (["c"], lambda p, x: x[1:, ::-1, None, 0]),
    "getitem_ellipsis": (["c"], lambda p, x: x[..., -1]),
    "getitem_neg_step": (["c"], lambda p, x: x[:, -1:0:-2]),
    "getitem_tensor": (["c", "index"], lambda p, x, i: x[:, i]),
    "getitem_two_tensors": (["c", "rows", "index2"], lambda p, x, i, j: x[:, i, j]),
    "getitem_apart": (["c", "rows", "index2"], lambda p, x, i, j: x[i - 1, :, j]),
    "getitem_int_and_tensor": (["c", "index2"], lambda p, x, j: x[0, :, j]),
    "setitem_scalar": (["a"], _set((slice(None), 1), 2.0)),
    "setitem_row": (["c"], _set((Ellipsis, 0), 0.5)),
    "setitem_tensor_value": (["a", "b"], lambda p, x, v: _set_tensor(p, x, v[:3])),
    "setitem_index": (["a", "rows"], _set_index),
    "setitem_mask": (["a"], _set_mask),
    # creation
    "zeros_like": (["i32"], lambda p, x: p.zeros_like(x)),
    "full_int": ([], lambda p: p.full([2, 3], 3)),
    "full_bool": ([], lambda p: p.full([2], True)),
    "ones_int": ([], lambda p: p.ones([2], dtype="int64")),
    "arange": ([], lambda p: p.arange(1, 10, 3)),
    "arange_float": ([], lambda p: p.arange(0, 1, 0.25)),
    "to_tensor_list": ([], lambda p: p.to_tensor([[1, 2], [3, 4.5]])),
    "eye": ([], lambda p: p.eye(3, 4)),
    "linspace": ([], lambda p: p.linspace(-1, 1, 5)),
    # dynamic graph
    "grad_intermediate": (["a"], _grad_of_intermediate),
    "grad_leaf_and_intermediate": (["a"], _grad_of_leaf_and_intermediate),
    "stopped_intermediate": (["a"], _stopped_intermediate),
    "second_derivative": (["a"], _second_derivative),
    "accumulated_grad": (["a"], _accumulated),
    "cleared_grad": (["a"], _cleared),
}


def _cotangent(shape) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return (np.cos(np.arange(n)) + 1.5).reshape(shape)


def run_case(paddle, data: dict, names: list, fn) -> tuple[dict, dict]:
    """(arrays, info) of one case: its output (and input gradients) and its dtype,
    shape or error."""
    inputs = [_leaf(paddle, data[n]) if data[n].dtype.kind == "f" else
              paddle.to_tensor(data[n]) for n in names]
    try:
        out = fn(paddle, *inputs)
    except Exception as e:  # noqa: BLE001  (the kind of error is compared, not raised)
        return {}, {"error": f"{type(e).__name__}: {str(e).splitlines()[-1][:120]}"}
    arrays = {"out": np.asarray(out.numpy())}
    info = {"dtype": str(out.dtype).replace("paddle.", ""), "shape": list(out.shape)}
    if not out.stop_gradient and out.dtype in (paddle.float32, paddle.float64) and \
            all(t.grad is None for t in inputs):
        weight = paddle.to_tensor(_cotangent(list(out.shape)).astype(arrays["out"].dtype))
        paddle.sum(out * weight).backward()
        for n, t in zip(names, inputs):
            if t.grad is not None:
                arrays[f"grad.{n}"] = t.grad.numpy()
    return arrays, info


def run_all(paddle, data: dict) -> tuple[dict, dict]:
    arrays, infos = {}, {}
    for name, (names, fn) in CASES.items():
        case_arrays, infos[name] = run_case(paddle, data, names, fn)
        arrays.update({f"{name}.{k}": v for k, v in case_arrays.items()})
    return arrays, infos


# ---------------------------------------------------------------- driver

def paddle_side(data_path: str, out_path: str) -> None:
    import warnings
    warnings.filterwarnings("ignore")
    paddle = importlib.import_module("paddle")
    arrays, infos = run_all(paddle, dict(np.load(data_path)))
    np.savez(out_path, **arrays)
    with open(out_path + ".json", "w") as f:
        json.dump(infos, f)


def _compare_info(name: str, mine: dict, theirs: dict) -> str | None:
    if "error" in mine or "error" in theirs:
        if "error" in mine and "error" in theirs:
            print(f"{name:40s} both raise: irflow {mine['error']!r}")
            return None
        side = "irflow" if "error" in mine else "paddle"
        return f"{name}: only {side} raises: {(mine if side == 'irflow' else theirs)['error']}"
    if mine != theirs:
        return f"{name}: irflow gives {mine}, paddle {theirs}"
    return None


def main() -> int:
    args = parse_args(paddle_side)
    if args is None:
        return 0
    irflow = importlib.import_module("irflow")
    data = make_data()
    expected, expected_info = run_paddle_side(__file__, data, args.paddle_python, quiet=True)
    actual, actual_info = run_all(irflow, data)
    failures = [f for name in CASES
                if (f := _compare_info(name, actual_info[name], expected_info[name]))]
    worst = 0.0
    for key in sorted(set(expected) | set(actual)):
        if key not in expected or key not in actual:
            if key.split(".")[0] not in {f.split(":")[0] for f in failures}:
                failures.append(f"{key}: only in {'irflow' if key in actual else 'paddle'}")
            continue
        a, e = actual[key].astype(np.float64), expected[key].astype(np.float64)
        if a.shape != e.shape:
            failures.append(f"{key}: shape {list(a.shape)} (irflow) vs {list(e.shape)} (paddle)")
            continue
        both_nan = np.isnan(a) & np.isnan(e)
        same_inf = np.isinf(a) & (a == e)
        diff = np.where(both_nan | same_inf, 0.0, np.abs(a - e))
        diff = float(np.max(diff, initial=0.0))
        scale = float(np.max(np.abs(np.where(np.isfinite(e), e, 0.0)), initial=0.0))
        tolerance = TOLERANCE["float64" if expected[key].dtype == np.float64 else "float32"]
        worst = max(worst, diff)
        flag = "" if diff <= tolerance * max(1.0, scale) else "   <-- exceeds tolerance"
        print(f"{key:40s} max abs diff {diff:.3e}   (max abs value {scale:.3e}){flag}")
        if flag:
            failures.append(f"{key}: max abs diff {diff:.3e}")
    print(f"\n{len(CASES)} cases, {len(actual)} arrays compared; largest max abs difference "
          f"{worst:.3e}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Compare irflow.nn with PaddlePaddle on identical weights and inputs (run by hand).

    python benchmarks/compare_paddle_nn.py [--paddle-python /tmp/pdvenv/bin/python]

The same case code runs twice: here on irflow (``import irflow as paddle``), and in
a subprocess on real PaddlePaddle, in the interpreter given by --paddle-python (this
file never imports paddle into the irflow process). Inputs and weights are drawn
here, passed through an .npz file, and loaded into both frameworks with
set_state_dict. Every forward output, loss, parameter gradient, input gradient and
BatchNorm running statistic is compared; the script prints the max abs difference
of each and exits 1 if one exceeds the tolerance (1e-4, relative where the
values exceed 1).
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

from paddle_side import parse_args, run_paddle_side

TOLERANCE = 1e-4  # on the max abs difference, relative to the values where they exceed 1


# ---------------------------------------------------------------- models (both frameworks)

def mlp(nn):
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 4))


def cnn(nn):
    return nn.Sequential(
        nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(), nn.MaxPool2D(2),
        nn.Conv2D(8, 8, 3, stride=2, padding=1, groups=2), nn.BatchNorm2D(8), nn.LeakyReLU(0.1),
        nn.AvgPool2D(2, ceil_mode=True), nn.Conv2D(8, 6, (2, 3), padding=[1, 1, 1, 2],
                                                    dilation=(1, 2)),
        nn.AdaptiveAvgPool2D(2), nn.Flatten(), nn.Linear(24, 5))


def transformer_block(nn):
    return nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 16),
                         nn.GELU(approximate=True), nn.LayerNorm([16], epsilon=1e-3),
                         nn.BatchNorm1D(16), nn.Sigmoid(), nn.Linear(16, 6), nn.SiLU())


MODELS = {"mlp": (mlp, [4, 8]), "cnn": (cnn, [2, 3, 14, 14]),
          "transformer": (transformer_block, [8, 12])}


# ---------------------------------------------------------------- cases

def _np(t):
    return None if t is None else np.asarray(t.numpy(), dtype=np.float64)


def run_model(paddle, name, data):
    builder, _ = MODELS[name]
    model = builder(paddle.nn)
    model.set_state_dict({k[len(name) + 1:]: v for k, v in data.items()
                          if k.startswith(name + ".")})
    x = paddle.to_tensor(data[f"x.{name}"], stop_gradient=False)
    labels = paddle.to_tensor(data[f"labels.{name}"])
    model.train()
    out = model(x)
    loss = paddle.nn.functional.cross_entropy(out, labels)
    loss.backward()
    results = {"out": _np(out), "loss": _np(loss), "grad.x": _np(x.grad)}
    for key, p in model.named_parameters():
        if not p.stop_gradient:
            results[f"grad.{key}"] = _np(p.grad)
    for key, value in model.state_dict().items():
        if key.endswith(("_mean", "_variance")):
            results[f"state.{key}"] = _np(value)
    model.eval()
    results["eval_out"] = _np(model(x))
    return {f"{name}.{k}": v for k, v in results.items()}


def loss_cases(paddle, data):
    F = paddle.nn.functional
    logits = data["logits"]
    hard = data["hard"]
    with_ignored = data["hard_ignored"]
    soft = data["soft"]
    weight = paddle.to_tensor(data["class_weight"])
    probs = data["probs"]
    targets = data["targets"]
    cases = {}
    for reduction in ("none", "mean", "sum"):
        cases[f"ce.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), reduction=r))
        cases[f"ce_n1.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard[:, None]), reduction=r))
        cases[f"ce_weight.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), weight=weight, reduction=r))
        cases[f"ce_ignore_default.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(with_ignored), reduction=r))
        cases[f"ce_ignore_default_weight.{reduction}"] = (
            logits, lambda x, r=reduction: F.cross_entropy(
                x, paddle.to_tensor(with_ignored), weight=weight, reduction=r))
        cases[f"ce_ignore_1.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), ignore_index=1, reduction=r))
        cases[f"ce_ignore_1_weight.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), ignore_index=1, weight=weight, reduction=r))
        cases[f"ce_soft.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(soft), soft_label=True, reduction=r))
        cases[f"ce_soft_weight.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(soft), soft_label=True, weight=weight, reduction=r))
        cases[f"ce_soft_smooth.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(soft), soft_label=True, label_smoothing=0.3, reduction=r))
        cases[f"ce_smooth.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), label_smoothing=0.1, reduction=r))
        cases[f"ce_smooth_weight.{reduction}"] = (logits, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), label_smoothing=0.2, weight=weight, reduction=r))
        cases[f"ce_axis1.{reduction}"] = (data["logits3"], lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(data["hard3"]), axis=1, reduction=r))
        cases[f"ce_probs.{reduction}"] = (probs, lambda x, r=reduction: F.cross_entropy(
            x, paddle.to_tensor(hard), use_softmax=False, reduction=r))
        cases[f"nll.{reduction}"] = (logits, lambda x, r=reduction: F.nll_loss(
            F.log_softmax(x), paddle.to_tensor(with_ignored), reduction=r))
        cases[f"nll_weight.{reduction}"] = (logits, lambda x, r=reduction: F.nll_loss(
            F.log_softmax(x), paddle.to_tensor(with_ignored), weight=weight, reduction=r))
        cases[f"nll_3d.{reduction}"] = (data["logits3"], lambda x, r=reduction: F.nll_loss(
            F.log_softmax(x, axis=1), paddle.to_tensor(data["hard3"]), reduction=r))
        cases[f"mse.{reduction}"] = (probs, lambda x, r=reduction: F.mse_loss(
            x, paddle.to_tensor(targets), reduction=r))
        cases[f"l1.{reduction}"] = (probs, lambda x, r=reduction: F.l1_loss(
            x, paddle.to_tensor(targets), reduction=r))
        cases[f"bce.{reduction}"] = (probs, lambda x, r=reduction: F.binary_cross_entropy(
            x, paddle.to_tensor(targets), reduction=r))
        cases[f"bce_weight.{reduction}"] = (probs, lambda x, r=reduction: F.binary_cross_entropy(
            x, paddle.to_tensor(targets), weight=paddle.to_tensor(data["elem_weight"]),
            reduction=r))
        cases[f"bce_logits.{reduction}"] = (logits, lambda x, r=reduction:
                                            F.binary_cross_entropy_with_logits(
                                                x, paddle.to_tensor(targets), reduction=r))
        cases[f"bce_logits_pos.{reduction}"] = (logits, lambda x, r=reduction:
                                                F.binary_cross_entropy_with_logits(
                                                    x, paddle.to_tensor(targets),
                                                    weight=paddle.to_tensor(data["elem_weight"]),
                                                    pos_weight=paddle.to_tensor(
                                                        data["class_weight"]), reduction=r))
    cases["CrossEntropyLoss"] = (logits, lambda x: paddle.nn.CrossEntropyLoss(
        weight=weight, reduction="sum")(x, paddle.to_tensor(hard)))
    cases["BCEWithLogitsLoss"] = (logits, lambda x: paddle.nn.BCEWithLogitsLoss()(
        x, paddle.to_tensor(targets)))
    cases["MSELoss"] = (probs, lambda x: paddle.nn.MSELoss()(x, paddle.to_tensor(targets)))
    cases["L1Loss"] = (probs, lambda x: paddle.nn.L1Loss()(x, paddle.to_tensor(targets)))
    return cases


def functional_cases(paddle, data):
    F = paddle.nn.functional
    x4 = data["image"]
    return {
        "softmax_axis0": (data["logits"], lambda x: F.softmax(x, axis=0)),
        "log_softmax": (data["logits"], lambda x: F.log_softmax(x)),
        "gelu": (data["logits"], lambda x: F.gelu(x)),
        "gelu_tanh": (data["logits"], lambda x: F.gelu(x, approximate=True)),
        "leaky_relu": (data["logits"], lambda x: F.leaky_relu(x, 0.2)),
        "silu": (data["logits"], lambda x: F.silu(x)),
        "normalize": (data["logits"], lambda x: F.normalize(x)),
        "normalize_p1": (data["logits"], lambda x: F.normalize(x, p=1, axis=0)),
        "pad_spatial": (x4, lambda x: F.pad(x, [1, 0, 2, 1], value=0.5)),
        "pad_all_axes": (data["logits"], lambda x: F.pad(x, [1, 0, 2, 1])),
        "pad_last": (data["logits3"], lambda x: F.pad(x, [2, 1])),
        "conv_same": (x4, lambda x: F.conv2d(x, paddle.to_tensor(data["filter"]),
                                             stride=2, padding="SAME")),
        "conv_nhwc": (x4, lambda x: F.conv2d(x, paddle.to_tensor(data["filter_nhwc"]),
                                             padding=1, data_format="NHWC")),
        "max_pool_pad": (x4, lambda x: F.max_pool2d(x, 3, 2, padding=1)),
        "avg_pool_incl": (x4, lambda x: F.avg_pool2d(x, 3, 2, padding=1, exclusive=False)),
        "adaptive": (x4, lambda x: F.adaptive_avg_pool2d(x, [3, 2])),
        "linear": (data["logits"], lambda x: F.linear(x, paddle.to_tensor(data["w"]),
                                                      paddle.to_tensor(data["b"]))),
        "dropout_eval": (data["logits"], lambda x: F.dropout(x, 0.3, training=False,
                                                             mode="downscale_in_infer")),
        "one_hot": (None, lambda _: F.one_hot(paddle.to_tensor(data["hard"]), 5)),
        "embedding_pad": (None, lambda _: F.embedding(paddle.to_tensor(data["ids"]),
                                                      paddle.to_tensor(data["table"]),
                                                      padding_idx=2)),
    }


def run_function_cases(paddle, data, cases) -> dict:
    results = {}
    for name, (x_np, fn) in cases.items():
        x = None if x_np is None else paddle.to_tensor(x_np, stop_gradient=False)
        out = fn(x)
        results[f"{name}.out"] = _np(out)
        if x is not None:
            paddle.sum(out * paddle.to_tensor(_cotangent(out.shape))).backward()
            results[f"{name}.grad"] = _np(x.grad)
    return results


def _cotangent(shape) -> np.ndarray:
    """A fixed, non-constant output weighting, so gradients are not just sums."""
    n = int(np.prod(shape)) if shape else 1
    return (np.cos(np.arange(n)) + 1.5).reshape(shape).astype(np.float32)


def run_all(paddle, data) -> dict:
    results = {}
    for name in MODELS:
        results.update(run_model(paddle, name, data))
    results.update(run_function_cases(paddle, data, loss_cases(paddle, data)))
    results.update(run_function_cases(paddle, data, functional_cases(paddle, data)))
    return results


# ---------------------------------------------------------------- data

def make_data(irflow) -> dict:
    rng = np.random.default_rng(2026)
    data = {}
    for name, (builder, x_shape) in MODELS.items():
        for key, value in builder(irflow.nn).state_dict().items():
            if key.endswith("_variance"):
                array = rng.uniform(0.5, 2.0, value.shape)
            else:
                array = rng.normal(0, 0.5, value.shape)
            data[f"{name}.{key}"] = array.astype(np.float32)
        data[f"x.{name}"] = rng.normal(size=x_shape).astype(np.float32)
        classes = {"mlp": 4, "cnn": 5, "transformer": 6}[name]
        data[f"labels.{name}"] = rng.integers(0, classes, x_shape[0]).astype(np.int64)
    n, c = 6, 5
    data["logits"] = rng.normal(size=(n, c)).astype(np.float32) * 2
    data["hard"] = rng.integers(0, c, n).astype(np.int64)
    data["hard_ignored"] = np.where(np.arange(n) % 3 == 1, -100, data["hard"]).astype(np.int64)
    soft = rng.uniform(size=(n, c))
    data["soft"] = (soft / soft.sum(1, keepdims=True)).astype(np.float32)
    data["class_weight"] = rng.uniform(0.2, 2.0, c).astype(np.float32)
    data["probs"] = rng.uniform(0.02, 0.98, (n, c)).astype(np.float32)
    data["targets"] = rng.uniform(0, 1, (n, c)).astype(np.float32)
    data["elem_weight"] = rng.uniform(0.2, 2.0, (n, c)).astype(np.float32)
    data["logits3"] = rng.normal(size=(2, c, 3)).astype(np.float32)
    data["hard3"] = rng.integers(0, c, (2, 3)).astype(np.int64)
    data["image"] = rng.normal(size=(2, 4, 7, 6)).astype(np.float32)
    data["filter"] = rng.normal(size=(3, 4, 3, 2)).astype(np.float32)
    data["filter_nhwc"] = rng.normal(size=(3, 6, 3, 3)).astype(np.float32)
    data["w"] = rng.normal(size=(c, 3)).astype(np.float32)
    data["b"] = rng.normal(size=3).astype(np.float32)
    data["ids"] = rng.integers(0, 4, (3, 2)).astype(np.int64)
    data["table"] = rng.normal(size=(4, 3)).astype(np.float32)
    return data


# ---------------------------------------------------------------- driver

def paddle_side(data_path: str, out_path: str) -> None:
    import warnings
    warnings.filterwarnings("ignore")
    paddle = importlib.import_module("paddle")
    data = dict(np.load(data_path))
    results = run_all(paddle, data)
    np.savez(out_path, **{k: v for k, v in results.items() if v is not None})


def main() -> int:
    args = parse_args(paddle_side)
    if args is None:
        return 0
    irflow = importlib.import_module("irflow")
    importlib.import_module("irflow.nn")
    data = make_data(irflow)
    expected, _ = run_paddle_side(__file__, data, args.paddle_python)
    actual = {k: v for k, v in run_all(irflow, data).items() if v is not None}
    worst = 0.0
    failures = []
    for key in sorted(set(expected) | set(actual)):
        if key not in expected or key not in actual:
            failures.append(f"{key}: only in {'irflow' if key in actual else 'paddle'}")
            continue
        if expected[key].shape != actual[key].shape:
            failures.append(f"{key}: shape {list(actual[key].shape)} (irflow) vs "
                            f"{list(expected[key].shape)} (paddle)")
            continue
        diff = float(np.max(np.abs(expected[key] - actual[key]), initial=0.0))
        scale = float(np.max(np.abs(expected[key]), initial=0.0))
        worst = max(worst, diff)
        flag = "" if diff <= TOLERANCE * max(1.0, scale) else "   <-- exceeds tolerance"
        print(f"{key:48s} max abs diff {diff:.3e}   (max abs value {scale:.3e}){flag}")
        if flag:
            failures.append(f"{key}: max abs diff {diff:.3e}")
    print(f"\n{len(actual)} arrays compared; largest max abs difference {worst:.3e}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

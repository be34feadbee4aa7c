"""irflow's optimizers and learning-rate schedulers next to PaddlePaddle's, by hand.

Runs each case (an optimizer configuration, fixed starting parameters and a fixed
sequence of gradients) with irflow, then with Paddle in a separate interpreter that
has Paddle installed (irflow never imports paddle), and prints the largest absolute
difference of the parameters and of the optimizer state after the last step, and of
the learning rates each scheduler produces::

    python benchmarks/compare_paddle_optimizer.py [--paddle-python /tmp/pdvenv/bin/python]

(all optimizers, every scheduler, ReduceOnPlateau fed a fixed metric sequence)

Both sides build the optimizers with the same code (`build`), which is the point:
irflow's API is Paddle's. Gradients reach Paddle as ``(p * g).sum().backward()``,
whose gradient is exactly g; irflow's are assigned to ``p.grad``. Parameters are
float32, as in training. Paddle's CPU Momentum kernel ignores ``rescale_grad`` (its
GPU kernel and its documentation apply it, as irflow does), so no case sets it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

STEPS = 6
SHAPES = {"w_0": (5, 4), "b_0": (4,), "w_1": (4, 3)}

# Each case: optimizer name and keyword arguments; optional "sched" (scheduler name
# and arguments, stepped after every optimizer step), "clip" (clip name, arguments)
# and "groups" (per-group options, the parameters split as listed).
CASES = {
    "sgd": {"opt": ("SGD", {"learning_rate": 0.1})},
    "sgd_l2": {"opt": ("SGD", {"learning_rate": 0.1, "weight_decay": 0.05})},
    "momentum": {"opt": ("Momentum", {"learning_rate": 0.05, "momentum": 0.9})},
    "momentum_nesterov_l2": {"opt": ("Momentum", {"learning_rate": 0.05, "momentum": 0.8,
                                                  "use_nesterov": True,
                                                  "weight_decay": 0.01})},
    "adam": {"opt": ("Adam", {"learning_rate": 0.01})},
    "adam_l2_eps": {"opt": ("Adam", {"learning_rate": 0.02, "beta1": 0.8, "beta2": 0.99,
                                     "epsilon": 1e-3, "weight_decay": 0.05})},
    "adam_amsgrad": {"opt": ("Adam", {"learning_rate": 0.01, "amsgrad": True})},
    "adamw": {"opt": ("AdamW", {"learning_rate": 0.01})},
    "adamw_no_bias_decay": {"opt": ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.3,
                                              "apply_decay_param_fun": "not_bias"})},
    "rmsprop": {"opt": ("RMSProp", {"learning_rate": 0.01})},
    "rmsprop_centered_momentum": {"opt": ("RMSProp", {"learning_rate": 0.01, "rho": 0.9,
                                                      "momentum": 0.5, "centered": True,
                                                      "weight_decay": 0.01})},
    "adagrad": {"opt": ("Adagrad", {"learning_rate": 0.1})},
    "adagrad_initial": {"opt": ("Adagrad", {"learning_rate": 0.1, "epsilon": 1e-4,
                                            "initial_accumulator_value": 0.5})},
    "adadelta": {"opt": ("Adadelta", {"learning_rate": 0.5, "rho": 0.9})},
    "adamax": {"opt": ("Adamax", {"learning_rate": 0.01})},
    "adamax_l2": {"opt": ("Adamax", {"learning_rate": 0.02, "beta1": 0.8, "beta2": 0.95,
                                     "weight_decay": 0.05})},
    "lamb": {"opt": ("Lamb", {"learning_rate": 0.01})},
    "lamb_exclude_bias": {"opt": ("Lamb", {"learning_rate": 0.01, "lamb_weight_decay": 0.1,
                                           "exclude_from_weight_decay_fn": "bias"})},
    "lamb_always_adapt": {"opt": ("Lamb", {"learning_rate": 0.01, "lamb_weight_decay": 0.0,
                                           "always_adapt": True})},
    "lamb_no_decay": {"opt": ("Lamb", {"learning_rate": 0.01, "lamb_weight_decay": 0.0})},
    "nadam": {"opt": ("NAdam", {"learning_rate": 0.01})},
    "nadam_decay_l2": {"opt": ("NAdam", {"learning_rate": 0.02, "beta1": 0.8,
                                         "momentum_decay": 0.05, "weight_decay": 0.01})},
    "radam": {"opt": ("RAdam", {"learning_rate": 0.01})},
    "radam_fast_beta2": {"opt": ("RAdam", {"learning_rate": 0.01, "beta2": 0.6,
                                           "epsilon": 1e-4})},
    "rmsprop_groups": {"opt": ("RMSProp", {"learning_rate": 0.01}),
                       "groups": [(["w_0"], {"rho": 0.8}),
                                  (["b_0", "w_1"], {"learning_rate": 2.0, "momentum": 0.3})]},
    "sgd_global_norm_clip": {"opt": ("SGD", {"learning_rate": 0.1}),
                             "clip": ("ClipGradByGlobalNorm", {"clip_norm": 1.0})},
    "momentum_norm_clip": {"opt": ("Momentum", {"learning_rate": 0.05}),
                           "clip": ("ClipGradByNorm", {"clip_norm": 0.5})},
    "adam_value_clip": {"opt": ("Adam", {"learning_rate": 0.01}),
                        "clip": ("ClipGradByValue", {"max": 0.3})},
    "adam_step_decay": {"opt": ("Adam", {}),
                        "sched": ("StepDecay", {"learning_rate": 0.05, "step_size": 2,
                                                "gamma": 0.5})},
    "momentum_warmup_cosine": {"opt": ("Momentum", {}),
                               "sched": ("LinearWarmup", {
                                   "learning_rate": ("CosineAnnealingDecay",
                                                     {"learning_rate": 0.1, "T_max": 3}),
                                   "warmup_steps": 2, "start_lr": 0.0, "end_lr": 0.1})},
    "sgd_one_cycle": {"opt": ("SGD", {}),
                      "sched": ("OneCycleLR", {"max_learning_rate": 0.2, "total_steps": 8})},
    "adamax_noam": {"opt": ("Adamax", {}),
                    "sched": ("NoamDecay", {"d_model": 16, "warmup_steps": 3,
                                            "learning_rate": 0.5})},
    "rmsprop_piecewise": {"opt": ("RMSProp", {}),
                          "sched": ("PiecewiseDecay", {"boundaries": [2, 4],
                                                       "values": [0.02, 0.01, 0.005]})},
    "adam_groups": {"opt": ("Adam", {"learning_rate": 0.01, "weight_decay": 0.01}),
                    "groups": [(["w_0", "b_0"], {}),
                               (["w_1"], {"learning_rate": 0.5, "beta1": 0.7,
                                          "weight_decay": 0.1})]},
    "adamw_groups": {"opt": ("AdamW", {"learning_rate": 0.01}),
                     "groups": [(["w_0"], {"weight_decay": 0.2}),
                                (["b_0", "w_1"], {"learning_rate": 2.0})]},
}

SCHEDULERS = {
    "StepDecay": {"learning_rate": 0.5, "step_size": 3, "gamma": 0.3},
    "MultiStepDecay": {"learning_rate": 0.5, "milestones": [2, 5, 6], "gamma": 0.5},
    "ExponentialDecay": {"learning_rate": 0.5, "gamma": 0.9},
    "CosineAnnealingDecay": {"learning_rate": 0.5, "T_max": 4, "eta_min": 0.01},
    "LinearWarmup": {"learning_rate": 0.5, "warmup_steps": 4, "start_lr": 0.0, "end_lr": 0.5},
    "PiecewiseDecay": {"boundaries": [3, 6, 8], "values": [1.0, 0.5, 0.1, 0.01]},
    "NaturalExpDecay": {"learning_rate": 0.5, "gamma": 0.3},
    "InverseTimeDecay": {"learning_rate": 0.5, "gamma": 0.3},
    "PolynomialDecay": {"learning_rate": 0.5, "decay_steps": 5, "end_lr": 0.01, "power": 2.0},
    "PolynomialDecay/cycle": {"learning_rate": 0.5, "decay_steps": 4, "cycle": True},
    "LambdaDecay": {"learning_rate": 0.5, "lr_lambda": "decay"},
    "MultiplicativeDecay": {"learning_rate": 0.5, "lr_lambda": "decay"},
    "NoamDecay": {"d_model": 64, "warmup_steps": 5, "learning_rate": 2.0},
    "OneCycleLR": {"max_learning_rate": 0.3, "total_steps": 12},
    "OneCycleLR/linear_three_phase": {"max_learning_rate": 0.3, "total_steps": 15,
                                      "phase_pct": 0.25, "anneal_strategy": "linear",
                                      "three_phase": True, "divide_factor": 10.0},
    "CyclicLR": {"base_learning_rate": 0.1, "max_learning_rate": 0.5, "step_size_up": 3},
    "CyclicLR/triangular2": {"base_learning_rate": 0.1, "max_learning_rate": 0.5,
                             "step_size_up": 2, "step_size_down": 3, "mode": "triangular2"},
    "CyclicLR/exp_range": {"base_learning_rate": 0.1, "max_learning_rate": 0.5,
                           "step_size_up": 2, "mode": "exp_range", "exp_gamma": 0.9},
    "LinearLR": {"learning_rate": 0.5, "total_steps": 5, "start_factor": 0.25},
    "CosineAnnealingWarmRestarts": {"learning_rate": 0.5, "T_0": 3, "T_mult": 2,
                                    "eta_min": 0.01},
    "LinearWarmup/exponential": {"learning_rate": ("ExponentialDecay",
                                                   {"learning_rate": 0.4, "gamma": 0.8}),
                                 "warmup_steps": 3, "start_lr": 0.01, "end_lr": 0.4},
}

# ReduceOnPlateau: arguments, and the metric given to each step.
PLATEAUS = {
    "ReduceOnPlateau": ({"learning_rate": 0.5, "patience": 2},
                        [5.0, 4.0, 4.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]),
    "ReduceOnPlateau/max_abs_cooldown": ({"learning_rate": 0.5, "mode": "max", "patience": 1,
                                          "threshold": 0.1, "threshold_mode": "abs",
                                          "cooldown": 2, "factor": 0.5, "min_lr": 0.1},
                                         [1.0, 1.05, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2]),
}

# Functions named in the cases (the same code on both sides).
FUNCTIONS = {
    "not_bias": lambda n: not n.endswith(".b_0"),
    "bias": lambda p: p.name.endswith(".b_0"),
    "decay": lambda epoch: 0.9 ** epoch + 0.01 * (epoch % 3),
}


def data():
    rng = np.random.default_rng(2026)
    start = {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}
    grads = [{k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}
             for _ in range(STEPS)]
    return start, grads


class Side:
    """What differs between irflow and Paddle: making parameters, clips, gradients."""

    def __init__(self, name: str):
        self.name = name
        if name == "paddle":
            import paddle
            paddle.set_device("cpu")
            self.fw, self.clips = paddle, paddle.nn
        else:
            import irflow
            import irflow.optimizer
            import irflow.optimizer.clip
            self.fw, self.clips = irflow, irflow.optimizer.clip

    def parameter(self, name: str, value: np.ndarray):
        if self.name == "paddle":
            init = self.fw.nn.initializer.Assign(value)
            return self.fw.create_parameter(list(value.shape), "float32", name=name,
                                            default_initializer=init)
        return self.fw.Parameter(value.copy(), name=name)

    def set_grad(self, param, grad: np.ndarray) -> None:
        if self.name == "paddle":
            (param * self.fw.to_tensor(grad)).sum().backward()
        else:
            param.grad = grad.copy()


def scheduler(side: Side, spec):
    name, kwargs = spec
    kwargs = {k: scheduler(side, v) if isinstance(v, tuple) else FUNCTIONS.get(v, v)
              if isinstance(v, str) else v for k, v in kwargs.items()}
    return getattr(side.fw.optimizer.lr, name.split("/")[0])(**kwargs)


def build(side: Side, case: dict, params: dict):
    """The optimizer (and scheduler) of `case`, with the same code on both sides."""
    name, kwargs = case["opt"]
    kwargs = {k: FUNCTIONS.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    sched = scheduler(side, case["sched"]) if "sched" in case else None
    if sched is not None:
        kwargs["learning_rate"] = sched
    if "clip" in case:
        clip_name, clip_kwargs = case["clip"]
        kwargs["grad_clip"] = getattr(side.clips, clip_name)(**clip_kwargs)
    if "groups" in case:
        kwargs["parameters"] = [{"params": [params[n] for n in names], **options}
                                for names, options in case["groups"]]
    else:
        kwargs["parameters"] = list(params.values())
    return getattr(side.fw.optimizer, name)(**kwargs), sched


def run(side_name: str) -> dict[str, np.ndarray]:
    """Every case and scheduler on one side: arrays keyed ``case/param``,
    ``case/state/<accumulator>`` and ``lr/<scheduler>``."""
    side = Side(side_name)
    start, grads = data()
    out = {}
    for case_name, case in CASES.items():
        # Paddle wants parameter names unique in the process.
        params = {k: side.parameter(f"{case_name}.{k}", v) for k, v in start.items()}
        opt, sched = build(side, case, params)
        for step_grads in grads:
            for k, p in params.items():
                side.set_grad(p, step_grads[k])
            opt.step()
            opt.clear_grad()
            if sched is not None:
                sched.step()
        for k, p in params.items():
            out[f"{case_name}/{k}"] = p.numpy()
        for key, value in opt.state_dict().items():
            if key != "LR_Scheduler":
                out[f"{case_name}/state/{key}"] = np.asarray(value.numpy()).reshape(-1)
    for name, kwargs in SCHEDULERS.items():
        sched = scheduler(side, (name, kwargs))
        lrs = []
        for _ in range(12):
            lrs.append(sched())
            sched.step()
        sched.step(3)
        lrs.append(sched())
        out[f"lr/{name}"] = np.array(lrs)
    for name, (kwargs, metrics) in PLATEAUS.items():
        sched = scheduler(side, (name, kwargs))
        lrs = []
        for metric in metrics:
            sched.step(metric)
            lrs.append(sched())
        out[f"lr/{name}"] = np.array(lrs)
    return out


def compare(ours: dict, theirs: dict) -> None:
    rows = {}
    for key, value in ours.items():
        group = key.split("/")[0] if not key.startswith("lr/") else key
        kind = "lr" if key.startswith("lr/") else "state" if "/state/" in key else "params"
        if key not in theirs:
            rows.setdefault((group, kind), []).append(float("nan"))
            print(f"  missing on the Paddle side: {key}")
            continue
        rows.setdefault((group, kind), []).append(float(np.max(np.abs(value - theirs[key]))))
    missing = sorted(set(theirs) - set(ours))
    for key in missing:
        print(f"  missing on the irflow side: {key}")
    print(f"{'case':32s} {'what':7s} max |irflow - paddle|")
    for (group, kind), diffs in rows.items():
        print(f"{group:32s} {kind:7s} {max(diffs):.3e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paddle-python", default=os.environ.get("PADDLE_PYTHON",
                                                                  "/tmp/pdvenv/bin/python"))
    parser.add_argument("--side", choices=["irflow", "paddle"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side == "paddle":
        np.savez(args.out, **run("paddle"))
        return
    ours = run("irflow")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "paddle.npz")
        subprocess.run([args.paddle_python, os.path.abspath(__file__), "--side", "paddle",
                        "--out", out], check=True, stderr=subprocess.DEVNULL)
        with np.load(out) as f:
            theirs = dict(f)
    compare(ours, theirs)


if __name__ == "__main__":
    sys.exit(main())

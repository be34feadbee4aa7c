"""Side-by-side training with irflow and real PaddlePaddle: the same models (written once,
below, for `paddle`), the same initial weights and data, several optimizer steps;
prints the largest differences in losses, gradients and final parameters.

Run by hand (needs a Python with paddlepaddle for the Paddle side):

    python benchmarks/compare_paddle_training.py --paddle-python /tmp/pdvenv/bin/python

Expect float32 rounding-level differences (1e-7 to 1e-6), with one exception worth
knowing: in the CNN, BatchNorm cancels the convolution's bias, so that bias's true
gradient is zero and both frameworks compute rounding noise (~1e-9) for it; Adam
divides by the noise's own magnitude, so the two noises become different updates of
size ~lr. Measured on 2026-11-29: all entries <= 1.4e-6 except cnn/adam conv.bias
(7.8e-3), the effect just described.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MODELS = r'''
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = self.pool(F.relu(self.bn(self.conv(x))))
        return self.fc(paddle.flatten(h, 1))


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


CASES = {"mlp": (MLP, [16, 20]), "cnn": (CNN, [16, 3, 8, 8]), "block": (Block, [16, 20])}


def train(name, optimizer, state, xs, ys, steps):
    cls, _ = CASES[name]
    model = cls()
    model.set_state_dict({k: paddle.to_tensor(v) for k, v in state.items()})
    model.train()
    if optimizer == "sgd":
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    else:
        opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters(),
                                    weight_decay=0.001)
    out = {}
    for step in range(steps):
        loss = F.cross_entropy(model(paddle.to_tensor(xs[step])), paddle.to_tensor(ys[step]))
        loss.backward()
        out[f"loss{step}"] = loss.numpy()
        if step == 0:
            for k, p in model.named_parameters():
                if p.grad is not None:
                    out[f"grad0/{k}"] = p.grad.numpy()
        opt.step()
        opt.clear_grad()
    for k, v in model.state_dict().items():
        out[f"final/{k}"] = v.numpy()
    return out
'''

RUNNER = r'''
import sys, numpy as np
exec(open(sys.argv[1]).read())
data = np.load(sys.argv[2])
case, optimizer, steps = sys.argv[3], sys.argv[4], int(sys.argv[5])
state = {k[6:]: data[k] for k in data.files if k.startswith("state/")}
xs = [data[f"x{i}"] for i in range(steps)]
ys = [data[f"y{i}"] for i in range(steps)]
np.savez(sys.argv[6], **train(case, optimizer, state, xs, ys, steps))
'''


def run_side(python, env_setup, workdir, case, optimizer, steps, data_path, tag):
    models = os.path.join(workdir, f"models_{tag}.py")
    with open(models, "w") as f:
        f.write(env_setup + MODELS)
    runner = os.path.join(workdir, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    out = os.path.join(workdir, f"{case}_{optimizer}_{tag}.npz")
    subprocess.run([python, runner, models, data_path, case, optimizer, str(steps), out],
                   check=True, cwd=workdir)
    return dict(np.load(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paddle-python", default="/tmp/pdvenv/bin/python")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    irflow_setup = (f"import sys; sys.path.insert(0, {repo!r})\n"
                    "import irflow, sys as _s; _s.modules['paddle'] = irflow\n"
                    "_s.modules['paddle.nn'] = irflow.nn\n"
                    "_s.modules['paddle.nn.functional'] = irflow.nn.functional\n")
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        sys.path.insert(0, repo)
        import irflow
        sys.modules["paddle"] = irflow
        sys.modules["paddle.nn"] = irflow.nn
        sys.modules["paddle.nn.functional"] = irflow.nn.functional
        namespace = {}
        exec(MODELS, namespace)
        rng = np.random.default_rng(0)
        for case, (cls, shape) in namespace["CASES"].items():
            irflow.seed(1)
            state = {f"state/{k}": v.numpy() for k, v in cls().state_dict().items()}
            data = dict(state)
            for i in range(args.steps):
                data[f"x{i}"] = rng.standard_normal(shape).astype(np.float32)
                data[f"y{i}"] = rng.integers(0, 5, shape[0]).astype(np.int64)
            data_path = os.path.join(workdir, f"{case}.npz")
            np.savez(data_path, **data)
            for optimizer in ("sgd", "adam"):
                ours = run_side(sys.executable, irflow_setup, workdir, case, optimizer,
                                args.steps, data_path, "irflow")
                theirs = run_side(args.paddle_python, "", workdir, case, optimizer,
                                  args.steps, data_path, "paddle")
                diffs = {k: float(np.max(np.abs(ours[k].astype(np.float64) -
                                                theirs[k].astype(np.float64))))
                         for k in theirs}
                worst = max(diffs, key=diffs.get)
                results[f"{case}/{optimizer}"] = {
                    "loss": max(v for k, v in diffs.items() if k.startswith("loss")),
                    "grad0": max((v for k, v in diffs.items() if k.startswith("grad0")),
                                 default=0.0),
                    "final": max(v for k, v in diffs.items() if k.startswith("final")),
                    "worst": worst,
                }
    print(f"{'case':<14}{'loss':>12}{'grads step0':>14}{'final state':>14}   worst entry")
    for name, r in results.items():
        print(f"{name:<14}{r['loss']:>12.2e}{r['grad0']:>14.2e}{r['final']:>14.2e}   {r['worst']}")
    print(json.dumps(results, indent=1) if "--json" in sys.argv else "")


if __name__ == "__main__":
    main()

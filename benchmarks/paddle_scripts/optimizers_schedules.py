"""An MLP trained eagerly by each optimizer under a learning-rate schedule; weights and
data from NumPy, so both frameworks start alike. Prints the losses and the rates."""
import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

rng = np.random.default_rng(0)
x = paddle.to_tensor(rng.standard_normal((32, 6)).astype("float32"))
y = paddle.to_tensor((rng.standard_normal(32) > 0).astype("int64"))
init = {k: (np.random.default_rng(1).standard_normal(s) * 0.4).astype("float32")
        for k, s in {"0.weight": (6, 16), "0.bias": (16,), "2.weight": (16, 3),
                     "2.bias": (3,)}.items()}
lr = paddle.optimizer.lr
SETUPS = [
    ("RMSProp", lambda: lr.OneCycleLR(0.05, total_steps=12), {"momentum": 0.5, "centered": True}),
    ("Adagrad", lambda: lr.PiecewiseDecay([4, 8], [0.2, 0.1, 0.05]), {}),
    ("Adadelta", lambda: lr.LinearWarmup(lr.PolynomialDecay(1.0, 8), 3, 0.1, 1.0), {}),
    ("Adamax", lambda: lr.NoamDecay(16, 4, learning_rate=0.5), {"weight_decay": 0.01}),
    ("Lamb", lambda: lr.CyclicLR(0.005, 0.05, 3), {"lamb_weight_decay": 0.05}),
    ("Adam", lambda: lr.CosineAnnealingWarmRestarts(0.02, T_0=4), {"amsgrad": True}),
    ("Momentum", lambda: lr.LambdaDecay(0.1, lambda e: 0.9 ** e), {"use_nesterov": True}),
    ("SGD", lambda: lr.MultiStepDecay(0.3, [3, 7], 0.5), {}),
    ("NAdam", lambda: lr.ExponentialDecay(0.02, 0.9), {"momentum_decay": 0.01}),
    ("RAdam", lambda: lr.StepDecay(0.05, 4, 0.5), {"beta2": 0.99}),
]
for name, schedule, options in SETUPS:
    net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    net.set_state_dict({k: paddle.to_tensor(v) for k, v in init.items()})
    sched = schedule()
    opt = getattr(paddle.optimizer, name)(learning_rate=sched, parameters=net.parameters(),
                                          **options)
    losses, rates = [], []
    for step in range(12):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        rates.append(opt.get_lr())
        sched.step()
        losses.append(loss.item())
    print(name, " ".join(f"{v:.6f}" for v in losses))
    print(name, "lr", " ".join(f"{v:.6g}" for v in rates))
plateau = lr.ReduceOnPlateau(0.1, patience=1, factor=0.5)
for metric in [1.0, 0.9, 0.95, 0.97, 0.8, 0.85, 0.9]:
    plateau.step(paddle.to_tensor(metric))
print("plateau", plateau(), plateau.state_dict())

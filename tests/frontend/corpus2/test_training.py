"""Training as tutorials write it: whole steps compiled (backward, step, clear_grad
inside), several steps per call, skipped steps, gradient clipping, accumulation;
layers that behave differently in train and eval; MNIST/CIFAR-style models."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import (MODES, ConversionError, OutputMismatch, check, check_message, check_outputs,
                     check_twins, compiled, ints, randn, reset_parameters, spec)

IMG_SPEC = [paddle.static.InputSpec([None, 1, 4, 4]), paddle.static.InputSpec([None], "int64")]
BATCHES = [(randn(4, 1, 4, 4, seed=k), ints(4, seed=k)) for k in range(3)]


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(paddle.flatten(x, 1))))


def stepper(opt_name, body, **opt_kw):
    def make():
        net = MLP()
        opt = getattr(paddle.optimizer, opt_name)(parameters=net.parameters(), **opt_kw)
        return net, body(net, opt)
    return make


def test_train_step_with_adam():
    def body(net, opt):
        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return train_step

    check_twins(stepper("Adam", body, learning_rate=0.01), BATCHES, IMG_SPEC)


def test_train_step_with_momentum_and_weight_decay():
    def body(net, opt):
        def train_step(img, label):
            logits = net(img)
            loss = F.cross_entropy(logits, label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            acc = (logits.argmax(axis=-1) == label).astype("float32").mean()
            return loss, acc
        return train_step

    check_twins(stepper("Momentum", body, learning_rate=0.1, momentum=0.9,
                        weight_decay=0.01), BATCHES, IMG_SPEC)


def test_train_step_skipped_when_loss_is_not_finite():
    def body(net, opt):
        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            if paddle.isfinite(loss):
                loss.backward()
                opt.step()
            opt.clear_grad()
            return loss
        return train_step

    batches = BATCHES[:2] + [(np.full([4, 1, 4, 4], np.inf, "float32"), ints(4))]
    check_twins(stepper("SGD", body, learning_rate=0.1), batches, IMG_SPEC)


def test_train_step_with_global_norm_clipping():
    def make():
        net = MLP()
        opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=net.parameters(),
                                   grad_clip=nn.ClipGradByGlobalNorm(0.1))

        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return net, train_step

    check_twins(make, BATCHES, IMG_SPEC)


def test_several_steps_in_one_compiled_call():
    def body(net, opt):
        def fit(img, label):
            losses = []
            for _ in range(3):
                loss = F.cross_entropy(net(img), label)
                loss.backward()
                opt.step()
                opt.clear_grad()
                losses.append(loss)
            return paddle.stack(losses)
        return fit

    check_twins(stepper("SGD", body, learning_rate=0.2), BATCHES[:2], IMG_SPEC)


def test_gradient_accumulation_over_two_micro_batches():
    def body(net, opt):
        def train_step(img, label):
            half = img.shape[0] // 2
            total = paddle.zeros([])
            for part in range(2):
                lo, hi = part * half, (part + 1) * half
                loss = F.cross_entropy(net(img[lo:hi]), label[lo:hi]) / 2.0
                loss.backward()
                total = total + loss
            opt.step()
            opt.clear_grad()
            return total
        return train_step

    check_twins(stepper("SGD", body, learning_rate=0.2), BATCHES, IMG_SPEC)


def test_manual_sgd_update_with_no_grad():
    def make():
        net = MLP()

        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            grads = paddle.grad(loss, net.parameters())
            with paddle.no_grad():
                for p, g in zip(net.parameters(), grads):
                    p.set_value(p - 0.1 * g)
            return loss
        return net, train_step

    check_twins(make, BATCHES, IMG_SPEC)


def test_train_step_returns_loss_as_python_float():
    def body(net, opt):
        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return float(loss)
        return train_step

    check_twins(stepper("SGD", body, learning_rate=0.1), BATCHES, IMG_SPEC)


class NoisyTrainLayer(nn.Layer):
    """A deterministic 'noise' in train mode only; a tensor branch in both modes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if self.training:
            h = h + 0.1 * paddle.sin(h * 7.0)
        if h.mean() > 0:
            h = F.relu(h)
        return h


def test_compiled_layer_follows_train_then_eval():
    net = NoisyTrainLayer()
    reset_parameters(net)
    for mode in MODES:
        static = compiled(net, spec([None, 4]), mode)
        for training in (True, False, True):
            net.train() if training else net.eval()
            for x in (randn(2, 4, shift=2), randn(2, 4, seed=1, shift=-2)):
                want = net(paddle.to_tensor(x)).numpy()
                got = static(paddle.to_tensor(x)).numpy()
                if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                    raise OutputMismatch(f"{mode}, training={training}: {got} != {want}")


class CifarNet(nn.Layer):
    def __init__(self):
        super().__init__()
        # no bias before the BatchNorm, as in ResNets: training-mode BatchNorm takes
        # the channel's mean out, so that bias's gradient is exactly zero and what a
        # run computes for it is rounding noise (of the order of 1e-9), which Adam's
        # normalized step turns into a move of the learning rate's size in a sign
        # that depends on the order of the sum
        self.conv1 = nn.Conv2D(3, 4, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(4)
        self.conv2 = nn.Conv2D(4, 4, 3, padding=1)
        self.pool = nn.MaxPool2D(2, 2)
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        res = x
        x = F.relu(self.conv2(x))
        if x.shape[-1] == res.shape[-1]:
            x = x + res
        x = self.gap(x).flatten(1)
        return self.fc(x)


def test_cifar_cnn_in_eval():
    check(CifarNet(), [randn(2, 3, 8, 8), randn(3, 3, 8, 8, seed=1)], spec([None, 3, 8, 8]),
          train=False)


def test_cifar_cnn_train_step_updates_batchnorm_statistics():
    def make():
        net = CifarNet()
        opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())

        def train_step(img, label):
            net.train()
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return net, train_step

    check_twins(make, [(randn(4, 3, 8, 8, seed=k), ints(4, seed=k)) for k in range(2)],
                [paddle.static.InputSpec([None, 3, 8, 8]),
                 paddle.static.InputSpec([None], "int64")])


class LabelSmoothingLoss(nn.Layer):
    def __init__(self, classes=10, eps=0.1):
        super().__init__()
        self.classes, self.eps = classes, eps

    def forward(self, logits, label):
        logp = F.log_softmax(logits, axis=-1)
        target = F.one_hot(label, self.classes) * (1 - self.eps) + self.eps / self.classes
        return -(target * logp).sum(axis=-1).mean()


def test_label_smoothing_loss_in_train_step():
    def make():
        net = MLP()
        crit = LabelSmoothingLoss()
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())

        def train_step(img, label):
            loss = crit(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return net, train_step

    check_twins(make, BATCHES, IMG_SPEC)


class MNISTEval(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = MLP()

    def forward(self, img, label):
        logits = self.net(img)
        pred = logits.argmax(axis=-1)
        correct = (pred == label).astype("int64").sum()
        return correct, correct.numpy() / img.shape[0]


def test_evaluation_accuracy_with_numpy():
    check_outputs(MNISTEval(), BATCHES, IMG_SPEC)


class EarlyExitClassifier(nn.Layer):
    """Returns from the first head that is confident enough (BranchyNet)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(16, 16) for _ in range(3)])
        self.heads = nn.LayerList([nn.Linear(16, 10) for _ in range(3)])

    def forward(self, x):
        h = paddle.flatten(x, 1)
        for blk, head in zip(self.blocks, self.heads):
            h = F.relu(blk(h))
            logits = head(h)
            if F.softmax(logits, -1).max(-1).mean() > 0.15:
                return logits
        return logits


def test_early_exit_classifier_over_zip_of_layer_lists():
    check(EarlyExitClassifier(), [randn(2, 1, 4, 4, scale=6), randn(2, 1, 4, 4, seed=1,
                                                                     scale=0.01)],
          spec([None, 1, 4, 4]), every_line=False)


class DropoutNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.drop(F.relu(self.fc(x)))
        if not self.training:
            h = h * 2.0
        return h


def test_dropout_layer_in_eval():
    check(DropoutNet(), [randn(2, 4), randn(3, 4, seed=1)], spec([None, 4]), train=False)


def test_lr_scheduler_step_between_compiled_steps():
    def make():
        net = MLP()
        sched = paddle.optimizer.lr.StepDecay(learning_rate=0.2, step_size=1, gamma=0.5)
        opt = paddle.optimizer.SGD(learning_rate=sched, parameters=net.parameters())

        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return net, (train_step, sched)

    for mode in MODES:
        nets, steps = [], []
        for _ in range(2):
            net, (step, sched) = make()
            nets.append(net)
            steps.append((step, sched))
        reset_parameters(nets[0])
        nets[1].set_state_dict(nets[0].state_dict())
        fn = compiled(steps[1][0], IMG_SPEC, mode)
        for img, label in BATCHES:
            a = steps[0][0](paddle.to_tensor(img), paddle.to_tensor(label)).numpy()
            b = fn(paddle.to_tensor(img), paddle.to_tensor(label)).numpy()
            steps[0][1].step()
            steps[1][1].step()
            if not np.allclose(a, b, rtol=1e-5, atol=1e-6):
                raise OutputMismatch(f"{mode}: loss {b} != eager {a}")


class LoopNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.out = nn.Linear(16, 10)

    def forward(self, x):
        h = paddle.flatten(x, 1)
        for _ in range(3):
            h = paddle.tanh(self.fc(h))
            if h.abs().max() > 0.9:
                break
        return self.out(h)


def test_gradient_penalty_in_a_compiled_train_step():
    def make():
        net = LoopNet()
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())

        def train_step(img, label):
            img.stop_gradient = False
            logits = net(img)
            (g,) = paddle.grad(logits.sum(), img, create_graph=True)
            loss = F.cross_entropy(logits, label) + 0.1 * (g ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return net, train_step

    check_twins(make, BATCHES, IMG_SPEC)


def test_gradients_clipped_by_hand_before_the_step():
    def make():
        net = MLP()
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())

        def train_step(img, label):
            loss = F.cross_entropy(net(img), label)
            loss.backward()
            for p in net.parameters():
                p.grad.set_value(paddle.clip(p.grad, -0.01, 0.01))
            opt.step()
            opt.clear_grad()
            return loss
        return net, train_step

    net, step = make()
    try:
        check_twins(make, BATCHES, IMG_SPEC)
    except ConversionError as e:                  # or a clear error naming the line
        check_message(str(e), step, "p.grad.set_value(")

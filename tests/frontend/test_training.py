"""Training with compiled code: a whole step (forward, backward, optimizer) compiled into
one program, and a compiled forward inside an eager training loop."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec


class LoopyNet(nn.Layer):
    """A data-dependent loop and branch inside the model being trained."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        i = 0
        while paddle.mean(paddle.abs(h)) < 0.9 and i < 4:
            h = paddle.tanh(h * 1.7 + 0.05)
            i += 1
        if paddle.mean(h) > 0:
            h = h * 0.5
        return self.fc2(h)


def twins(seed):
    paddle.seed(seed)
    a = LoopyNet()
    b = LoopyNet()
    b.set_state_dict(a.state_dict())
    return a, b


def data(seed, n=6):
    rng = np.random.default_rng(seed)
    return (paddle.to_tensor(rng.standard_normal((n, 4)).astype(np.float32)),
            paddle.to_tensor(rng.integers(0, 3, n)))


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_whole_training_step_in_one_program(optimizer):
    compiled_model, eager_model = twins(1)

    def make_step(model):
        opt = getattr(paddle.optimizer, optimizer)(learning_rate=0.05,
                                                   parameters=model.parameters())

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return train_step

    compiled = paddle.jit.to_static(make_step(compiled_model),
                                    input_spec=[InputSpec([None, 4]), InputSpec([None], "int64")])
    eager = make_step(eager_model)
    for step in range(4):
        x, y = data(step, n=3 + step)
        np.testing.assert_allclose(compiled(x, y).numpy(), eager(x, y).numpy(), rtol=1e-5)
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    names = [op.name for op in compiled.ir.walk()]
    assert names.count("while") >= 2  # the forward loop and its backward loop
    assert "stack_push" in names and "stack_pop" in names


@pytest.mark.parametrize("optimizer", ["SGD", "Momentum", "Adam"])
def test_a_step_taken_only_when_a_tensor_condition_holds(optimizer):
    """backward() and step() inside a tensor `if`: the branch that steps yields the
    new parameters, accumulators and gradients, the other the old ones; the calls
    alternate between the branches and the compiled model stays the eager one."""
    compiled_model, eager_model = twins(3)

    def make_step(model):
        opt = getattr(paddle.optimizer, optimizer)(learning_rate=0.05,
                                                   parameters=model.parameters())

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            if loss < 1.1:
                loss.backward()
                opt.step()
            else:
                loss = loss * 1.0
            opt.clear_grad()
            return loss
        return train_step

    compiled = paddle.jit.to_static(make_step(compiled_model),
                                    input_spec=[InputSpec([None, 4]), InputSpec([None], "int64")])
    eager = make_step(eager_model)
    losses = []
    for step in range(6):
        x, y = data(10 + step, n=3 + step)
        want = eager(x, y).numpy()
        losses.append(float(want))
        np.testing.assert_allclose(compiled(x, y).numpy(), want, rtol=1e-5)
        for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    assert min(losses) < 1.1 < max(losses)  # both branches ran


def test_compiled_backward_accumulates_into_the_gradients_across_calls():
    """Gradient accumulation over micro-batches with a compiled forward and backward:
    each call adds to ``.grad`` as eager code does (a program traced while the
    gradients were None is traced again once they exist, and reads them then)."""
    compiled_model, eager_model = twins(4)

    def make_step(model):
        def accumulate(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return accumulate

    compiled = paddle.jit.to_static(make_step(compiled_model),
                                    input_spec=[InputSpec([None, 4]), InputSpec([None], "int64")])
    eager = make_step(eager_model)
    for step in range(5):
        if step == 3:  # dropped gradients: None again, then accumulated anew
            for model in (compiled_model, eager_model):
                model.clear_gradients(set_to_zero=False)
        x, y = data(20 + step, n=2 + step)
        compiled(x, y)
        eager(x, y)
        for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_zero_filled_gradients_are_known_zero_not_read():
    """``clear_grad()`` leaves zero-filled gradients: a compiled step that clears them
    sets them without computing zeros, and the next call's program knows they are zero
    (it has no gradient arguments) yet still reads them as zeros and accumulates onto
    them exactly as eager code does, including after eager code cleared them."""
    compiled_model, eager_model = twins(5)

    def make_step(model, clear):
        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            seen = model.fc2.bias.grad  # None, zeros or the accumulated gradient
            loss.backward()
            if clear:
                model.clear_gradients()
            return loss if seen is None else loss + seen.sum()
        return step

    spec = [InputSpec([None, 4]), InputSpec([None], "int64")]
    for clear in (True, False):
        compiled = paddle.jit.to_static(make_step(compiled_model, clear), input_spec=spec)
        eager = make_step(eager_model, clear)
        for step in range(3):
            x, y = data(30 + step, n=3 + step)
            np.testing.assert_allclose(compiled(x, y).numpy(), eager(x, y).numpy(), rtol=1e-6)
            for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
                assert p.grad is not None
                np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
            grad_args = [a for fn in compiled.ir.functions.values() for a in fn.args
                         if a.name.endswith("GRAD")]
            # cleared before the call (by the last call or by eager code): the program
            # reads no gradient array
            assert (grad_args == []) == (clear or step == 0)
        for model in (compiled_model, eager_model):
            model.clear_gradients()  # the accumulating step starts from eager's zeros


def test_paddle_grad_inside_a_branch_and_a_loop_equals_eager():
    def f(x):
        y = (x ** 3).sum()
        if y > 0:
            (g,) = paddle.grad(y, x, create_graph=True)
            out = x - 0.1 * g
        else:
            out = x
        z = out * 1.0
        for _ in range(paddle.to_tensor(3)):  # a tensor loop: gradients of its own values
            (h,) = paddle.grad((z ** 2).sum(), z)
            z = (z - 0.25 * h).detach()
            z.stop_gradient = False
        return z

    compiled = paddle.jit.to_static(f, input_spec=[InputSpec([None, 3])])
    for seed in (0, 1):
        x = paddle.to_tensor(np.random.default_rng(seed).standard_normal((2, 3)), "float32")
        x.stop_gradient = False
        np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_what_state_changes_in_control_flow_cannot_do():
    model = LoopyNet()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    spec = [InputSpec([None, 4]), InputSpec([None], "int64")]
    x, y = data(0)

    def step_in_a_loop(x, y):
        loss = F.cross_entropy(model(x), y)
        while loss > 0.0:
            loss.backward()
            loss = loss - 1.0
        return loss

    def loss_inside_the_branch(x, y):
        h = model(x)
        if h.mean() > -10.0:
            F.cross_entropy(h * 2.0, y).backward()
        return h

    for fn, message in [(step_in_a_loop, "inside a tensor-dependent loop"),
                        (loss_inside_the_branch, "computed inside it")]:
        with pytest.raises(paddle.ConversionError, match=message):
            paddle.jit.to_static(fn, input_spec=spec)(x, y)
        opt.clear_grad()


def test_compiled_forward_inside_an_eager_training_loop():
    compiled_model, eager_model = twins(2)
    static = paddle.jit.to_static(compiled_model, input_spec=[InputSpec([None, 4])])
    opt_c = paddle.optimizer.Adam(learning_rate=0.05, parameters=compiled_model.parameters())
    opt_e = paddle.optimizer.Adam(learning_rate=0.05, parameters=eager_model.parameters())
    for step in range(4):
        x, y = data(10 + step)
        for model, opt in ((static, opt_c), (eager_model, opt_e)):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_flow_to_inputs_of_a_compiled_call():
    layer = nn.Linear(4, 2)
    static = paddle.jit.to_static(layer, input_spec=[InputSpec([None, 4])])
    x = paddle.randn([3, 4])
    x.stop_gradient = False
    paddle.sum(static(x) ** 2).backward()
    got = x.grad.numpy().copy()
    x.clear_gradient(set_to_zero=False)
    paddle.sum(layer(x) ** 2).backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5)


def test_no_grad_calls_do_not_record():
    static = paddle.jit.to_static(nn.Linear(4, 2), input_spec=[InputSpec([None, 4])])
    with paddle.no_grad():
        out = static(paddle.randn([2, 4]))
    assert out.stop_gradient and out._node is None


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("layers", [1, 40])
def test_freezing_and_unfreezing_a_weight_between_compiled_steps(optimizer, backend, layers):
    """Whether a step computes a parameter's gradient is decided when it is traced: a
    weight frozen after the first compiled steps stays put, and trains again once
    unfrozen, as eager training does. With 40 layers the call's key reads its 80
    parameters' flags by methods, not one by one (more than the generated reader
    unrolls)."""
    def run(compiled):
        paddle.seed(3)
        model = nn.Sequential(*[nn.Linear(3, 3) for _ in range(layers - 1)], nn.Linear(3, 2))
        opt = getattr(paddle.optimizer, optimizer)(learning_rate=0.1,
                                                   parameters=model.parameters())

        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        f = paddle.compile(step, backend=backend) if compiled else step
        x = paddle.to_tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        weights = []
        for frozen in (False, False, True, True, False, False):
            model[0].weight.stop_gradient = frozen
            f(x)
            weights.append((model[0].weight.numpy().copy(), model[0].bias.numpy().copy()))
        return weights
    for (w, b), (w_eager, b_eager) in zip(run(True), run(False)):
        np.testing.assert_allclose(w, w_eager, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(b, b_eager, rtol=1e-6, atol=1e-7)


def _shared_encoder_steps(compiled: bool):
    """Two losses on a shared encoder, each with its optimizer: the second loss was
    computed before the first optimizer's step, so its gradient is the encoder's as
    it was (eager autograd sums every use of a parameter)."""
    paddle.seed(0)
    enc, head_a, head_b = nn.Linear(3, 4), nn.Linear(4, 1), nn.Linear(4, 1)
    opt_a = paddle.optimizer.SGD(0.1, parameters=[*enc.parameters(), *head_a.parameters()])
    opt_b = paddle.optimizer.SGD(0.1, parameters=[*enc.parameters(), *head_b.parameters()])

    def step(x):
        h = enc(x)
        la, lb = head_a(h).pow(2).mean(), head_b(h).pow(2).mean()
        la.backward(retain_graph=True)
        opt_a.step()
        lb.backward()
        opt_b.step()
        opt_a.clear_grad()
        opt_b.clear_grad()
        return la + lb
    f = paddle.jit.to_static(step) if compiled else step
    x = paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
    losses = [float(f(x)) for _ in range(3)]
    return losses, enc.weight.numpy()


def test_a_loss_computed_before_an_update_differentiates_the_parameter_as_it_was():
    (losses, weight), (eager_losses, eager_weight) = (_shared_encoder_steps(True),
                                                      _shared_encoder_steps(False))
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_two_backward_and_step_rounds_in_one_compiled_step(optimizer):
    """A second forward after the first step reads the updated parameters; its
    gradient is theirs alone, not also through the update to the old ones."""
    def run(compiled):
        paddle.seed(0)
        model, extra = nn.Linear(3, 2), nn.Linear(2, 2)
        opt = getattr(paddle.optimizer, optimizer)(
            0.1, parameters=[*model.parameters(), *extra.parameters()])

        def step(x):
            first = model(x).pow(2).sum()
            if model(x).mean() > 0:  # extra's gradient exists on some runs only
                first = first + extra(model(x)).sum()
            first.backward()
            opt.step()
            second = (model(x) * 2).pow(2).sum() + extra(model(x)).sum()
            second.backward()
            opt.step()
            opt.clear_grad()
            return second
        f = paddle.jit.to_static(step) if compiled else step
        signs = (-1.0, 1.0, -1.0)
        outs = [float(f(paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 4 * s)))
                for s in signs]
        return outs, model.weight.numpy(), extra.weight.numpy()
    for got, want in zip(run(True), run(False)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

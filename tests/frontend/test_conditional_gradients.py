"""Gradients that exist on some runs only. Eager code gives a parameter a gradient only
when an op that used it ran on the way to the loss, leaves it None otherwise, and
optimizers skip a parameter whose gradient is None: no weight decay, no moments, no
beta powers. Compiled code decides at run time which branch of a `cond` runs and
whether a `while` body runs at all, so it must do the same there: after every step
the parameters, the optimizer's accumulators and which gradients are None equal
eager's, whole steps compiled and compiled forwards in eager training alike. In
float64, so that rounding (fused kernels add in another order) stays far below the
tolerance while a wrong update does not."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn

BACKENDS = ["numpy", "llvm"]
# inputs in an order that alternates the branches taken (and the loops' trip counts)
INPUTS = [[[1.0, 2.0]], [[-1.0, -2.0]], [[0.5, 0.4]], [[2.0, 3.0]], [[-0.3, 0.1]],
          [[1.0, 0.0]]]


def inputs(k: int):
    return paddle.to_tensor(np.array(INPUTS[k], dtype=np.float64))


def make_model(model_class):
    paddle.seed(0)
    return model_class().astype("float64")


class Branches(nn.Layer):
    """`a` only in one branch, `b` only in the other; `c` at the top level, but its
    result reaches the loss only through `a`'s branch; `d` in both branches and `e`
    at the top level and in a branch: those two always have a gradient."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)
        self.d, self.e = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        h = self.c(x)
        x = self.e(x)
        if x.mean() > 0:
            out = self.a(h) + self.d(x)
        else:
            out = paddle.tanh(self.b(x)) * self.d(x) + self.e(x)
        return out


class Nested(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        if x.mean() > 0:
            if x.sum() > 3:
                y = self.a(x)
            else:
                y = self.b(x)
        else:
            y = self.c(x) + self.b(x)
        return y


class Looped(nn.Layer):
    """`w` only in the body of a loop that runs zero times for some inputs."""

    def __init__(self):
        super().__init__()
        self.a, self.w = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        h = self.a(x)
        i = paddle.to_tensor(0)
        n = paddle.cast(x.sum() > 0, "int64") * 2
        while i < n:
            h = paddle.tanh(self.w(h))
            i = i + 1
        return h


OPTIMIZERS = {
    "SGD with weight decay": lambda ps: paddle.optimizer.SGD(0.1, ps, weight_decay=0.5),
    "Momentum": lambda ps: paddle.optimizer.Momentum(0.1, 0.9, ps, weight_decay=0.1),
    "Adam": lambda ps: paddle.optimizer.Adam(0.1, parameters=ps),
    "AdamW": lambda ps: paddle.optimizer.AdamW(0.1, parameters=ps),
    "Adam, clipped by the global norm": lambda ps: paddle.optimizer.Adam(
        0.1, parameters=ps, grad_clip=nn.ClipGradByGlobalNorm(0.5)),
}


def state(net, opt) -> list:
    """The parameters, the gradients (None where there is none) and the optimizer's
    accumulators, as arrays."""
    params = list(net.parameters())
    return ([p.numpy().copy() for p in params] +
            [None if p.grad is None else p.grad.numpy().copy() for p in params] +
            [t.numpy().copy() for t in opt.state_dict().values()])


def assert_same(got: list, want: list, step: int) -> None:
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"step {step}, entry {k}: None in one only"
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6,
                                       err_msg=f"step {step}, entry {k}")


def trajectory(model_class, make_opt, backend, order=range(6), set_to_zero=True) -> list:
    """The state after each of the whole training steps on INPUTS[k] for k in `order`,
    eager (backend None) or compiled."""
    net = make_model(model_class)
    opt = make_opt(net.parameters())

    def step(x):
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad(set_to_zero=set_to_zero)
        return loss

    run = step if backend is None else paddle.compile(step, backend=backend)
    states = []
    for k in order:
        run(inputs(k))
        states.append(state(net, opt))
    return states


def check_trajectory(model_class, make_opt, backend, **options) -> None:
    want = trajectory(model_class, make_opt, None, **options)
    got = trajectory(model_class, make_opt, backend, **options)
    for step, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, step)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize("set_to_zero", [True, False])
def test_a_compiled_step_skips_parameters_the_branch_taken_does_not_use(optimizer, backend,
                                                                        set_to_zero):
    check_trajectory(Branches, OPTIMIZERS[optimizer], backend, set_to_zero=set_to_zero)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_branches(backend):
    check_trajectory(Nested, OPTIMIZERS["Adam"], backend, set_to_zero=False)
    check_trajectory(Nested, OPTIMIZERS["SGD with weight decay"], backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", [[1, 0, 1, 1, 0], [0, 1, 0]])
def test_a_parameter_only_a_loop_body_uses_after_zero_and_some_iterations(backend, order):
    check_trajectory(Looped, OPTIMIZERS["Adam"], backend, order=order, set_to_zero=False)
    check_trajectory(Looped, OPTIMIZERS["SGD with weight decay"], backend, order=order)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model_class", [Branches, Nested, Looped])
def test_a_compiled_forward_in_eager_training(model_class, backend):
    """backward() through the compiled call leaves None where eager code does, so the
    eager optimizer skips those parameters as it would."""
    def trajectory(compiled):
        net = make_model(model_class)
        opt = OPTIMIZERS["SGD with weight decay"](net.parameters())
        forward = paddle.compile(net, backend=backend) if compiled else net
        states = []
        for k in range(6):
            (forward(inputs(k)) ** 2).mean().backward()
            states.append(state(net, opt))
            opt.step()
            opt.clear_grad(set_to_zero=k % 2 == 0)
        return states

    for step, (got, want) in enumerate(zip(trajectory(True), trajectory(False))):
        assert_same(got, want, step)


def test_parameters_used_on_every_run_have_no_flag():
    """A parameter used in both branches, or at the top level on the way to the loss,
    always has a gradient: the program returns it as before, without a bool."""
    net = make_model(Branches)
    opt = paddle.optimizer.Adam(0.1, parameters=net.parameters())

    def step(x):
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    compiled = paddle.compile(step, backend="numpy")
    compiled(inputs(0))
    (program,) = set(compiled._programs.values())
    flagged = {id(program.grad_targets[i]) for i in program.flagged_grads}
    assert flagged == {id(p) for p in (*net.a.parameters(), *net.b.parameters(),
                                       *net.c.parameters())}
    returned = program.ir.main.result_types
    assert sum(t.dtype.name == "bool" for t in returned) == len(flagged)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backward_in_one_branch_then_a_step(backend):
    """backward() in one branch of an `if` leaves the gradients None after the other;
    the step after the `if` then updates nothing, and the program writes back the
    gradients only where they exist."""
    def trajectory(compiled):
        net = make_model(Branches)
        opt = paddle.optimizer.Adam(0.1, parameters=net.parameters(), weight_decay=0.1)

        def step(x):
            loss = (net(x) ** 2).mean()
            if loss > 0.5:
                loss.backward()
            opt.step()
            opt.clear_grad(set_to_zero=False)
            return loss

        run = paddle.compile(step, backend=backend) if compiled else step
        states, losses = [], []
        for k in range(6):
            losses.append(float(run(inputs(k))))
            states.append(state(net, opt))
        assert min(losses) < 0.5 < max(losses)  # both branches ran
        return states

    for step, (got, want) in enumerate(zip(trajectory(True), trajectory(False))):
        assert_same(got, want, step)


def test_clipping_gradients_in_place_keeps_which_exist():
    def trajectory(compiled):
        net = make_model(Branches)
        opt = paddle.optimizer.SGD(0.1, net.parameters(), weight_decay=0.5)

        def step(x):
            loss = (net(x) ** 2).mean()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            nn.utils.clip_grad_value_(net.parameters(), 0.1)
            opt.step()
            opt.clear_grad(set_to_zero=False)
            return loss

        run = paddle.compile(step, backend="numpy") if compiled else step
        states = []
        for k in range(4):
            run(inputs(k))
            states.append(state(net, opt))
        return states

    for step, (got, want) in enumerate(zip(trajectory(True), trajectory(False))):
        assert_same(got, want, step)


def test_reading_a_gradient_that_exists_on_some_runs_only_is_an_error():
    net = make_model(Branches)

    def step(x):
        (net(x) ** 2).mean().backward()
        return net.a.weight.grad.sum()

    with pytest.raises(paddle.ConversionError, match="exists on some runs of the program only"):
        paddle.compile(step, backend="numpy")(inputs(0))


def test_paddle_grad_through_a_compiled_call_of_a_branch_not_taken():
    net = make_model(Branches)
    out = (paddle.compile(net, backend="numpy")(inputs(1)) ** 2).sum()
    ga, gb = paddle.grad(out, [net.a.weight, net.b.weight], allow_unused=True,
                         retain_graph=True)
    assert ga is None and gb is not None
    with pytest.raises(paddle.autograd.GraphError, match="not used to compute the outputs"):
        paddle.grad(out, [net.a.weight])


class TwoResults(nn.Layer):
    """`a` reaches result 0 through one branch only, and result 1 at the top level."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        h = self.a(x)
        first = h if x.mean() > 0 else self.b(x)
        return first, h * 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loss_of_one_result_of_a_compiled_call(backend):
    """A loss that reads one result of a compiled call: the other result's zero
    cotangent gives no parameter a gradient (`a`, used at the top level for result 1,
    has none where result 0's branch does not use it), as eager code."""
    grads = []
    for compiled in (False, True):
        model = make_model(TwoResults)
        f = paddle.compile(model, backend=backend) if compiled else model
        found = []
        for k in (0, 1):
            first, _ = f(inputs(k))
            first.sum().backward()
            found.append([None if p.grad is None else p.grad.numpy().copy()
                          for p in model.parameters()])
            model.clear_gradients(set_to_zero=False)
        grads.append(found)
    for eager, compiled in zip(*grads):
        for e, c in zip(eager, compiled):
            assert (e is None) == (c is None)
            if e is not None:
                np.testing.assert_allclose(c, e, rtol=1e-12)
    assert grads[0][1][0] is None  # a.weight: x.mean() <= 0 takes b's branch

"""Gradients through a Python list that compiled code grows (``preds.append(p)``) and
then reads one element of. The list is one value of the IR, but eager code gives a
gradient only to what reached the loss: the heads whose prediction only sits in the
list get None, so optimizers leave them alone (no weight decay). Compiled code must
agree element by element, whether the list grows in a loop over a LayerList with a
tensor `break` or `return`, or in a tensor `while` loop (then read in a tensor `if`
or in another loop), whole steps compiled and compiled forwards in eager training
alike."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from tests.frontend.test_conditional_gradients import (BACKENDS, INPUTS, assert_same, inputs,
                                                       make_model, state)


class Heads(nn.Layer):
    """Three heads on the input; `forward` keeps their predictions in a list."""

    def __init__(self):
        super().__init__()
        self.heads = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])

    def exits(self, p):
        """Whether to stop after prediction `p`: at the first, second or third head
        for the inputs in turn."""
        return p.mean() > 0.2


class LastBeforeBreak(Heads):
    def forward(self, x):
        preds = []
        for head in self.heads:
            p = head(x)
            preds.append(p)
            if self.exits(p):
                break
        return preds[-1]


class LastOnReturn(Heads):
    def forward(self, x):
        preds = []
        for head in self.heads:
            preds.append(head(x))
            if self.exits(preds[-1]):
                return preds[-1]
        return preds[-1]


class FirstBeforeBreak(Heads):
    def forward(self, x):
        preds = []
        for head in self.heads:
            p = head(x)
            preds.append(p)
            if self.exits(p):
                break
        return preds[0] * 2.0


class StackedBeforeBreak(Heads):
    def forward(self, x):
        preds = []
        for head in self.heads:
            p = head(x)
            preds.append(p)
            if self.exits(p):
                break
        return paddle.stack(preds).mean(0)


class LastWithoutBreak(Heads):
    def forward(self, x):
        preds = []
        for head in self.heads:
            preds.append(head(x))
        return preds[-1]


class LastOfWhile(nn.Layer):
    """`a`'s prediction is the list's first element, then a tensor loop appends
    `w`'s zero or two times."""

    def __init__(self):
        super().__init__()
        self.a, self.w = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        preds = [self.a(x)]
        i = paddle.to_tensor(0)
        n = paddle.cast(x.sum() > 0, "int64") * 2
        while i < n:
            preds.append(paddle.tanh(self.w(x)))
            i = i + 1
        return preds[-1]


class ReadInABranch(LastOfWhile):
    """The list, grown in a tensor loop, is read in a tensor `if`: element 0 (`a`'s)
    in one branch, the one before `c`'s (`w`'s, or `a`'s after zero iterations) in
    the other."""

    def __init__(self):
        super().__init__()
        self.c = nn.Linear(2, 2)

    def forward(self, x):
        preds = [self.a(x)]
        i = paddle.to_tensor(0)
        n = paddle.cast(x.sum() > 0, "int64") * 2
        while i < n:
            preds.append(paddle.tanh(self.w(x)))
            i = i + 1
        preds.append(self.c(x))
        if x.mean() > 0.6:
            out = preds[0]
        else:
            out = preds[-2]
        return out


class ReadInALoop(LastOfWhile):
    """The list, grown in a tensor loop, is read in another by a tensor index: `a`'s
    element always, `b`'s for some inputs, `w`'s never."""

    def __init__(self):
        super().__init__()
        self.b = nn.Linear(2, 2)

    def forward(self, x):
        preds = [self.a(x), self.b(x)]
        i = paddle.to_tensor(0)
        n = paddle.cast(x.sum() > 0, "int64") * 2
        while i < n:
            preds.append(paddle.tanh(self.w(x)))
            i = i + 1
        out = x * 0.0
        j = paddle.to_tensor(0)
        m = paddle.cast(x.mean() > 0.6, "int64") + 1
        while j < m:
            out = out + preds[j]
            j = j + 1
        return out


MODELS = [LastBeforeBreak, LastOnReturn, FirstBeforeBreak, StackedBeforeBreak,
          LastWithoutBreak, LastOfWhile, ReadInABranch, ReadInALoop]


def adamw(params):
    return paddle.optimizer.AdamW(0.1, parameters=params, weight_decay=0.5)


def unused(model_class) -> set:
    """For each input, the indices of the parameters eager code leaves no gradient."""
    found = set()
    for k in range(len(INPUTS)):
        net = make_model(model_class)
        (net(inputs(k)) ** 2).mean().backward()
        found.add(frozenset(i for i, p in enumerate(net.parameters()) if p.grad is None))
    return found


@pytest.mark.parametrize("model_class", [LastBeforeBreak, LastOfWhile, ReadInABranch,
                                         ReadInALoop])
def test_the_inputs_exit_at_different_heads(model_class):
    """What the tests below rely on: the parameters without a gradient differ between
    the inputs, and some inputs leave some parameters without one."""
    found = unused(model_class)
    assert len(found) > 1 and any(found)


def training(model_class, backend, compile_step: bool) -> list:
    """The state after an AdamW step on each input (the gradients it took, None where
    there was none, among it): eager (backend None), with the whole step compiled, or
    with the forward compiled inside eager training."""
    net = make_model(model_class)
    opt = adamw(net.parameters())
    forward = net if backend is None or compile_step else paddle.compile(net, backend=backend)

    def step(x):
        loss = (forward(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = paddle.compile(step, backend=backend) if backend and compile_step else step
    states = []
    for k in range(len(INPUTS)):
        run(inputs(k))
        states.append(state(net, opt))
        opt.clear_grad(set_to_zero=False)
    return states


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model_class", MODELS)
@pytest.mark.parametrize("compile_step", [False, True], ids=["forward", "step"])
def test_only_the_elements_read_give_gradients(model_class, backend, compile_step):
    want = training(model_class, None, compile_step)
    got = training(model_class, backend, compile_step)
    for step, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, step)


def test_a_list_read_whole_gives_no_run_time_flag():
    """Stacking reads every element: every parameter has a gradient on every run, so
    the program returns no bool for any."""
    net = make_model(LastOfWhile)
    opt = adamw(net.parameters())

    def step(x):
        preds = [net.a(x), net.w(x)]
        i = paddle.to_tensor(0)
        while i < paddle.cast(x.sum() > 0, "int64"):
            preds.append(net.w(x))
            i = i + 1
        (paddle.stack(preds) ** 2).mean().backward()
        opt.step()

    compiled = paddle.compile(step, backend="numpy")
    compiled(inputs(0))
    (program,) = set(compiled._programs.values())
    assert program.flagged_grads == []

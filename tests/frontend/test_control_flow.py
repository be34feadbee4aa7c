"""Layers with tensor-dependent control flow, compiled: outputs and gradients equal
eager on several batch sizes, and the control flow is IR `cond`/`while`."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec

BATCHES = [1, 3, 8]


def op_names(compiled):
    return [op.name for op in compiled.ir.walk()]


def check_equal(layer, make_input, batches=BATCHES, grads=True, spec_tail=(4,)):
    """Compiled outputs, and gradients of a loss through the compiled call, equal eager
    (None where eager has none: a parameter only the branch not taken uses)."""
    layer.eval()
    compiled = paddle.compile(layer, input_spec=[InputSpec([None, *spec_tail])])
    for n in batches:
        for x in make_input(n):
            np.testing.assert_allclose(compiled(x).numpy(), layer(x).numpy(),
                                       rtol=1e-5, atol=1e-6)
            if not grads:
                continue
            params = list(layer.parameters())
            paddle.sum(compiled(x) ** 2).backward()
            got = [None if p.grad is None else p.grad.numpy().copy() for p in params]
            layer.clear_gradients()
            paddle.sum(layer(x) ** 2).backward()
            for g, p in zip(got, params):
                assert (g is None) == (p.grad is None)
                if g is not None:
                    np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-5)
            layer.clear_gradients()
    return compiled


def signs(n):
    return [paddle.ones([n, 4]), -paddle.ones([n, 4]), paddle.randn([n, 4])]


class IfInsideWhile(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        step = 0
        while paddle.max(paddle.abs(h)) < 8.0 and step < 20:
            if paddle.mean(h) > 0:
                h = h * 1.5 + 0.1
            else:
                h = h * 1.25 - 0.1
            step += 1
        return h


def test_if_inside_while():
    compiled = check_equal(IfInsideWhile(), signs)
    names = op_names(compiled)
    assert "while" in names and "cond" in names


class WhileWithBreak(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = x
        for _ in range(10):
            h = paddle.tanh(self.fc(h)) * 3.0
            if paddle.sum(h) > 2.0:
                break
        i = 0
        while i < 10:
            i += 1
            if paddle.mean(h) < -0.5:
                break
            h = h - 0.1
        return h


def test_loops_with_break():
    compiled = check_equal(WhileWithBreak(), signs)
    assert "while" in op_names(compiled)


class EarlyReturn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc1(x)
        if paddle.mean(h) > 0:
            return F.relu(h) * 2.0
        h = self.fc2(h)
        return -h


def test_early_return_gradients():
    compiled = check_equal(EarlyReturn(), signs)
    assert "cond" in op_names(compiled)


class OneArmedIf(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if paddle.sum(y) < 0:
            y = -y * 3.0
        return y


def test_one_armed_if_gradients():
    check_equal(OneArmedIf(), signs)


class TensorRange(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        n = paddle.cast(paddle.sum(paddle.abs(x)) > 4.0, "int64") * 2 + 1
        h = x
        for i in range(n):
            h = paddle.tanh(self.fc(h)) + paddle.cast(i, "float32") * 0.1
        return h


def test_for_over_a_tensor_range():
    compiled = check_equal(TensorRange(), signs)
    assert "while" in op_names(compiled)


class RowLoop(nn.Layer):
    def forward(self, x):
        total = paddle.zeros([4])
        for row in x:
            total = total + row * row
        return total


def test_for_over_tensor_rows_with_symbolic_length():
    compiled = check_equal(RowLoop(), signs, grads=False)
    assert "while" in op_names(compiled)


class ShortCircuit(nn.Layer):
    def forward(self, x):
        s = paddle.sum(x)
        if s > 0 and paddle.max(x) > 0.5 or not (s > -1):
            return x * 2.0
        return x


def test_and_or_not_keep_short_circuit_semantics():
    compiled = check_equal(ShortCircuit(), signs, grads=False)
    conds = op_names(compiled).count("cond")
    assert conds >= 2  # `and`/`or` on tensors evaluate their right side in a cond


class SeedPatterns(nn.Layer):
    def __init__(self):
        super().__init__()
        self.small = nn.Linear(4, 4)
        self.large = nn.Linear(4, 4)

    def forward(self, x):
        if paddle.mean(x).item() > 0:
            h = F.relu(self.large(x))
        else:
            h = F.relu(self.small(x))
        if x.mean() < 0:
            h = paddle.abs(h)
        if float(paddle.max(h)) > 100.0:
            h = h / 100.0
        return h


def test_item_float_and_method_comparisons_stay_symbolic():
    compiled = check_equal(SeedPatterns(), signs)
    assert op_names(compiled).count("cond") == 3


class Regularized(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1D(8)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.drop(F.relu(self.bn(self.fc(x)))))


def test_dropout_and_batchnorm_follow_train_and_eval():
    paddle.seed(5)
    layer = Regularized()
    twin = Regularized()
    twin.set_state_dict(layer.state_dict())
    compiled = paddle.compile(layer, input_spec=[InputSpec([None, 4])])
    x = paddle.randn([16, 4])
    layer.eval()
    twin.eval()
    np.testing.assert_allclose(compiled(x).numpy(), twin(x).numpy(), rtol=1e-5, atol=1e-6)
    assert "uniform" not in op_names(compiled)
    layer.train()
    twin.train()
    a, b = compiled(x).numpy(), compiled(x).numpy()
    assert not np.allclose(a, b)  # dropout draws new masks every call
    assert "uniform" in op_names(compiled)
    # BatchNorm's running statistics were updated by the compiled train-mode calls,
    # exactly as two eager train-mode calls update them.
    twin(x)
    twin(x)
    np.testing.assert_allclose(layer.bn._mean.numpy(), twin.bn._mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(layer.bn._variance.numpy(), twin.bn._variance.numpy(), rtol=1e-5)


def test_set_state_dict_after_compiling_is_honoured():
    layer, other = nn.Linear(4, 3), nn.Linear(4, 3)
    compiled = paddle.compile(layer, input_spec=[InputSpec([None, 4])])
    x = paddle.randn([2, 4])
    compiled(x)
    layer.set_state_dict(other.state_dict())
    np.testing.assert_allclose(compiled(x).numpy(), other(x).numpy(), rtol=1e-6)


def test_print_runs_in_the_branch_taken(capsys):
    def f(x):
        if paddle.sum(x) > 0:
            print("positive", paddle.sum(x))
        else:
            print("negative")
        return x

    compiled = paddle.compile(f, input_spec=[InputSpec([None, 2])])
    capsys.readouterr()
    compiled(paddle.ones([1, 2]))
    out = capsys.readouterr().out
    assert out.startswith("positive Tensor(") and "2." in out and "negative" not in out
    compiled(-paddle.ones([1, 2]))
    assert capsys.readouterr().out == "negative\n"


def test_python_control_flow_runs_at_conversion_time():
    class Steps(nn.Layer):
        def __init__(self):
            super().__init__()
            self.steps = 3
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            for _ in range(self.steps):
                x = F.relu(self.fc(x))
            if self.training:
                x = x * 2.0
            return x

    layer = Steps()
    compiled = check_equal(layer, signs)
    names = op_names(compiled)
    assert names.count("matmul") == 3 and "while" not in names and "cond" not in names


def test_an_elif_on_a_python_value_with_a_name_only_a_later_branch_assigns():
    """The inner `if` (the elif) leaves y unbound, which its enclosing branch function
    must still be able to return."""
    def make(kind):
        def f(x):
            if kind == "sum":
                out = x.sum()
            elif kind == "mean":
                out = x.mean()
            else:
                y = x * 2.0
                out = y.sum()
            return out
        return f

    x = paddle.randn([3])
    for kind in ("sum", "mean", "double"):
        f = make(kind)
        np.testing.assert_allclose(paddle.compile(f, backend="numpy")(x).numpy(), f(x).numpy())

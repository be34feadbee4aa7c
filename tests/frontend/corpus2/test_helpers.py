"""Control flow inside helper functions and methods: nested ifs and loops in code the
program calls, closures, recursion with a Python depth, builtins on tensors."""
import math

import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import check, check_outputs, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]
SMALL_LARGE = [randn(2, 4, scale=0.1), randn(2, 4, seed=1, scale=5.0)]


def halve_until_small(h, limit=1.0):
    """Module-level helper: a tensor while loop with a Python counter."""
    steps = 0
    while paddle.max(paddle.abs(h)) > limit:
        h = h / 2.0
        steps += 1
    return h, steps


def test_helper_with_while_loop_returns_tuple():
    def f(x):
        h, steps = halve_until_small(x)
        return h * (steps + 1)

    check(f, SMALL_LARGE, spec([None, 4]))


def test_helper_called_with_keyword_argument():
    def f(x):
        a, _ = halve_until_small(x, limit=0.5)
        b, _ = halve_until_small(x * 3.0, limit=2.0)
        return a + b

    check(f, SMALL_LARGE, spec([None, 4]))


def sign_and_magnitude(x):
    if x.sum() > 0:
        return x, 1.0
    return -x, -1.0


def test_helper_returns_python_float_from_tensor_branches():
    def f(x):
        mag, sign = sign_and_magnitude(x)
        return mag * sign + sign

    check(f, POS_NEG, spec([None, 4]))


def test_helper_with_nested_if_in_loop():
    def step(h):
        if h.mean() > 0:
            if h.max() > 2.0:
                h = h - 1.0
            else:
                h = h * 0.9
        else:
            h = h + 0.5
        return h

    def f(x):
        for _ in range(4):
            x = step(x)
        return x

    check(f, [randn(2, 4, shift=3), randn(2, 4, shift=0.3, scale=0.1),
              randn(2, 4, shift=-2)], spec([None, 4]))


def test_helper_called_inside_tensor_while():
    def shrink(h):
        if h.abs().max() > 4.0:
            return h * 0.25
        return h * 0.5

    def f(x):
        n = 0
        while x.abs().sum() > 1.0:
            x = shrink(x)
            n += 1
        return x, n

    check(f, [randn(2, 4, scale=8), randn(2, 4, scale=0.01)], spec([None, 4]))


def test_method_with_early_return_in_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def refine(self, h):
            for _ in range(5):
                h = paddle.tanh(self.fc(h)) + h
                if h.abs().max() > 3.0:
                    return h / 3.0
            return h

        def forward(self, x):
            return self.refine(x) + self.refine(x * 0.01)

    check(Net(), [randn(2, 4, shift=2), randn(2, 4, scale=0.01)], spec([None, 4]))


def test_sublayer_forward_with_tensor_loop():
    class Iterate(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, h):
            i = 0
            while i < 3 and h.mean() < 1.0:
                h = h + F.relu(self.fc(h)) + 0.1
                i += 1
            return h

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Iterate()
            self.out = nn.Linear(4, 2)

        def forward(self, x):
            return self.out(self.inner(x))

    check(Net(), [randn(2, 4, shift=-1), randn(2, 4, shift=3)], spec([None, 4]))


def test_same_sublayer_called_twice_with_branch():
    class Gate(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, h):
            g = self.fc(h)
            if g.mean() > 0:
                return h * F.sigmoid(g)
            return h

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.gate = Gate()

        def forward(self, x):
            return self.gate(self.gate(x) + 1.0)

    check(Net(), POS_NEG, spec([None, 4]))


def test_nested_function_closes_over_a_loop_variable():
    def f(x):
        scale = x.mean()

        def apply(h):
            if scale > 0:
                return h * scale
            return h - scale

        out = x
        for _ in range(2):
            out = apply(out)
        return out

    check(f, POS_NEG, spec([None, 4]))


def test_recursive_helper_with_python_depth():
    def tree(h, depth):
        if depth == 0:
            return paddle.tanh(h)
        left = tree(h * 0.5, depth - 1)
        right = tree(h + 0.5, depth - 1)
        if left.mean() > right.mean():
            return left
        return right

    def f(x):
        return tree(x, 2)

    check(f, POS_NEG, spec([None, 4]))


def test_staticmethod_helper_in_layer():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        @staticmethod
        def squash(h):
            n = paddle.sqrt(paddle.sum(h * h))
            if n > 1.0:
                h = h / n
            return h

        def forward(self, x):
            return self.squash(self.fc(x) * 4.0)

    check(Net(), [randn(2, 4, scale=0.01), randn(2, 4, seed=1, scale=5)], spec([None, 4]))


def test_helper_with_star_args():
    def combine(*hs):
        total = hs[0]
        for h in hs[1:]:
            if h.mean() > total.mean():
                total = total + h
        return total

    def f(x):
        return combine(x, x * 2.0, x - 1.0)

    check(f, POS_NEG, spec([None, 4]))


def test_helper_with_kwargs_dict():
    def mlp(h, **opts):
        if opts.get("clip"):
            h = paddle.clip(h, -1.0, 1.0)
        if h.sum() > 0:
            h = h * opts["scale"]
        return h

    def f(x):
        return mlp(x, clip=True, scale=3.0)

    check(f, POS_NEG, spec([None, 4]))


def test_activation_chosen_from_a_python_list():
    acts = [F.relu, paddle.tanh, F.sigmoid]

    def f(x):
        out = x
        for i, act in enumerate(acts):
            h = act(out)
            if h.mean() > 0.5:
                out = h
            else:
                out = h + float(i)
        return out

    check(f, POS_NEG, spec([None, 4]))


def test_generator_expression_sum_over_weights():
    def f(x):
        weights = [0.5, 0.25, 0.25]
        total = sum(w * paddle.tanh(x * (i + 1)) for i, w in enumerate(weights))
        if total.mean() > 0:
            total = total * 2.0
        return total

    check(f, POS_NEG, spec([None, 4]))


def test_builtin_max_of_two_scalar_tensors():
    def f(x, y):
        m = max(x.sum(), y.sum())
        return x * m

    a, b = randn(2, 3), randn(2, 3, seed=1, shift=1)
    check(f, [(a, b), (b, a)], spec([None, 3], [None, 3]))


def test_builtin_min_of_len_and_int():
    def f(x):
        n = min(len(x), 3)
        return x[:n].sum(axis=0)

    check(f, [randn(2, 4), randn(5, 4, seed=1)], spec([None, 4]))


def test_math_sqrt_of_the_feature_size():
    def f(q, k):
        d = q.shape[-1]
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(d)
        return F.softmax(scores, axis=-1)

    check(f, [(randn(2, 3, 4), randn(2, 5, 4, seed=1))], spec([None, None, 4], [None, None, 4]))


def test_helper_loop_over_zip_of_lists():
    def mix(hs, ws):
        out = paddle.zeros_like(hs[0])
        for h, w in zip(hs, ws):
            if h.sum() > 0:
                out = out + h * w
            else:
                out = out - h * w
        return out

    def f(x, y):
        return mix([x, y, x * y], [1.0, 2.0, 3.0])

    check(f, [(POS_NEG[0], POS_NEG[1])], spec([None, 4], [None, 4]))


def test_method_returns_dict_from_branches():
    class Head(nn.Layer):
        def __init__(self):
            super().__init__()
            self.cls = nn.Linear(4, 3)
            self.reg = nn.Linear(4, 1)

        def heads(self, h):
            if h.mean() > 0:
                return {"logits": self.cls(h), "box": self.reg(h)}
            return {"logits": -self.cls(h), "box": self.reg(h) * 0.0}

        def forward(self, x):
            out = self.heads(x)
            return out["logits"].sum(axis=-1) + out["box"].squeeze(-1)

    check(Head(), POS_NEG, spec([None, 4]))


def test_lambda_with_default_captures_loop_value():
    def f(x):
        fns = [lambda h, k=k: h * k if h.mean() > 0 else h + k for k in (1.0, 2.0)]
        return fns[0](x) + fns[1](x)

    check(f, POS_NEG, spec([None, 4]))


def test_layer_forward_calls_super_forward():
    class Base(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.mean() > 0:
                h = F.relu(h)
            return h

    class Child(Base):
        def forward(self, x):
            h = super().forward(x)
            while h.abs().sum() < 1.0:
                h = h * 2.0 + 0.01
            return h

    check(Child(), [randn(2, 4, scale=0.01), randn(2, 4, seed=1, scale=3)], spec([None, 4]))


def test_helper_modifies_a_tensor_in_place_under_branch():
    def clamp_(h):
        if h.max() > 1.0:
            h[h > 1.0] = 1.0
        return h

    def f(x):
        y = x * 1.0
        return clamp_(y) * 2.0

    check(f, [randn(3, 4, scale=3), randn(3, 4, scale=0.1)], spec([None, 4]))

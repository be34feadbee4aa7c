"""Python values a compiled program reads while traced are read again, guarded or
warned of; never silently frozen into the program.

Each case calls a compiled function, changes what its Python code read, calls it
again and compares with the eager function, which reads the value on every call.
These used to keep the value of the first call: containers other than the exact
built-in types (``OrderedDict``, ``defaultdict``, a dict subclass) and
``functools.partial`` objects were guarded by identity only, so a change in place went
unseen, and a function's defaults and a module's attributes (``config.SCALE``) were not
guarded at all; a callable object's ``__call__`` and a partial's function ran unconverted, so
what they read was not recorded; ``vars(self)`` was not a recorded read; ``print`` of a
parameter showed its value at tracing; and Python's random numbers and clocks were
frozen without a word."""
import collections
import functools
import random
import time
import types

import numpy as np
import pytest

import irflow as paddle

X = np.ones([2], np.float32)


def _calls(layer, change, n=3):
    """Compiled and eager outputs of `layer` over `n` calls, `change(layer)` after each."""
    compiled = paddle.jit.to_static(layer)
    got, want = [], []
    for _ in range(n):
        x = paddle.to_tensor(X)
        got.append(compiled(x).numpy())
        want.append(type(layer).forward(layer, x).numpy())
        change(layer)
    return np.array(got), np.array(want)


class _Table(paddle.nn.Layer):
    """Scales by ``self.cfg["a"]``, an entry of the container it is given."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg

    def forward(self, x):
        return x * self.cfg["a"]


class _Dict(dict):
    pass


@pytest.mark.parametrize("make", [collections.OrderedDict,
                                  lambda **kw: collections.defaultdict(float, **kw), _Dict],
                         ids=["OrderedDict", "defaultdict", "dict_subclass"])
def test_an_entry_of_a_dict_subclass_changed_in_place_is_read_again(make):
    def bump(layer):
        layer.cfg["a"] += 1.0

    got, want = _calls(_Table(make(a=1.0)), bump)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], [1.0, 2.0, 3.0])


class _Partial(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.act = functools.partial(paddle.scale, scale=1.0)

    def forward(self, x):
        return self.act(x)


def test_the_keywords_of_a_partial_changed_in_place_are_read_again():
    def bump(layer):
        layer.act.keywords["scale"] += 1.0

    got, want = _calls(_Partial(), bump)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], [1.0, 2.0, 3.0])


def _signed(x, k):
    """``k * x`` where x sums positive, else ``-k * x``: a condition on a tensor."""
    if x.sum() > 0:
        return x * k
    return -x * k


def test_the_function_of_a_partial_is_converted():
    """A tensor ``if`` in the partial's function needs conversion (unconverted, it
    asks for the truth of a traced tensor)."""
    doubled = functools.partial(_signed, k=2.0)

    @paddle.jit.to_static
    def f(x):
        return doubled(x)

    for sign in (1.0, -1.0):
        x = paddle.to_tensor(sign * X)
        np.testing.assert_array_equal(f(x).numpy(), 2.0 * np.abs(X))


def _scaled(x, cfg={"k": 1.0}):  # noqa: B006 (the mutable default is the case)
    return x * cfg["k"]


def test_a_default_changed_in_place_is_read_again():
    """Eager calls get the default dict as it is now (Python's rule: a default is one
    object, made once, that every call shares)."""
    f = paddle.jit.to_static(_scaled)
    got = []
    for k in (1.0, 2.0, 3.0):
        _scaled.__defaults__[0]["k"] = k
        got.append(f(paddle.to_tensor(X)).numpy()[0])
    _scaled.__defaults__[0]["k"] = 1.0
    assert got == [1.0, 2.0, 3.0]


_config = types.ModuleType("baked_config")  # a user's settings module
_config.SCALE, _config.TABLE = 1.0, {"k": 1.0}


def test_a_module_attribute_set_between_calls_is_read_again():
    @paddle.jit.to_static
    def f(x):
        return x * _config.SCALE * _config.TABLE["k"]

    got = []
    for k in (1.0, 2.0, 3.0):
        _config.SCALE, _config.TABLE["k"] = k, k
        got.append(f(paddle.to_tensor(X)).numpy()[0])
    assert got == [1.0, 4.0, 9.0]


class _Scaler:
    """A callable object (not a Layer) whose factor the user changes."""

    def __init__(self):
        self.k = 1.0

    def __call__(self, x):
        return x * self.k


class _Calls(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fn = _Scaler()

    def forward(self, x):
        return self.fn(x)


def test_an_attribute_a_callable_object_reads_is_read_again():
    def bump(layer):
        layer.fn.k += 1.0

    got, want = _calls(_Calls(), bump)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], [1.0, 2.0, 3.0])


class _Vars(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = 1.0

    def forward(self, x):
        return x * vars(self)["a"]


def test_an_attribute_read_through_vars_is_read_again():
    def bump(layer):
        layer.a += 1.0

    got, want = _calls(_Vars(), bump)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], [1.0, 2.0, 3.0])


class _Printed(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([2], default_initializer=paddle.nn.initializer.Constant(1.0))

    def forward(self, x):
        print("w:", self.w)
        return x * self.w


def test_print_of_a_parameter_shows_what_it_holds_when_the_program_runs(capsys):
    layer = _Printed()
    compiled = paddle.jit.to_static(layer)
    compiled(paddle.to_tensor(X))
    layer.w.set_value(paddle.to_tensor(np.full([2], 3.0, np.float32)))
    capsys.readouterr()
    compiled(paddle.to_tensor(X))
    printed = capsys.readouterr().out
    assert printed.startswith("w: Parameter containing:")
    assert "[3., 3.]" in printed and "[1., 1.]" not in printed


def test_an_f_string_of_a_parameter_shows_what_it_holds_when_the_program_runs(capsys):
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))

    @paddle.jit.to_static
    def f(x):
        print(f"w={w} first={w[0]:.2f}")
        return x + w

    f(paddle.to_tensor(X))
    w.set_value(paddle.to_tensor([5.0, 6.0]))
    capsys.readouterr()
    f(paddle.to_tensor(X))
    printed = capsys.readouterr().out
    assert printed.startswith("w=Parameter containing:")
    assert "[5., 6.]" in printed and "first=5.00" in printed and "[1., 2.]" not in printed


@pytest.mark.parametrize("draw", [lambda: random.random(), lambda: float(np.random.rand()),
                                  lambda: float(np.random.default_rng(0).random()),
                                  lambda: time.time() % 1.0],
                         ids=["random", "np_random", "np_generator", "time"])
def test_python_random_numbers_and_clocks_in_compiled_code_warn(draw):
    """Traced once, the number drawn is the program's constant: said, not silent."""
    @paddle.jit.to_static
    def f(x):
        return x * draw()

    with pytest.warns(RuntimeWarning, match="reuses the value"):
        f(paddle.to_tensor(X))


class _Appends(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.seen = collections.OrderedDict()

    def forward(self, x):
        self.seen[len(self.seen)] = 1
        return x


def test_an_ordered_dict_changed_while_traced_warns():
    with pytest.warns(RuntimeWarning, match=r"changed a Python OrderedDict \(_Appends.seen\)"):
        paddle.jit.to_static(_Appends())(paddle.to_tensor(X))

"""Arguments that are not tensors (None, numbers, strings, bools) in any position of a
compiled call: ``m(x, lens=lens)`` skipping ``h0=None``, ``m(x, None, lens)``. Such an
argument is a constant of the trace, part of what picks the program, so a call with
another value or with a tensor there gets its own program, and every call gives what
eager code gives."""
import math
import warnings

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import InputError
from irflow.static import InputSpec

BACKENDS = ["numpy", "llvm"]


class Tagger(nn.Layer):
    """A recurrent tagger whose initial state and sequence lengths are optional."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, x, h0=None, lens=None):
        return self.out(self.rnn(x, h0, lens)[0])


def data(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = paddle.to_tensor(rng.standard_normal((batch, 5, 3)).astype("float32"))
    h0 = paddle.to_tensor(rng.standard_normal((1, batch, 4)).astype("float32"))
    lens = paddle.to_tensor(rng.integers(1, 6, batch).astype("int64"))
    return x, h0, lens


def tagger():
    paddle.seed(0)
    model = Tagger()
    model.eval()
    return model


def assert_same(got, want):
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_none_before_a_tensor_argument_as_eagerly(backend):
    model = tagger()
    static = paddle.compile(model, backend=backend)
    x, h0, lens = data(2)
    calls = [((x,), {"lens": lens}), ((x, None, lens), {}), ((x,), {}),
             ((x, h0, lens), {}), ((x, h0), {}), ((x,), {"h0": h0})]
    for args, kwargs in calls:  # each a program of its own, then the same one again
        for _ in range(2):
            assert_same(static(*args, **kwargs), model(*args, **kwargs))


def mix(x, scale, y, mode):
    if isinstance(scale, bool):  # True is a flag here, 1 a number
        scale = 3.0 if scale else -1.0
    out = x * scale + y
    return out.sum(axis=1) if mode == "sum" else out


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbers_and_strings_between_tensors_pick_their_program(backend):
    static = paddle.compile(mix, backend=backend)
    x, y = paddle.ones([2, 3]), paddle.full([2, 3], 0.5)
    for scale, mode in [(2.0, "sum"), (1, "sum"), (True, "sum"), (2.0, "all"),
                        (0.5, "all"), (2.0, "sum")]:
        assert_same(static(x, scale, y, mode), mix(x, scale, y, mode))


def first_state(x, states):
    h, c = states
    out = x * 2
    if h is not None:
        out = out + h
    if c is not None:
        out = out * c
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_none_inside_a_list_argument(backend):
    static = paddle.compile(first_state, backend=backend)
    x, h, c = paddle.ones([2]), paddle.full([2], 3.0), paddle.full([2], -2.0)
    for states in ([None, c], [h, None], [h, c], [None, None]):
        assert_same(static(x, states), first_state(x, states))


SPEC = [InputSpec([None, 5, 3], "float32", "x"), None, InputSpec([None], "int64", "lens")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_to_static_with_none_in_the_input_spec(backend):
    model = tagger()
    static = paddle.jit.to_static(model, input_spec=SPEC, backend=backend)
    for batch in (2, 3):
        x, h0, lens = data(batch, seed=batch)
        assert_same(static(x, lens=lens), model(x, lens=lens))
        assert_same(static(x, None, lens), model(x, None, lens))
    with pytest.raises(InputError, match="input 1 should be None as its input_spec says"):
        static(x, h0, lens)
    with pytest.raises(InputError, match="input 2 should be tensor as its input_spec says, "
                                         "got list"):
        static(x, None, [lens])


def test_jit_save_of_a_layer_with_none_in_its_input_spec(tmp_path):
    """The saved program's inputs are the tensors; the None is not one of them."""
    model = tagger()
    paddle.jit.save(model, str(tmp_path / "tagger"), input_spec=SPEC)
    loaded = paddle.jit.load(str(tmp_path / "tagger"))
    assert [s.name for s in loaded.input_spec] == ["x", "lens"]
    for batch in (2, 4):
        x, _, lens = data(batch, seed=batch)
        assert_same(loaded(x, lens), model(x, lens=lens))


def test_jit_save_of_a_layer_compiled_by_a_call_with_none_before_a_tensor(tmp_path):
    model = tagger()
    static = paddle.jit.to_static(model)
    x, _, lens = data(2)
    static(x, lens=lens)
    paddle.jit.save(static, str(tmp_path / "tagger"))
    loaded = paddle.jit.load(str(tmp_path / "tagger"))
    assert_same(loaded(x, lens), model(x, lens=lens))


def test_check_mode_with_none_before_a_tensor():
    model = tagger()
    static = paddle.compile(model, check=True)
    x, _, lens = data(2)
    assert_same(static(x, None, lens), model(x, None, lens))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_call_with_numbers_only_computes_what_eager_code_does(backend):
    """No tensor among the arguments: a program of no input (the LLVM backend made a
    native function of nothing for it, whose call did not compile)."""
    def double(x):
        return x * 2

    static = paddle.compile(double, backend=backend)
    for value in (1.5, 2, -0.0):
        got, want = static(value), double(value)
        assert type(got) is type(want) and got == want
        assert math.copysign(1.0, got) == math.copysign(1.0, want)


def test_a_number_that_changes_on_every_call_warns_once_that_each_value_compiles():
    """Each value of a non-tensor argument is traced and compiled anew: a learning rate
    passed as a Python float recompiles every step. The eighth value warns, once,
    naming the function and saying to pass a tensor; the programs kept are bounded."""
    import irflow.frontend.program as program_module

    def scaled(x, s):
        return x * s

    f = paddle.compile(scaled, backend="numpy")
    x = paddle.ones([2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(7):
            f(x, float(k))
        assert not [w for w in caught if "different values" in str(w.message)]
        for k in range(7, 20):
            np.testing.assert_array_equal(f(x, float(k)).numpy(), [k, k])
    warned = [w for w in caught if "different values" in str(w.message)]
    assert len(warned) == 1
    assert "scaled" in str(warned[0].message) and "paddle.to_tensor" in str(warned[0].message)
    assert warned[0].filename == __file__
    for k in range(program_module._PROGRAM_KEYS):
        f(x, k + 0.5)
    assert len(f._programs) <= program_module._PROGRAM_KEYS
    np.testing.assert_array_equal(f(x, 3.0).numpy(), [3.0, 3.0])  # dropped: traced again

"""Compiled code against eager code, found by running small programs eagerly and with
`irflow.compile` on both backends: text of tensors, Python iteration of sequences of
static length, and exceptions that leave a tensor-dependent branch while it is traced."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn

BACKENDS = ["numpy", "llvm"]
INPUTS = ([1.0, -2.0, 3.0], [-1.0, -2.0, -3.0])


def _printed(fn, capsys, *args):
    capsys.readouterr()
    out = fn(*args)
    return capsys.readouterr().out, out


def _compare_prints(fn, backend, capsys, inputs=INPUTS):
    compiled = paddle.compile(fn, backend=backend)
    for data in inputs:
        eager_text, eager_out = _printed(fn, capsys, paddle.to_tensor(data))
        compiled_text, compiled_out = _printed(compiled, capsys, paddle.to_tensor(data))
        assert compiled_text == eager_text
        np.testing.assert_allclose(compiled_out.numpy(), eager_out.numpy())


def _loss_in_f_strings(x):
    loss = x.sum()
    print(f"loss {loss}")          # a 0-d tensor formats as its number
    print(f"{loss:.2f} {loss!r}")  # with a spec; !r is the tensor's text
    print(loss)                    # print shows the tensor's text
    return loss


def _formats_in_a_loop_and_branch(x):
    for i in range(2):
        loss = (x * i).sum()
        if loss > 0:
            print(f"step {i} loss {loss} max {x.max()}")
        else:
            print("{} and {:.1f}".format(loss, loss), format(loss), str(loss))
    return x


def _text_of_a_list_of_tensors(x):
    print(f"{[x.sum(), x.max()]}", str([x.min()]))
    return x


@pytest.mark.parametrize("fn", [_loss_in_f_strings, _formats_in_a_loop_and_branch,
                                _text_of_a_list_of_tensors])
@pytest.mark.parametrize("backend", BACKENDS)
def test_f_strings_str_and_format_of_tensors_print_what_eager_code_prints(fn, backend, capsys):
    """``f"{loss}"`` of a 0-d tensor printed the tensor's text ("Tensor(shape=[],
    ...)") where eager code prints the number, and ``str(t)`` printed
    "Tensor(traced, ...)"."""
    _compare_prints(fn, backend, capsys)


class _Scaled(nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale = self.create_parameter([], default_initializer=nn.initializer.Constant(1.5))

    def forward(self, x):
        print(f"scale={self.scale} {self.scale:.1f}")
        return x * self.scale


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_f_string_of_a_0d_parameter_is_its_number(backend, capsys):
    eager_text, _ = _printed(_Scaled(), capsys, paddle.to_tensor([1.0]))
    assert eager_text == "scale=1.5 1.5\n"
    compiled_text, _ = _printed(paddle.compile(_Scaled(), backend=backend), capsys,
                                paddle.to_tensor([1.0]))
    assert compiled_text == eager_text


def _products_of_pairs(x):
    return [a * b for a, b in zip(x, x.flip(0))]


def _weighted_by_position(x):
    return sum(i * v for i, v in enumerate(x))


@pytest.mark.parametrize("fn", [_products_of_pairs, _weighted_by_position])
@pytest.mark.parametrize("backend", BACKENDS)
def test_zip_and_enumerate_of_tensors_iterate_in_python_when_their_length_is_known(fn, backend):
    """A comprehension with a tuple target or a generator expression over zip() or
    enumerate() of tensors of static length raised "iterating ... whose length is
    known only when the program runs"."""
    compiled = paddle.compile(fn, backend=backend)
    for data in ([1.0, -2.0, 3.0], [5.0, 2.0, 3.0, 4.0]):
        eager = fn(paddle.to_tensor(data))
        got = compiled(paddle.to_tensor(data))
        if isinstance(eager, list):
            assert len(got) == len(eager)
            eager, got = paddle.stack(eager), paddle.stack(got)
        np.testing.assert_allclose(got.numpy(), eager.numpy())


def _falls_back_on_error(x):
    try:
        if x.sum() > 0:
            raise ValueError("positive")
        y = x
    except ValueError:
        y = -x
    return y


def _breaks_out_by_an_exception(x):
    i = paddle.zeros([], "int64")
    try:
        while i < 3:
            if x[0] > 10:
                raise KeyError("large")
            i += 1
    except KeyError:
        i = i - 100
    return i


@pytest.mark.parametrize("fn", [_falls_back_on_error, _breaks_out_by_an_exception])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exception_caught_after_leaving_a_tensor_branch_is_refused(fn, backend):
    """The trace raised the exception in the branch it traced and went down the
    ``except`` path, so every run took it: ``f([-1, -2, -3])`` gave ``[1, 2, 3]``
    where eager code gives ``[-1, -2, -3]`` (Paddle 3.3.1's to_static does the same)."""
    assert np.array_equal(fn(paddle.to_tensor([-1.0, -2.0, -3.0])).numpy(),
                          [-1.0, -2.0, -3.0] if fn is _falls_back_on_error else 3)
    with pytest.raises(paddle.ConversionError, match="caught it") as info:
        paddle.compile(fn, backend=backend)(paddle.to_tensor([-1.0, -2.0, -3.0]))
    assert "raise" in str(info.value) and "__jst" not in str(info.value)


def test_an_exception_raised_in_a_tensor_branch_says_why_it_was_raised():
    def f(x):
        if x.sum() > 0:
            raise ValueError("positive")
        return x * 2

    with pytest.raises(ValueError, match="positive") as info:
        paddle.compile(f, backend="numpy")(paddle.to_tensor([-1.0]))
    assert any("tensor-dependent `if`" in note for note in info.value.__notes__)


def test_an_exception_handled_inside_the_branch_is_ordinary_python():
    def f(x):
        if x.sum() > 0:
            try:
                raise ValueError("positive")
            except ValueError:
                y = x * 2
        else:
            y = x * 3
        return y

    compiled = paddle.compile(f, backend="numpy")
    for data in INPUTS:
        np.testing.assert_allclose(compiled(paddle.to_tensor(data)).numpy(),
                                   f(paddle.to_tensor(data)).numpy())


def _reseeded(x, n):
    before = paddle.rand([2])          # drawn anew on every call
    paddle.seed(7)
    rows = paddle.zeros([3, 2])
    for i in range(n):
        rows[i] = paddle.rand([2])
    return before + x, rows, paddle.randn([2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_paddle_seed_in_compiled_code_makes_every_run_draw_the_same_numbers(backend):
    """Eagerly, the draws after ``paddle.seed(7)`` are the same on every call; the
    program reseeded only while it was traced, so each run drew other numbers."""
    eager = [_reseeded(paddle.zeros([2]), paddle.to_tensor(3)) for _ in range(2)]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(eager[0][1:], eager[1][1:]))
    compiled = paddle.compile(_reseeded, backend=backend)
    first, second = (compiled(paddle.zeros([2]), paddle.to_tensor(3)) for _ in range(2))
    assert not np.array_equal(first[0].numpy(), second[0].numpy())
    np.testing.assert_array_equal(first[1].numpy(), second[1].numpy())
    np.testing.assert_array_equal(first[2].numpy(), second[2].numpy())
    assert len({tuple(row) for row in first[1].numpy()}) == 3   # each iteration anew
    after = paddle.rand([1]).numpy()   # the run leaves the generator seeded, as eagerly
    paddle.seed(7)
    np.testing.assert_array_equal(after, paddle.rand([1]).numpy())


def test_paddle_seed_inside_a_tensor_branch_is_refused():
    def f(x):
        if x.sum() > 0:
            paddle.seed(3)
        return paddle.rand([2])

    with pytest.raises(paddle.ConversionError, match="paddle.seed"):
        paddle.compile(f, backend="numpy")(paddle.to_tensor([1.0]))

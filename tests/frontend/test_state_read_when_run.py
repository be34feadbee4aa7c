"""A parameter or buffer read in compiled code (``detach()``, ``paddle.to_tensor(p)``,
``item()``, ``float()``, ``int()``) is what the tensor holds when the program runs.
They used to read the array the tensor held while it was traced and bake it into the
program as a constant: a value ``set_value`` gave earlier in the same call, and every
update between calls (an optimizer's step, an EMA), were silently ignored. Reads
that need a NumPy value (``numpy()``, ``tolist()``) are refused, as for any tensor
whose value only the running program knows."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ConversionError


class _Counter(paddle.nn.Layer):
    """Adds one to a buffer, then reads it detached and attached."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", paddle.to_tensor(np.ones(2, np.float32)))

    def forward(self, x):
        with paddle.no_grad():
            self.count.set_value(self.count + 1)
        return x + self.count.detach(), x + self.count


def test_a_buffer_detached_after_set_value_reads_the_new_value():
    x = paddle.zeros([2])
    eager, compiled = _Counter(), paddle.jit.to_static(_Counter())
    for _ in range(3):
        want, got = eager(x), compiled(x)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(compiled(x)[0].numpy(), [5.0, 5.0])


@pytest.mark.parametrize("detached", [lambda p: p.detach(), lambda p: paddle.to_tensor(p),
                                      lambda p: p.detach().clone()],
                         ids=["detach", "to_tensor", "detach_clone"])
def test_a_parameter_detached_in_compiled_code_follows_its_updates(detached):
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))

    @paddle.jit.to_static
    def f(x):
        return x * detached(w)

    x = paddle.to_tensor([3.0, 4.0])
    np.testing.assert_array_equal(f(x).numpy(), [3.0, 8.0])
    w.set_value(paddle.to_tensor([10.0, 20.0]))
    np.testing.assert_array_equal(f(x).numpy(), [30.0, 80.0])


def test_a_detached_parameter_stops_the_gradient_in_a_training_step():
    """``(w * w.detach()).sum()`` has gradient ``w`` (the current one, each step), not
    ``2 w``: SGD then scales w by (1 - lr) a step."""
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, -2.0]))
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=[w])

    @paddle.jit.to_static
    def step():
        loss = (w * w.detach()).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    for k in range(1, 4):
        step()
        np.testing.assert_allclose(w.numpy(), np.array([1.0, -2.0]) * 0.5 ** k)


def test_a_parameter_detached_in_a_branch_is_read_when_the_program_runs():
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))

    @paddle.jit.to_static
    def f(x):
        if x.sum() > 0:
            y = x + w.detach()
        else:
            y = x - w.detach()
        return y

    w.set_value(paddle.to_tensor([5.0, 6.0]))
    f(paddle.to_tensor([1.0, 1.0]))
    w.set_value(paddle.to_tensor([7.0, 8.0]))
    np.testing.assert_array_equal(f(paddle.to_tensor([1.0, 1.0])).numpy(), [8.0, 9.0])
    np.testing.assert_array_equal(f(paddle.to_tensor([-1.0, -1.0])).numpy(), [-8.0, -9.0])


@pytest.mark.parametrize("number", [lambda p: p.item(), float, lambda p: float(p.item()), int],
                         ids=["item", "float", "float_of_item", "int"])
def test_a_parameters_number_in_compiled_code_is_read_when_it_runs(number):
    w = paddle.create_parameter([], "float32")
    w.set_value(paddle.to_tensor(2.0))

    @paddle.jit.to_static
    def f(x):
        return x * number(w)

    x = paddle.to_tensor([1.0, 3.0])
    np.testing.assert_array_equal(f(x).numpy(), [2.0, 6.0])
    w.set_value(paddle.to_tensor(5.0))
    np.testing.assert_array_equal(f(x).numpy(), [5.0, 15.0])


@pytest.mark.parametrize("read", [lambda p: p.numpy(), lambda p: p.tolist(), np.asarray],
                         ids=["numpy", "tolist", "asarray"])
def test_a_parameters_array_in_compiled_code_is_refused(read):
    w = paddle.create_parameter([2], "float32")

    @paddle.jit.to_static
    def f(x):
        return x + paddle.to_tensor(read(w))

    with pytest.raises(ConversionError, match="only knows when it runs"):
        f(paddle.ones([2]))


def test_a_static_programs_parameters_hold_their_start_values():
    """Code building a static program may read its parameters' values (what its
    Executor starts from): those are not refused."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 2], "float32")
            layer = paddle.nn.Linear(2, 1)
            layer(x)
            assert layer.weight.numpy().shape == (2, 1)
    finally:
        paddle.disable_static()

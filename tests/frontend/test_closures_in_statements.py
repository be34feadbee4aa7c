"""Closures made in a converted loop or branch read the user's variables, as late as
Python binds them: every lambda of ``for i in range(3)`` sees the last ``i``. The
converted statements run as generated functions; a closure made in one used to read
that function's own variable (of that iteration or branch), an early binding eager
code does not have."""
import numpy as np
import pytest

import irflow as paddle


def _loop_lambdas(x):
    fs = []
    for i in range(3):
        fs.append(lambda t: t * i)
    return fs[0](x) + fs[1](x)


def _loop_defs(x):
    fs = []
    for i in range(2):
        def f(t):
            return t + i
        fs.append(f)
    return fs[0](x)


def _branch_then_rebound(x, flag):
    if flag:
        y = x
        g = lambda: y * 2  # noqa: E731
    y = x + 10
    return g()


def _tensor_loop_closure(x, n):
    y = x
    for i in range(n):  # a tensor bound: a while loop in the program
        scale = lambda t: t * 2  # noqa: E731
        y = scale(y) + i
    return y


@pytest.mark.parametrize("fn, args", [
    (_loop_lambdas, (paddle.to_tensor([1.0, 2.0]),)),
    (_loop_defs, (paddle.to_tensor([1.0, 2.0]),)),
    (_branch_then_rebound, (paddle.to_tensor([1.0, 2.0]), True)),
    (_tensor_loop_closure, (paddle.to_tensor([1.0, 2.0]), paddle.to_tensor(3))),
], ids=["loop_lambdas", "loop_defs", "branch_then_rebound", "tensor_loop"])
def test_a_closure_made_in_a_statement_reads_the_users_variable(fn, args):
    np.testing.assert_array_equal(paddle.jit.to_static(fn)(*args).numpy(), fn(*args).numpy())


def test_branches_making_different_functions_are_refused_naming_the_users_lines():
    from irflow.errors import ConversionError

    def f(x):
        if x.sum() > 0:
            g = lambda: x * 2  # noqa: E731
        else:
            g = lambda: x * 3  # noqa: E731
        return g()

    with pytest.raises(ConversionError, match="the function <lambda> of line") as caught:
        paddle.jit.to_static(f)(paddle.to_tensor([1.0, 2.0]))
    assert "__jst" not in str(caught.value)

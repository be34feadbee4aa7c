"""A gradient computed in compiled code without ``create_graph`` (``paddle.grad``, or a
``.grad`` that ``backward()`` set) is a constant to what follows, as eagerly: a second
differentiation must not reach its computation. It used to (``grad((g * x).sum(), x)``
of ``g = grad((x ** 3).sum(), x)`` gave 9x^2 where eager code gives 3x^2), and a
function returning such a gradient gave it back requiring a gradient."""
import numpy as np

import irflow as paddle


def test_a_gradient_without_create_graph_is_a_constant_when_differentiated_again():
    def f(x):
        g, = paddle.grad((x ** 3).sum(), x)
        again, = paddle.grad((g * x).sum(), x)
        return g, again

    x = paddle.to_tensor([1.0, 2.0])
    x.stop_gradient = False
    g, again = paddle.jit.to_static(f)(x)
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(again.numpy(), [3.0, 12.0])  # g itself: 3x^2
    assert g.stop_gradient and again.stop_gradient


def test_a_gradient_with_create_graph_is_differentiated_through():
    def f(x):
        g, = paddle.grad((x ** 3).sum(), x, create_graph=True)
        again, = paddle.grad((g * x).sum(), x)
        return again

    x = paddle.to_tensor([1.0, 2.0])
    x.stop_gradient = False
    np.testing.assert_allclose(paddle.jit.to_static(f)(x).numpy(), [9.0, 36.0])


def test_an_input_gradient_through_a_convolution_compiles():
    """Differentiating through the input gradient's own computation needed a VJP of
    the filter gradient, which no rule gives: the compiled function failed."""
    conv = paddle.nn.Conv2D(2, 3, 3)

    def f(x):
        g, = paddle.grad(conv(x).sum(), x)
        return (g ** 2).sum()

    x = paddle.randn([1, 2, 5, 5])
    x.stop_gradient = False
    np.testing.assert_allclose(float(paddle.jit.to_static(f)(x)), float(f(x)), rtol=1e-5)


def test_a_grad_that_backward_set_is_a_constant_in_the_same_program():
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 3.0]))

    @paddle.jit.to_static
    def f(x):
        (w ** 2 * x).sum().backward()
        penalty = (w.grad ** 2).sum()
        penalty.backward()  # w.grad is a constant: this adds nothing to it
        return penalty

    np.testing.assert_allclose(float(f(paddle.to_tensor([1.0, 1.0]))), 40.0)
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 6.0])

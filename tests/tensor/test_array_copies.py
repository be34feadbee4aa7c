"""``np.array(t)``, ``np.asarray(t)`` and ``paddle.Tensor(array)`` copy, as Paddle's:
the array a tensor holds is shared with the values autograd saved and with other
tensors (irflow never mutates arrays), so a caller writing into the one it was handed
changed the tensor, and gradients computed later, silently."""
import numpy as np
import pytest

import irflow as paddle


@pytest.mark.parametrize("convert", [np.array, np.asarray], ids=["array", "asarray"])
def test_an_array_made_of_a_tensor_is_its_own(convert):
    t = paddle.to_tensor([0.5, 0.25])
    a = convert(t)
    a *= 255
    np.testing.assert_array_equal(t.numpy(), [0.5, 0.25])


def test_writing_into_an_array_of_an_intermediate_leaves_its_gradient_alone():
    w = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = w * 2
    z = (y * y).sum()
    np.asarray(y)[:] *= 0
    z.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [8.0, 16.0, 24.0])  # d(4w^2)/dw


def test_a_tensor_made_of_an_array_does_not_follow_it():
    a = np.array([1.0, 2.0], np.float32)
    t = paddle.Tensor(a)
    a[0] = 9.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])

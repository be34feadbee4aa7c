"""nn.ParameterList: registration under "0", "1", ..., indexing, assignment into the
held parameters, training through an optimizer, and use in compiled models."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec


def params(*shapes):
    return [paddle.create_parameter(list(s), "float32") for s in shapes]


class Chain(nn.Layer):
    """x @ w0 @ w1 ..., the weights held in a ParameterList."""

    def __init__(self):
        super().__init__()
        self.weights = nn.ParameterList(params((3, 4), (4, 2)))

    def forward(self, x):
        for w in self.weights:
            x = paddle.matmul(x, w)
        return x


def test_registration_indexing_and_iteration():
    first, second, third = params((2,), (3,), (1,))
    plist = nn.ParameterList([first, second])
    assert list(plist.state_dict()) == ["0", "1"] and len(plist) == 2
    assert plist[0] is first and plist[-1] is second
    assert list(plist) == [first, second]
    assert plist.append(third) is plist and plist[2] is third
    assert nn.ParameterList().parameters() == [] and repr(nn.ParameterList()) == "ParameterList()"
    with pytest.raises(IndexError, match="out of range for a container of 3 parameters"):
        plist[3]


def test_assignment_copies_into_the_held_parameter():
    (w,) = params((2,))
    plist = nn.ParameterList([w])
    plist[0] = paddle.to_tensor([5.0, 6.0])
    assert plist[0] is w
    np.testing.assert_array_equal(w.numpy(), [5.0, 6.0])
    with pytest.raises(TypeError, match="param should be 'Parameter' or 'Tensor'"):
        plist[0] = [1.0, 2.0]


def test_only_parameters_are_accepted():
    with pytest.raises(TypeError, match="requires Parameter"):
        nn.ParameterList([paddle.ones([2])])


def test_parameters_train_and_reach_the_outer_layer():
    model = Chain()
    assert [n for n, _ in model.named_parameters()] == ["weights.0", "weights.1"]
    before = [p.numpy() for p in model.parameters()]
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    paddle.sum(model(x)).backward()
    opt.step()
    ones = np.ones((5, 2), np.float32)
    w0, w1 = before
    np.testing.assert_allclose(model.weights[1].numpy(), w1 - 0.1 * (x.numpy() @ w0).T @ ones,
                               rtol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_model_with_a_parameter_list(backend):
    model = Chain()
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    eager = model(x).numpy()
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(), eager,
                               rtol=1e-6)
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 3])], backend=backend)
    np.testing.assert_allclose(static(x).numpy(), eager, rtol=1e-6)

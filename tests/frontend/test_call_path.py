"""The per-call caches of a compiled function (its spec's types, the input checks by
input types, the arrays' types) change nothing a call does: every call still
checks its inputs, picks the program for the layer's current mode and structure,
and returns what eager code returns."""
import numpy as np
import pytest

import irflow
from irflow import nn
from irflow.errors import InputError
from irflow.static import InputSpec


def _mlp():
    irflow.seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5), nn.Linear(3, 2))


def test_repeated_calls_check_every_input():
    model = _mlp()
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = np.ones((2, 4), np.float32)
    with irflow.no_grad():
        first = static(irflow.to_tensor(x)).numpy()
        for _ in range(3):
            np.testing.assert_array_equal(static(irflow.to_tensor(x)).numpy(), first)
        with pytest.raises(InputError, match=r"should have shape \[None, 4\], got \[2, 5\]"):
            static(irflow.to_tensor(np.ones((2, 5), np.float32)))
        with pytest.raises(InputError, match="should be float32, got float64"):
            static(irflow.to_tensor(np.ones((2, 4))))
        np.testing.assert_array_equal(static(irflow.to_tensor(x)).numpy(), first)


def test_without_a_spec_each_shape_and_dtype_gets_its_program():
    static = irflow.compile(lambda a: a * 2)
    for shape, dtype in [((2,), "float32"), ((3,), "float32"), ((2,), "int64"), ((2,), "float32")]:
        a = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
        out = static(irflow.to_tensor(a))
        assert out.numpy().dtype == dtype and out.shape == list(shape)
        np.testing.assert_array_equal(out.numpy(), a * 2)
    assert len(static._programs) == 3


def test_mode_and_structure_changes_between_calls_are_seen():
    model = _mlp()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = irflow.to_tensor(np.ones((8, 4), np.float32))
    model.eval()
    with irflow.no_grad():
        evaluated = static(x).numpy()
        model.train()
        assert not np.array_equal(static(x).numpy(), evaluated)  # dropout is on
        model.eval()
        np.testing.assert_array_equal(static(x).numpy(), evaluated)
        model[2] = nn.Linear(3, 5)
        assert static(x).shape == [8, 5]


def test_a_returned_structure_around_one_tensor():
    static = irflow.compile(lambda a: (a + 1, None, [a * 2]))
    out = static(irflow.to_tensor(np.ones(2, np.float32)))
    assert out[1] is None and out[0].numpy().tolist() == [2, 2]
    assert out[2][0].numpy().tolist() == [2, 2]

"""`Signature.static_matcher`: the check of a `Plan.runner`'s state arguments, one
generated function for a few arguments and a map over very many, says the same as
the full check."""
import numpy as np
import pytest

from irflow.ir import TensorType, dtypes
from irflow.ir.signature import _UNROLLED, Signature, SignatureMismatch


def _signature(n_state: int) -> Signature:
    state = [TensorType(dtypes.float32 if i % 2 else dtypes.int64, (i % 3 + 1, 2))
             for i in range(n_state)]
    return Signature([TensorType(dtypes.float32, ("N", 2)), *state])


def _arguments(signature: Signature) -> list:
    return [np.zeros((1, 2), np.float32)] + [np.zeros(t.shape, t.dtype.np)
                                             for t in signature.types[1:]]


def _changes(arguments: list) -> dict:
    """Ways a state argument can stop matching its type (all but a subclass, which the
    full check converts, a mismatch)."""
    last = arguments[-1]
    return {"shape": arguments[:-1] + [np.zeros(last.shape + (1,), last.dtype)],
            "dtype": arguments[:-1] + [last.astype(np.float64)],
            "subclass": arguments[:-1] + [last.view(np.matrix)],
            "fewer": arguments[:-1],
            "more": arguments + [last]}


@pytest.mark.parametrize("n_state", [0, 1, 4, _UNROLLED, _UNROLLED + 1])
def test_the_state_check_says_what_the_full_check_says(n_state):
    signature = _signature(n_state)
    matches = signature.static_matcher(1)
    arguments = _arguments(signature)
    assert matches(arguments)
    assert matches([np.zeros((5, 2), np.float32)] + arguments[1:])  # the input is not its
    if not n_state:
        return
    for change, changed in _changes(arguments).items():
        assert not matches(changed), change
        if change != "subclass":
            with pytest.raises(SignatureMismatch):
                signature.check(changed)


def test_an_equal_dtype_that_is_another_object_matches():
    signature = _signature(1)
    (state,) = _arguments(signature)[1:]
    other = np.dtype(state.dtype.str)  # the same dtype by value
    assert signature.static_matcher(1)([np.zeros((1, 2), np.float32), state.view(other)])


def test_a_symbolic_state_type_has_no_static_check():
    signature = Signature([TensorType(dtypes.float32, ("N", 2)),
                           TensorType(dtypes.float32, ("N",))])
    assert signature.static_matcher(1) is None

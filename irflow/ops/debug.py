"""`assert`: a run-time check of a bool scalar, as Python's ``assert`` on a tensor in
compiled code.

The frontend turns ``assert paddle.all(x > 0), "x must be positive"`` into
``assert %p {msg="model.py:12: x must be positive"}``: the message already names the
user's line, because the kernel raises long after tracing, from the executor. The
frontend also checks with it what Python would check at run time, such as a variable
read after a loop that ran zero times (``error="UnboundLocalError"``), and the
`one-hot` pass what a gather would (``error="IndexError"``: an index out of bounds),
and ``squeeze()`` that a dim of a size known only at run time is not 1
(``error="ShapeError"``); ``one_hot`` that its indices lie in [0, num_classes)
(``error="OutOfRangeError"``, as eager code raises).
"""
from __future__ import annotations

from ..errors import OutOfRangeError, ShapeError
from ..ir import dtypes
from ..ir.registry import REQUIRED, Effect
from ._rules import defop
from .control import format_text


def _assert_infer(types, attrs):
    if types[0].dtype is not dtypes.bool_ or types[0].rank != 0:
        raise ShapeError(f"assert takes a bool scalar, got {types[0]}")
    return ()


ERRORS = {"AssertionError": AssertionError, "UnboundLocalError": UnboundLocalError,
          "IndexError": IndexError, "ShapeError": ShapeError,
          "OutOfRangeError": OutOfRangeError}


def _assert_canon(attrs, types):
    if attrs.get("error", "AssertionError") not in ERRORS:
        raise ShapeError(f"assert: error must be one of {sorted(ERRORS)}, got "
                         f"{attrs['error']!r}")
    return attrs


def _assert_kernel(pred, *values, msg, error, scalars, arrays, grads):
    if not pred:
        raise ERRORS[error](format_text(msg, values, scalars, arrays, grads) if values
                            else msg)
    return ()


defop("assert", _assert_infer, _assert_kernel, arity=(1, None),
      attrs={"msg": REQUIRED, "error": "AssertionError", "scalars": (), "arrays": (),
             "grads": ()},
      canonicalize=_assert_canon, effect=Effect.IO, nondiff=True,
      doc="raise `error` (AssertionError, UnboundLocalError, IndexError, ShapeError or "
          "OutOfRangeError) with `msg` when the bool scalar first operand is false; runs "
          "when the program runs, in the branch or iteration that reaches it. With more "
          "operands, `msg` is a format whose fields they fill, shown as `print` shows its "
          "operands (`scalars`, `arrays`, `grads`): a message showing values of the run "
          "(``assert ok, f\"max {x.max()}\"``)")

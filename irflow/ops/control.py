"""Constants, structured control flow (`cond`, `while`) and the terminators.

`cond %p, %a, %b` runs its ``then`` region when the bool scalar ``%p`` is true and its
``else`` region otherwise; both regions receive ``%a, %b`` as block arguments and end
in ``yield`` with the op's result types.

`while %c1, %x0, %y0` carries as many values as it has results (here ``%x0, %y0``);
the leading operands (``%c1``) are loop invariants. Both regions receive
``(invariants..., carried...)``: the ``cond`` region ends in ``condition %bool`` and the
``body`` region yields the next carried values. The results are the carried values
when the condition first fails.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, VerificationError
from ..ir import dtypes
from ..ir.registry import REQUIRED, Effect
from ..ir.types import TensorType
from ._rules import defop


def _const_infer(types, attrs):
    value = attrs["value"]
    return TensorType(dtypes.from_numpy(value), value.shape)


def _const_canon(attrs, types):
    return {"value": np.asarray(attrs["value"])}


defop("const", _const_infer, lambda value: value, attrs={"value": REQUIRED},
      canonicalize=_const_canon,
      doc="const {value}: a constant tensor, no operands. The result type is the value's "
          "dtype and shape; in text the literal (a number or nested list) takes the result "
          "type's dtype")


def _no_results(types, attrs):
    return ()


for _name, _doc in [("yield", "ends a `cond` branch or a `while` body; its operands' types "
                              "must be the enclosing op's result types"),
                    ("return", "ends a function, returning its operands, whose types are the "
                               "function's result types")]:
    defop(_name, _no_results, arity=(0, None), terminator=True, accepts_stacks=True, doc=_doc)


def _condition_infer(types, attrs):
    if types[0].dtype is not dtypes.bool_ or types[0].rank != 0:
        raise ShapeError(f"the condition must be a bool scalar, got {types[0]}")
    return ()


defop("condition", _condition_infer, arity=1, terminator=True,
      doc="ends the `cond` region of a `while`: continue while the bool scalar is true")


def _check_predicate(t: TensorType, what: str) -> None:
    if t.dtype is not dtypes.bool_ or t.rank != 0:
        raise VerificationError(f"{what} must be a bool scalar, got {t}")


def _types(values) -> str:
    return "(" + ", ".join(str(v.type) for v in values) + ")"


def check_region(op, index: int, label: str, arg_values, terminator: str, yielded) -> None:
    """Region `index` of `op` takes arguments typed like `arg_values` and ends in
    `terminator` whose operands are typed like `yielded` (None: not checked here)."""
    block = op.regions[index].blocks[0]
    if [a.type for a in block.args] != [v.type for v in arg_values]:
        raise VerificationError(f"{label} region takes {_types(block.args)} but "
                                f"{op.name} passes it {_types(arg_values)}")
    term = block.terminator
    if term is None or term.name != terminator:
        found = term.name if term is not None else "nothing"
        raise VerificationError(f"{label} region must end with '{terminator}', found {found}")
    if yielded is not None and [v.type for v in term.operands] != [v.type for v in yielded]:
        raise VerificationError(f"{label} region yields {_types(term.operands)} but "
                                f"{op.name} has results {_types(yielded)}")


def captured_operands(op) -> range:
    """Indices of a cond's or while's operands that enter its regions as their first
    block arguments, in order (the cond's operands after the predicate; the while's
    loop invariants). Block argument j receives operand ``range[j]``."""
    if op.name == "cond":
        return range(1, len(op.operands))
    if op.name == "while":
        return range(0, len(op.operands) - len(op.results))
    raise ValueError(f"{op.name} has no captured operands")


def _verify_cond(op) -> None:
    if len(op.regions) != 2 or not op.operands:
        raise VerificationError("cond needs a predicate operand and two regions (then, else)")
    _check_predicate(op.operands[0].type, "cond's predicate")
    for index, label in enumerate(("then", "else")):
        check_region(op, index, label, op.operands[1:], "yield", op.results)


def _verify_while(op) -> None:
    n_carried = len(op.results)
    if len(op.regions) != 2 or len(op.operands) < n_carried:
        raise VerificationError("while needs two regions (cond, body) and an initial value "
                                "for each result")
    inits = op.operands[len(op.operands) - n_carried:]
    if [v.type for v in inits] != [r.type for r in op.results]:
        raise VerificationError(f"while carries {_types(inits)} but has results "
                                f"{_types(op.results)}")
    check_region(op, 0, "cond", op.operands, "condition", None)
    check_region(op, 1, "body", op.operands, "yield", op.results)


defop("cond", None, arity=(1, None), regions=("then", "else"), verify=_verify_cond,
      accepts_stacks=True,
      doc="cond(p, xs...): operands are a bool scalar predicate p and the values xs the "
          "branches read. Both regions ^then and ^else take (xs...) as block arguments and end "
          "in yield with the op's result types; the op's results are what the taken branch "
          "yields")
defop("while", None, arity=(0, None), regions=("cond", "body"), verify=_verify_while,
      accepts_stacks=True,
      doc="while(cs..., inits...): the last operands are initial values of the carried "
          "values (one per result), the first ones loop invariants. Both regions take "
          "(cs..., carried...); ^cond ends in `condition` with a bool scalar, ^body yields the "
          "next carried values (the result types). The results are the carried values when "
          "the condition first fails")


def _print_kernel(*arrays, fmt):
    from ..tensor.tensor import Tensor
    print(fmt.format(*(Tensor._from_array(a) for a in arrays)))
    return ()


defop("print", _no_results, _print_kernel, arity=(0, None), attrs={"fmt": REQUIRED},
      effect=Effect.IO,
      doc="print `fmt` with each `{}` replaced by the next operand, shown as a Tensor; runs "
          "when the program runs, in the branch or iteration that reaches it")

"""Matrix ops: the triangles `tril` and `triu`, and `einsum`.

`einsum`'s equation is put in one explicit form when the op is built: the output
spelled out (implicit outputs list the labels seen once, sorted, as in NumPy) and an
ellipsis replaced by capital letters the equation does not use, one per dim it
covers, aligned from the right
(so ``...ij,...jk`` and ``bij,bjk`` are the same op); the dims that one label
names must be equal. Its VJP is one `einsum` per operand, of the cotangent with the
other operands, summed to the labels the operand shares with them and broadcast
over the ones only it has; an operand that repeats a label gets it on that diagonal.
"""
from __future__ import annotations

import string

import numpy as np

from ..errors import ShapeError, SymbolicShapeError
from ..ir.registry import REQUIRED
from ..ir.types import TensorType, broadcast_shapes, reworded
from ._rules import check_kind, defop, same_dtype


def _triangle_infer(types, attrs):
    (t,) = types
    check_kind(t, "any")
    if t.rank < 2:
        raise ShapeError(f"needs a matrix or a batch of them (rank >= 2), got {t}")
    return t


def _triangle(name: str, keep: str, kernel):
    def vjp(b, g, i, o, diagonal):
        return [getattr(b, name)(g[0], diagonal=diagonal)]
    defop(name, _triangle_infer, lambda x, diagonal: kernel(x, diagonal), arity=1,
          attrs={"diagonal": 0}, vjp=vjp,
          doc=f"{name}(x) {{diagonal}}: x with the elements {keep} the `diagonal`-th "
              "diagonal of its last two axes kept and the others zero (diagonal 0 is the "
              "main one, positive ones lie above it); same type as x. The VJP applies "
              f"{name} to the cotangent")


_triangle("tril", "on and below", np.tril)
_triangle("triu", "on and above", np.triu)


# ---------------------------------------------------------------- einsum

_ELLIPSIS_LABELS = string.ascii_uppercase


def _parse_equation(equation: str, ranks) -> tuple[list[str], str]:
    """The operands' label strings and the output's, explicit and without ellipsis."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise ShapeError(f"einsum equation {equation!r} has {len(terms)} operand(s), "
                         f"got {len(ranks)} tensor(s)")
    spans = []
    for term, rank in zip(terms, ranks):
        letters = term.replace("...", "")
        if not all(c in string.ascii_letters for c in letters):
            raise ShapeError(f"einsum labels must be letters, got {term!r}")
        span = rank - len(letters)
        if span < 0 or (span and "..." not in term):
            raise ShapeError(f"einsum term {term!r} does not fit an operand of rank {rank}")
        spans.append(span)
    widest = max(spans, default=0)
    free = [c for c in _ELLIPSIS_LABELS if c not in equation]
    if widest > len(free):
        raise ShapeError(f"einsum equation {equation!r} leaves too few letters for its "
                         "ellipsis")
    ellipsis = "".join(free[:widest])
    explicit = [term.replace("...", ellipsis[widest - span:]) for term, span in zip(terms, spans)]
    if arrow:
        output = output.replace("...", ellipsis)  # without one, its dims are summed
        if not all(c in string.ascii_letters for c in output) or len(set(output)) != len(output):
            raise ShapeError(f"einsum output {output!r} must list distinct labels")
    else:
        counts = {}
        for term in explicit:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(sorted(c for c, n in counts.items()
                                           if n == 1 and c not in ellipsis))
    seen = set("".join(explicit))
    for c in output:
        if c not in seen:
            raise ShapeError(f"einsum output label {c!r} appears in no operand")
    return explicit, output


def _einsum_canon(attrs, types):
    terms, output = _parse_equation(attrs["equation"], [t.rank for t in types])
    return {"equation": ",".join(terms) + "->" + output}


def _label_sizes(terms, types) -> dict:
    sizes: dict = {}
    for term, t in zip(terms, types):
        for label, d in zip(term, t.shape):
            if label in sizes and sizes[label] != d:
                try:  # a size-1 dim stretches, as NumPy's einsum allows
                    sizes[label] = broadcast_shapes((sizes[label],), (d,))[0]
                except ShapeError as e:  # (a DimMismatch of two symbols the tracer ties)
                    raise reworded(e, f"einsum label {label!r} names dims of sizes "
                                      f"{sizes[label]} and {d}") from None
            else:
                sizes[label] = d
    return sizes


def _einsum_infer(types, attrs):
    for t in types:
        check_kind(t, "number")
    same_dtype(types)
    inputs, output = attrs["equation"].split("->")
    sizes = _label_sizes(inputs.split(","), types)
    return TensorType(types[0].dtype, tuple(sizes[c] for c in output))


def _einsum_kernel(*xs, equation):
    """np.einsum, copied where NumPy returns a view of an operand (a permutation, a
    diagonal): a kernel's result is memory of its own, which buffer planning relies on."""
    out = np.asarray(np.einsum(equation, *xs))
    if not out.flags.c_contiguous or any(np.may_share_memory(out, x) for x in xs):
        out = np.array(out, order="C")
    return out


def _einsum_out(*xs, out, equation):
    np.einsum(equation, *xs, out=out)


def _einsum_vjp(b, g, ins, outs, equation):
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    cts = []
    for k, (term, x) in enumerate(zip(terms, ins)):
        if not x.type.dtype.is_float:
            cts.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != k]
        rest = [v for j, v in enumerate(ins) if j != k]
        distinct = "".join(dict.fromkeys(term))
        sizes: dict = {}
        for c, d in zip(term, x.type.shape):
            sizes.setdefault(c, d)
        ct = _distinct_ct(b, g[0], rest, output, others, distinct,
                          tuple(sizes[c] for c in distinct))
        if distinct != term:
            ct = _onto_diagonals(b, ct, distinct, term, sizes, x.type.dtype, equation)
        cts.append(ct)
    return cts


def _distinct_ct(b, g, rest, output, others, term, shape):
    """The cotangent of an operand whose labels are all distinct (`term`, of `shape`):
    an einsum of g with the other operands, broadcast over the labels only it has."""
    shared = set(output).union(*others)
    kept = "".join(c for c in term if c in shared)
    ct = b.einsum(g, *rest, equation=",".join([output, *others]) + "->" + kept)
    if kept != term:  # labels only this operand has: broadcast over them
        ones = tuple(d if c in kept else 1 for c, d in zip(term, shape))
        return b.broadcast_to(b.reshape(ct, shape=ones), shape=shape)
    if ct.type.shape != shape:  # a stretched size-1 dim: sum it back
        return b.sum(ct, axis=tuple(i for i, d in enumerate(shape)
                                    if d == 1 and ct.type.shape[i] != 1), keepdim=True)
    return ct


def _onto_diagonals(b, ct, distinct, term, sizes, dtype, equation):
    """The cotangent of an operand that repeats labels (`term`, such as ``ii`` of a
    trace), from that of its distinct labels (`distinct`): each repeat of a label is
    renamed to a fresh one tied to the first by an identity matrix, so the cotangent
    lands on the diagonal and is 0 off it (``i,iI->iI``)."""
    fresh = iter(c for c in string.ascii_letters if c not in equation)
    renamed, ties, seen = [], [], set()
    for c in term:
        if c in seen:
            label = next(fresh)
            ties.append(c + label)
            renamed.append(label)
        else:
            seen.add(c)
            renamed.append(c)
    eyes = [_identity(b, sizes[tie[0]], dtype) for tie in ties]
    return b.einsum(ct, *eyes, equation=",".join([distinct, *ties]) + "->" + "".join(renamed))


def _identity(b, n, dtype):
    """The n x n identity as a constant (n must be static: it places a cotangent on a
    diagonal)."""
    if not isinstance(n, int):
        raise SymbolicShapeError(f"einsum: the gradient of an operand that repeats a label "
                                 f"needs that label's size, got the symbolic {n}; make the "
                                 "operand's sizes static")
    return b.constant(np.eye(n), dtype)


defop("einsum", _einsum_infer, _einsum_kernel, out_kernel=_einsum_out, arity=(1, None),
      attrs={"equation": REQUIRED}, canonicalize=_einsum_canon, vjp=_einsum_vjp,
      doc="einsum(x, ...) {equation}: Einstein summation, as NumPy's and Paddle's: each "
          "operand's axes get the labels of its term, labels missing from the output are "
          "summed. The equation is stored explicitly (`ij,jk->ik`), an ellipsis as "
          "capital labels. Operands are float or int tensors of one dtype. The VJP of an "
          "operand is an einsum of the cotangent with the others; for an operand that "
          "repeats a label (a diagonal, `ii->i`), placed on that diagonal by an einsum "
          "with identity matrices (the label's size must be static)")

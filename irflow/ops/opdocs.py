"""The op reference of ``docs/ir.md``, generated from the op registry.

Every registered op gets one entry: its name, operand count, attributes with their
defaults (in the IR's literal syntax), regions, effect, whether gradients flow
through it, and its ``doc`` string. Ops are grouped by family, the `irflow.ops`
module that declares them, and each family opens with that module's docstring.

The generated text sits in ``docs/ir.md`` between `BEGIN` and `END`; the rest of the
page is written by hand. After adding or changing an op, run

    python -m irflow.ops.opdocs           # rewrite the generated section
    python -m irflow.ops.opdocs --check   # exit 1 if it is out of date

``tests/ir/test_docs.py`` fails while the section is out of date or an op has no doc.
"""
from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

from .. import ops  # importing irflow.ops registers every op
from ..ir.printer import format_attr
from ..ir.registry import REQUIRED, Effect, OpDef, all_ops
from ..ir.symbols import CallOp
from ..ir.traits import Elementwise, Terminator, View

BEGIN = "<!-- BEGIN GENERATED OP REFERENCE: python -m irflow.ops.opdocs -->"
END = "<!-- END GENERATED OP REFERENCE -->"
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "ir.md"

# Families in reading order: the building blocks first, the internal ones last.
# A family missing here (a new module) follows these, alphabetically.
FAMILY_ORDER = ("control", "elementwise", "reduce", "linalg", "shape", "nn", "fused", "random",
                "stack", "call", "debug", "testing")

_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_MARKDOWN_SPECIAL = re.compile(r"(\*|\\|<(?=[A-Za-z/!?]))")


# ---------------------------------------------------------------- reading the registry

def family(opdef: OpDef) -> str | None:
    """The `irflow.ops` module that declares `opdef`, e.g. ``"shape"``, or None for an
    op declared elsewhere (a test's).

    The registry does not record it, so it is read off what the declaration holds:
    the type rule, the kernel and the other hooks, or the classes of its traits,
    whichever is defined in an op module (helpers shared through ``_rules`` do not
    count)."""
    prefix = ops.__name__ + "."
    hooks = (opdef.infer, opdef.verify, opdef.kernel, opdef.canonicalize, opdef.vjp,
             *(type(t) for t in opdef.traits))
    for fn in hooks:
        module = getattr(fn, "__module__", None) or ""
        if module.startswith(prefix) and not module.endswith("._rules"):
            return module[len(prefix):]
    return None


def families() -> dict[str, list[OpDef]]:
    """The ops irflow declares, by family, families in `FAMILY_ORDER`, ops in
    declaration order."""
    grouped: dict[str, list[OpDef]] = {}
    for opdef in all_ops():
        name = family(opdef)
        if name is not None:
            grouped.setdefault(name, []).append(opdef)

    def rank(name: str):
        if name in FAMILY_ORDER:
            return FAMILY_ORDER.index(name), ""
        return len(FAMILY_ORDER), name
    return {name: grouped[name] for name in sorted(grouped, key=rank)}


def undocumented_ops() -> list[str]:
    """Names of irflow's ops whose ``doc`` is empty."""
    return [opdef.name for opdef in all_ops()
            if family(opdef) is not None and not opdef.doc.strip()]


# ---------------------------------------------------------------- one entry

def arity_text(arity) -> str:
    if isinstance(arity, int):
        return "none" if arity == 0 else str(arity)
    lo, hi = arity
    if hi is None:
        return "any number" if lo == 0 else f"{lo} or more"
    return f"{lo} to {hi}"


def attrs_text(opdef: OpDef) -> str:
    if not opdef.attrs:
        return "none"
    items = []
    for key, default in opdef.attrs.items():
        text = f"`{key}` (required)" if default is REQUIRED else f"`{key}={format_attr(default)}`"
        if key in opdef.shape_attrs:
            text += " (a shape; dims may be symbols)"
        items.append(text)
    return ", ".join(items)


def regions_text(opdef: OpDef) -> str:
    return ", ".join(f"`^{name}`" for name in opdef.regions) or "none"


def gradient_text(opdef: OpDef) -> str:
    """Whether and how reverse-mode autodiff gets through the op."""
    if opdef.vjp is not None:
        return "differentiable (VJP rule)"
    if opdef.nondiff:
        return "not differentiable: its results carry no gradient"
    if opdef.region_op is not None and opdef.region_op.differentiable:
        return "differentiable: its region-op interface brings the rule"
    if opdef.region_op is not None:
        return "not differentiable: its region-op interface says why"
    if opdef.has(Terminator):
        return "not applicable (a terminator; autodiff handles it with its block)"
    if opdef.arity == 0:
        return "not applicable (no operands)"
    return "no VJP rule: differentiating through it is an error"


def memory_text(opdef: OpDef) -> str:
    """Where a compiled plan puts the op's result (see `irflow.passes.plan_buffers`);
    empty for ops that compute no tensor of their own."""
    if (opdef.kernel is None or opdef.region_op is not None or opdef.has(Terminator)
            or opdef.effect is Effect.IO):
        return ""
    view = opdef.trait(View)
    if view is not None:
        return f"a view of operand {view.operand}: no buffer of its own"
    if opdef.has(CallOp):
        return "the callee's results, from the callee's own plan"
    if opdef.arity == 0 and opdef.effect is Effect.PURE:
        return "no operands: computed once, when the plan is compiled"
    if opdef.out_kernel is None:
        return "its kernel allocates the result"
    text = "written into a planned buffer"
    if opdef.in_place is None and opdef.has(Elementwise):
        return text + ", in place over any operand of its type that dies there"
    if opdef.in_place:
        which = ", ".join(str(i) for i in opdef.in_place)
        return text + f", in place over operand {which} if it has its type and dies there"
    return text


def traits_text(opdef: OpDef) -> str:
    return ", ".join(t.label for t in opdef.traits if t.label)


def patterns_text(opdef: OpDef) -> str:
    """The op's canonicalization patterns, each by the first line of its docstring."""
    return "; ".join(_first_sentence(p) for p in opdef.patterns)


def _first_sentence(pattern) -> str:
    doc = inspect.cleandoc(type(pattern).__doc__ or type(pattern).__name__)
    return " ".join(doc.split("\n\n")[0].split()).rstrip(".")


def op_entry(opdef: OpDef) -> str:
    lines = [f"#### `{opdef.name}`", "",
             f"- operands: {arity_text(opdef.arity)}",
             f"- attributes: {attrs_text(opdef)}",
             f"- regions: {regions_text(opdef)}",
             f"- effect: {opdef.effect.value}",
             f"- gradient: {gradient_text(opdef)}"]
    traits = traits_text(opdef)
    if traits:
        lines.append(f"- traits: {traits}")
    memory = memory_text(opdef)
    if memory:
        lines.append(f"- memory: {memory}")
    patterns = patterns_text(opdef)
    if patterns:
        lines.append(f"- canonicalization: {patterns}")
    doc = opdef.doc.strip()
    lines += ["", markdown_text(doc if doc.endswith(".") else doc + ".")]
    return "\n".join(lines)


# ---------------------------------------------------------------- the section

def markdown_text(text: str) -> str:
    """`text` (docstring prose) made safe for Markdown: outside code spans, ``*``,
    backslashes and a ``<`` that could open an HTML tag are escaped, so ``N*16`` or
    ``[*batch, m, n]`` never turn into emphasis and ``stack<...>`` never into a tag.
    Paragraphs indented by four spaces are code blocks and stay as they are."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        if all(line.startswith("    ") for line in paragraph.splitlines()):
            paragraphs.append(paragraph)
            continue
        pieces, pos = [], 0
        for span in _CODE_SPAN.finditer(paragraph):
            pieces.append(_MARKDOWN_SPECIAL.sub(r"\\\1", paragraph[pos:span.start()]))
            pieces.append(span.group())
            pos = span.end()
        pieces.append(_MARKDOWN_SPECIAL.sub(r"\\\1", paragraph[pos:]))
        paragraphs.append("".join(pieces))
    return "\n\n".join(paragraphs)


def family_section(name: str, opdefs: list[OpDef]) -> str:
    module = sys.modules[f"{ops.__name__}.{name}"]
    path = Path(*module.__name__.split("."))
    intro = inspect.cleandoc(module.__doc__ or "")
    parts = [f"### Family `{name}`", "", f"Declared in `{path}.py`."]
    if intro:
        parts += ["", markdown_text(intro)]
    for opdef in opdefs:
        parts += ["", op_entry(opdef)]
    return "\n".join(parts)


def op_reference() -> str:
    """The generated section: an index of every op by family, then each family with
    its ops' entries."""
    missing = undocumented_ops()
    if missing:
        raise ValueError("these ops have no doc string; give each a `doc=` in its defop: "
                         + ", ".join(missing))
    grouped = families()
    index = [f"- **{name}**: " + ", ".join(f"[`{op.name}`](#{op.name})" for op in opdefs)
             for name, opdefs in grouped.items()]
    sections = [family_section(name, opdefs) for name, opdefs in grouped.items()]
    return "\n\n".join(["\n".join(index), *sections])


def _section_bounds(page: str) -> tuple[int, int]:
    """Where the generated text starts and ends in `page` (inside the markers)."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page lacks the markers {BEGIN!r} ... {END!r}")
    return start + len(BEGIN), end


def generated_section(page: str) -> str:
    """The text between the markers of `page`, without the newlines next to them."""
    start, end = _section_bounds(page)
    return page[start:end].strip("\n")


def with_reference(page: str) -> str:
    """`page` with its generated section replaced by the current op reference."""
    start, end = _section_bounds(page)
    return page[:start] + "\n" + op_reference() + "\n" + page[end:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m irflow.ops.opdocs",
                                     description="Regenerate the op reference in docs/ir.md.")
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH,
                        help="the page to update (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="only check that the page is up to date (exit 1 if not)")
    args = parser.parse_args(argv)
    page = args.path.read_text(encoding="utf-8")
    updated = with_reference(page)
    if args.check:
        if updated != page:
            print(f"{args.path}: the op reference is out of date; run "
                  "python -m irflow.ops.opdocs", file=sys.stderr)
            return 1
        return 0
    if updated != page:
        args.path.write_text(updated, encoding="utf-8")
        print(f"{args.path}: op reference updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())

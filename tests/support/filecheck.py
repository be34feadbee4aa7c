"""A small FileCheck: match ``// CHECK`` lines of a test file against an output text.

Directives, one per comment line, matched line by line in order:

- ``CHECK: text``: a later line of the output contains `text`;
- ``CHECK-NEXT: text``: the line right after the previous match contains it;
- ``CHECK-NOT: text``: no line between the previous match and the next one (or the
  end of the section) contains it;
- ``CHECK-LABEL: text``: a line containing `text` starts a section; the directives
  that follow are matched within it, up to the next label, so that one function's
  checks never match lines of another.

In `text`, a run of spaces matches any run of spaces and ``{{regex}}`` is a regular
expression; everything else is literal. A failure raises `CheckFailure` with the
directive and its line, what went wrong, the closest line of the output with a
character diff, and the output annotated with what each directive matched.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_DIRECTIVE = re.compile(r"//\s*(CHECK(?:-NEXT|-NOT|-LABEL)?):(.*)$")
_REGEX = re.compile(r"\{\{(.*?)\}\}")


class CheckFailure(AssertionError):
    pass


@dataclass
class Directive:
    kind: str
    text: str
    line: int  # in the check file, from 1

    @property
    def regex(self) -> re.Pattern:
        parts, pos = [], 0
        for m in _REGEX.finditer(self.text):
            parts.append(_literal(self.text[pos:m.start()]))
            parts.append(f"(?:{m.group(1)})")
            pos = m.end()
        parts.append(_literal(self.text[pos:]))
        return re.compile("".join(parts))

    def matches(self, line: str) -> bool:
        return self.regex.search(line) is not None

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}"


def _literal(text: str) -> str:
    return re.sub(r"(?:\\ )+", r"\\s+", re.escape(text))


def read_directives(text: str) -> list[Directive]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _DIRECTIVE.search(line)
        if m is not None:
            found.append(Directive(m.group(1), m.group(2).strip(), number))
    return found


class _Matcher:
    def __init__(self, output: str, directives: list[Directive], source: str):
        self.lines = output.splitlines()
        self.directives = directives
        self.source = source
        self.matched: dict[int, Directive] = {}  # output line index -> directive

    def run(self) -> None:
        groups = self.sections()
        for start, end, group in groups:
            cursor, pending = start, []
            for d in group:
                if d.kind == "CHECK-NOT":
                    pending.append(d)
                    continue
                if d.kind == "CHECK-NEXT":
                    if cursor >= end or not d.matches(self.lines[cursor]):
                        self.fail(d, "the next line does not match", cursor, cursor + 1)
                    found = cursor
                else:
                    found = self.find(d, cursor, end)
                    if found is None:
                        self.fail(d, "no later line matches", cursor, end)
                self.check_absent(pending, cursor, found)
                pending = []
                self.matched[found] = d
                cursor = found + 1
            self.check_absent(pending, cursor, end)

    def sections(self) -> list[tuple[int, int, list[Directive]]]:
        """(first line, end line, directives) per label, labels matched first."""
        groups: list[tuple[Directive | None, list[Directive]]] = [(None, [])]
        for d in self.directives:
            if d.kind == "CHECK-LABEL":
                groups.append((d, []))
            else:
                groups[-1][1].append(d)
        starts, cursor = [], 0
        for label, _ in groups:
            if label is None:
                starts.append(0)
                continue
            found = self.find(label, cursor, len(self.lines))
            if found is None:
                self.fail(label, "no later line matches the label", cursor, len(self.lines))
            self.matched[found] = label
            starts.append(found + 1)
            cursor = found + 1
        ends = [s - 1 for s in starts[1:]] + [len(self.lines)]
        return [(s, e, group) for s, e, (_, group) in zip(starts, ends, groups) if group]

    def find(self, d: Directive, start: int, end: int) -> int | None:
        for i in range(start, end):
            if d.matches(self.lines[i]):
                return i
        return None

    def check_absent(self, nots: list[Directive], start: int, end: int) -> None:
        for d in nots:
            found = self.find(d, start, end)
            if found is not None:
                self.fail(d, f"output line {found + 1} contains what must not be there",
                          found, found + 1, offending=found)

    def fail(self, d: Directive, what: str, start: int, end: int, offending=None):
        report = [f"{self.source}:{d.line}: {d}", f"  {what}"]
        if offending is None and start < end:
            closest = max(range(start, min(end, len(self.lines))),
                          key=lambda i: difflib.SequenceMatcher(
                              None, d.text, self.lines[i].strip()).ratio())
            report += [f"  closest output line {closest + 1}, as a diff from the directive:",
                       *("    " + line for line in difflib.ndiff(
                           [d.text], [self.lines[closest].strip()]))]
        report.append("output (>> where the search began; <- what each directive matched):")
        width = len(str(len(self.lines)))
        for i, line in enumerate(self.lines):
            mark = ">>" if i == start else "  "
            note = f"    <- {self.matched[i].kind} at line {self.matched[i].line}" \
                if i in self.matched else ""
            report.append(f"{mark} {i + 1:>{width}} | {line}{note}")
        raise CheckFailure("\n".join(report))


def check(output: str, directives: list[Directive], source: str = "<checks>") -> None:
    """Raise `CheckFailure` unless `output` satisfies `directives`."""
    if not directives:
        raise CheckFailure(f"{source}: no CHECK lines")
    _Matcher(output, directives, source).run()

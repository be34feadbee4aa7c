"""Static analysis of a user's function for control-flow conversion.

What a converted ``if`` yields and what a converted loop carries is decided here,
from the user's AST, as AutoGraph does, rather than by tracing and guessing:

- **liveness** (backward): the variables whose current value may still be read.
  A branch yields only the variables it assigns that are live after the ``if``; a
  loop carries only the variables its body assigns that are live at the loop head
  (read by the condition, by the next iteration before being written, or after the
  loop). So ``hn = tanh(h @ w); d = max(abs(hn - h)); h = hn`` carries ``h`` and
  ``d`` but not the temporary ``hn``. Each live variable remembers the line of a use
  that makes it live (its *witness*), for error messages.
- **definite assignment** (forward): the variables bound on every path to a
  statement. A statement's output that may be unbound before it is unbound again
  after it if no path bound it, exactly as in Python.
- **in-place mutations**: ``a[i] = v``, ``a.x = v``, ``a.append(v)`` modify the
  object named ``a``; such names are outputs of the statement too, so that the
  runtime can give each branch its own copy and detect what a loop cannot carry.
  Only the function's own variables can be outputs: assigning a global or a
  variable of an enclosing function would make it local. A change to an object
  such a name holds (``TOTAL.add_(x)``, and ``nn.utils.clip_grad_norm_(...)``,
  which names the module ``nn`` but changes gradients) is an *effect* only: the
  runtime looks at the object and follows it if it is one a branch can change.

Names read inside nested functions and lambdas are live everywhere (the closure may
run at any later time), and a call of ``locals()``, ``vars()``, ``eval()`` or
``exec()`` makes every variable live.

The analysis runs on the tree after ``return``/``break``/``continue`` became flag
variables, so those flags are ordinary variables here. Results are attached to the
``If``/``While``/``For`` nodes as a `Flow` (attribute ``jst_flow``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Methods that change a list, dict or set in place; tensor methods ending in ``_``
# (``x.add_(y)``, ``x.zero_()``) and ``set_value`` change a tensor in place; and the
# functions that change one of their arguments (its position, its keyword). A call
# ending in ``_`` through a module (``nn.utils.clip_grad_norm_(ps, 1.0)``) names the
# module as what it changes, which the runtime does not follow; the clipping
# functions change gradients, which the tracer keeps as state, not their argument
# (taking ``ps`` as changed would trace each branch on copies of the parameters).
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "setdefault", "popitem", "add", "discard", "sort", "reverse",
                      "set_value"})
MUTATING_FUNCTIONS = {"increment": (0, "x"), "array_write": (2, "array"),
                      "assign": (1, "output")}  # changed arg
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec"})

Live = dict[str, int]   # live variable -> line of a use that makes it live


@dataclass
class Flow:
    """What the analysis knows about one if/while/for statement."""
    live_out: Live                      # live after the statement
    live_head: Live | None = None       # loops: live at the head of each iteration
    defined: frozenset = frozenset()    # definitely bound before the statement
    mutated: dict = field(default_factory=dict)  # local -> line of an in-place change
    inside: frozenset = frozenset()  # mutated locals changed only through their elements
    effects: dict = field(default_factory=dict)  # (object path, attribute | None) -> line
    outer_writes: dict = field(default_factory=dict)  # global/nonlocal name -> line


def analyze(fn: ast.FunctionDef, reserved: frozenset[str]) -> frozenset[str] | None:
    """Annotate every if/while/for in `fn` (not in nested functions) with its `Flow`;
    `reserved` names (the converter's own) are never state. Returns the names that
    are live everywhere (read by closures), or None when every name must be taken as
    live (the function introspects its locals)."""
    captured, introspects = _closure_reads(fn)
    if introspects:
        return None
    params = _parameters(fn)
    _Liveness(captured, reserved, _local_names(fn, params)).block(fn.body, {})
    _note_outer_writes(fn)
    _Definite().block(fn.body, params)
    return frozenset(captured)


def _parameters(fn: ast.FunctionDef) -> frozenset[str]:
    args = fn.args
    return frozenset({a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} |
                     {a.arg for a in (args.vararg, args.kwarg) if a is not None})


def _local_names(fn: ast.FunctionDef, params: frozenset[str]) -> frozenset[str]:
    """Python's local variables of `fn`: its parameters and the names it binds in its
    own scope, minus those it declares global or nonlocal. Every other name it reads
    is a global or a variable of an enclosing function, which a converted statement
    cannot give back (assigning it would make it local)."""
    bound = set(params)
    for node in _own_nodes(fn.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    globals_, nonlocals = declarations(fn)
    return frozenset(bound - globals_ - nonlocals)


# ---------------------------------------------------------------- reads and writes

def declarations(fn: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """The names `fn` declares ``global`` and ``nonlocal`` (in its own scope)."""
    globals_, nonlocals = set(), set()
    for node in _own_nodes(fn.body):
        if isinstance(node, ast.Global):
            globals_.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonlocals.update(node.names)
    return globals_, nonlocals


def _own_nodes(stmts):
    """Every node of `stmts` in their function's own scope (nested functions, lambdas
    and classes are yielded but not entered)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


def _note_outer_writes(fn: ast.FunctionDef) -> None:
    """Give each if/while/for the variables outside `fn` that its body assigns: names
    `fn` declares global or nonlocal, and those a nested function it calls assigns
    with ``nonlocal`` (``def bump(): nonlocal n; n += 1``), each with the line."""
    globals_, nonlocals = declarations(fn)
    declared = globals_ | nonlocals
    writers: dict[str, dict[str, int]] = {}
    for node in _own_nodes(fn.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = set().union(*[n.names for n in _own_nodes(node.body)
                                  if isinstance(n, ast.Nonlocal)])
            writers[node.name] = {n.id: n.lineno for n in _own_nodes(node.body)
                                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                                  and n.id in inner}
    for node in _own_nodes(fn.body):
        if not isinstance(node, ast.If | ast.While | ast.For):
            continue
        writes: dict[str, int] = {}
        for inner_node in _own_nodes(node.body + node.orelse):
            if isinstance(inner_node, ast.Name) and isinstance(inner_node.ctx, ast.Store) \
                    and inner_node.id in declared:
                writes.setdefault(inner_node.id, inner_node.lineno)
            elif isinstance(inner_node, ast.Call) and isinstance(inner_node.func, ast.Name):
                for name in writers.get(inner_node.func.id, ()):
                    writes.setdefault(name, inner_node.lineno)
        _flow(node).outer_writes = writes


def _closure_reads(fn: ast.FunctionDef) -> tuple[set[str], bool]:
    """Names read inside nested functions, lambdas and classes of `fn`; and whether
    `fn` calls one of `_INTROSPECTION`."""
    captured: set[str] = set()
    introspects = False
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                          | ast.Lambda | ast.ClassDef):
            captured |= {n.id for n in ast.walk(node)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in _INTROSPECTION:
            introspects = True
    return captured, introspects


def reads(node: ast.AST | None) -> Live:
    """Names an expression (or the expressions of a statement header) reads, each with
    the line of its first read; nested scopes included (see `_closure_reads`)."""
    out: Live = {}
    if node is None:
        return out
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            line = n.lineno
            if out.get(n.id, line) >= line:
                out[n.id] = line
    return out


def target_reads(target: ast.AST) -> Live:
    """Names an assignment target reads: the objects and indices of ``a[i] = v`` and
    ``a.x = v`` (a plain name reads nothing)."""
    if isinstance(target, ast.Name):
        return {}
    if isinstance(target, ast.Tuple | ast.List):
        return _union(*[target_reads(elt) for elt in target.elts])
    if isinstance(target, ast.Starred):
        return target_reads(target.value)
    return reads(target)


def bound_names(target: ast.AST) -> list[str]:
    """Names an assignment target binds (``a``, ``a, (b, *c)``); not subscripts or
    attributes, which change an object instead."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in bound_names(elt)]
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    return []


def _mutating_method(name: str) -> bool:
    return name in MUTATORS or (name.endswith("_") and not name.startswith("_"))


def mutations(stmts, reserved: frozenset[str], local: frozenset[str]) \
        -> tuple[dict[str, int], dict, frozenset[str]]:
    """What the statements change in place (not looking into nested functions):

    - the `local` variables whose objects change, with the line of the first change:
      ``a[i] = v``, ``a.x = v``, ``a[i] += v``, ``del a[i]``, ``a.append(v)``,
      ``a.add_(v)``, ``paddle.increment(a)``;
    - those of them changed only through their elements (``d["k"][i] = v``,
      ``ts[0].add_(v)``): the objects they hold change, not which ones they hold;
    - the *effects*, each keyed by the path of the object changed (the variable and
      the attributes that lead to it) and the attribute set on it, or None when its
      contents change: ``self.h = v`` is ``(("self",), "h")``,
      ``self.history.append(v)`` is ``(("self", "history"), None)``. Changes to
      objects that other names hold are effects only: ``TOTAL.add_(x)`` of a global
      is ``(("TOTAL",), None)``, ``nn.utils.clip_grad_norm_(ps, 1.0)`` is
      ``(("nn", "utils"), None)`` (a module, which the runtime leaves alone).
    """
    changed: dict[str, int] = {}
    effects: dict[tuple, int] = {}
    whole: set[str] = set()  # changed themselves, not only through an element

    def note(target: ast.AST, attr: str | None, line: int) -> None:
        full, path = _object_path(target)
        if path is None or path[0] in reserved:
            return
        if full:
            whole.add(path[0])
        if path[0] in local and changed.get(path[0], line) >= line:
            changed[path[0]] = line
        key = (path, attr if full else None)
        effects[key] = min(effects.get(key, line), line)

    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            note(node.value, node.attr, node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            note(node.value, None, node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                _mutating_method(node.func.attr):
            note(node.func.value, None, node.lineno)
        changed_arg = MUTATING_FUNCTIONS.get(_called_name(node.func)) \
            if isinstance(node, ast.Call) else None
        if changed_arg is not None:
            target = _argument(node, *changed_arg)
            if target is not None:
                note(target, None, node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return changed, effects, frozenset(changed.keys() - whole)


def _object_path(node: ast.AST) -> tuple[bool, tuple[str, ...] | None]:
    """The variable and attributes that lead to the object `node` evaluates to
    (``self.cache`` gives ``("self", "cache")``), cut at the first subscript; and
    whether no subscript was cut (``a[0].w`` gives ``(False, ("a",))``)."""
    parts = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        parts.append(node.attr if isinstance(node, ast.Attribute) else None)
        node = node.value
    if not isinstance(node, ast.Name):
        return False, None
    path = [node.id]
    for part in reversed(parts):
        if part is None:
            return False, tuple(path)
        path.append(part)
    return True, tuple(path)


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    """The argument a call passes at `position` or as `keyword`, if any."""
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _called_name(func: ast.expr) -> str | None:
    """``f`` for a call of ``f(...)`` or ``mod.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _union(*lives: Live) -> Live:
    out: Live = {}
    for live in lives:
        for name, line in live.items():
            if out.get(name, line) >= line:
                out[name] = line
    return out


def _flow(node: ast.AST) -> Flow:
    flow = getattr(node, "jst_flow", None)
    if flow is None:
        flow = node.jst_flow = Flow(live_out={})
    return flow


# ---------------------------------------------------------------- liveness

class _Liveness:
    """Backward liveness over structured statements. `block(stmts, live_after)`
    returns what is live before `stmts` and records each if/loop's sets."""

    def __init__(self, captured: set[str], reserved: frozenset[str], local: frozenset[str]):
        self.captured = captured
        self.reserved = reserved
        self.local = local

    def block(self, stmts, live: Live) -> Live:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live)
        return live

    def stmt(self, s: ast.stmt, live: Live) -> Live:
        method = getattr(self, "visit_" + type(s).__name__, None)
        if method is not None:
            return method(s, live)
        return self.conservative(s, live)

    def kill(self, live: Live, names) -> Live:
        return {n: line for n, line in live.items() if n not in names or n in self.captured}

    def conservative(self, s: ast.stmt, live: Live) -> Live:
        """A statement this analysis does not model: it may read any name it mentions
        and binds nothing for sure."""
        return _union(live, reads(s))

    def visit_Assign(self, s: ast.Assign, live: Live) -> Live:
        bound = [n for t in s.targets for n in bound_names(t)]
        return _union(self.kill(live, bound), reads(s.value),
                      *[target_reads(t) for t in s.targets])

    def visit_AnnAssign(self, s: ast.AnnAssign, live: Live) -> Live:
        if s.value is None:
            return live
        return _union(self.kill(live, bound_names(s.target)), reads(s.value),
                      target_reads(s.target))

    def visit_AugAssign(self, s: ast.AugAssign, live: Live) -> Live:
        read_target = {s.target.id: s.target.lineno} if isinstance(s.target, ast.Name) \
            else reads(s.target)
        return _union(live, reads(s.value), read_target)

    def visit_Expr(self, s: ast.Expr, live: Live) -> Live:
        return _union(live, reads(s.value))

    def visit_Pass(self, s, live: Live) -> Live:
        return live

    def visit_Return(self, s: ast.Return, live: Live) -> Live:
        return _union({n: line for n, line in live.items() if n in self.captured},
                      reads(s.value))

    def visit_Raise(self, s: ast.Raise, live: Live) -> Live:
        return _union({n: line for n, line in live.items() if n in self.captured},
                      reads(s.exc), reads(s.cause))

    def visit_Delete(self, s: ast.Delete, live: Live) -> Live:
        names = [t.id for t in s.targets if isinstance(t, ast.Name)]
        others = [reads(t) for t in s.targets if not isinstance(t, ast.Name)]
        return _union(self.kill(live, names), *others)

    def visit_If(self, s: ast.If, live: Live) -> Live:
        flow = _flow(s)
        flow.live_out = dict(live)
        flow.mutated, flow.effects, flow.inside = mutations(s.body + s.orelse, self.reserved,
                                                            self.local)
        return _union(reads(s.test), self.block(s.body, live), self.block(s.orelse, live))

    def visit_While(self, s: ast.While, live: Live) -> Live:
        flow = _flow(s)
        after = self.block(s.orelse, live)
        head = _union(after, reads(s.test))
        while True:
            new = _union(after, reads(s.test), self.block(s.body, head))
            if new.keys() == head.keys():
                break
            head = new
        flow.live_out, flow.live_head = dict(live), head
        flow.mutated, flow.effects, flow.inside = mutations(s.body, self.reserved,
                                                            self.local)
        return head

    def visit_For(self, s: ast.For, live: Live) -> Live:
        flow = _flow(s)
        after = self.block(s.orelse, live)
        targets = bound_names(s.target)
        flag = getattr(s, "jst_break_flag", None)  # read before each iteration
        head = _union(after, {flag: s.lineno} if flag else {})
        while True:
            body = self.kill(self.block(s.body, head), targets)
            new = _union(head, body, target_reads(s.target))
            if new.keys() == head.keys():
                break
            head = new
        flow.live_out, flow.live_head = dict(live), head
        flow.mutated, flow.effects, flow.inside = mutations(s.body, self.reserved,
                                                            self.local)
        return _union(head, reads(s.iter))

    def visit_With(self, s: ast.With, live: Live) -> Live:
        live = self.block(s.body, live)
        bound = [n for item in s.items if item.optional_vars is not None
                 for n in bound_names(item.optional_vars)]
        return _union(self.kill(live, bound), *[reads(item.context_expr) for item in s.items])

    def visit_Try(self, s: ast.Try, live: Live) -> Live:
        """An exception may leave the body anywhere, so what any handler (or the
        ``finally``) reads is live throughout the body."""
        final = self.block(s.finalbody, live)
        handlers = _union(*[self.block(h.body, final) for h in s.handlers],
                          *[reads(h.type) for h in s.handlers])
        escape = _union(handlers, reads(ast.Module(body=s.finalbody, type_ignores=[])))
        after_body = self.block(s.orelse, final)
        saved = self.captured
        self.captured = saved | set(escape)
        try:
            body = self.block(s.body, _union(after_body, escape))
        finally:
            self.captured = saved
        return _union(body, escape)

    def visit_FunctionDef(self, s: ast.FunctionDef, live: Live) -> Live:
        decorators = [reads(d) for d in s.decorator_list]
        defaults = [reads(d) for d in (*s.args.defaults, *s.args.kw_defaults) if d is not None]
        return _union(self.kill(live, [s.name]), *decorators, *defaults)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Import(self, s: ast.Import, live: Live) -> Live:
        return self.kill(live, [(a.asname or a.name).split(".")[0] for a in s.names])

    visit_ImportFrom = visit_Import

    def visit_Global(self, s: ast.Global, live: Live) -> Live:
        return live

    visit_Nonlocal = visit_Global


# ---------------------------------------------------------------- definite assignment

class _Definite:
    """Forward analysis: the names bound on every path. `block` returns the set after
    the statements, or None after a ``return``/``raise`` (no path continues)."""

    def block(self, stmts, defined: frozenset | None) -> frozenset | None:
        for stmt in stmts:
            if defined is None:
                return None
            defined = self.stmt(stmt, defined)
        return defined

    def stmt(self, s: ast.stmt, defined: frozenset) -> frozenset | None:
        if isinstance(s, ast.Assign):
            return defined | {n for t in s.targets for n in bound_names(t)}
        if isinstance(s, ast.AugAssign) or isinstance(s, ast.AnnAssign) and s.value is not None:
            return defined | set(bound_names(s.target))
        if isinstance(s, ast.If):
            _flow(s).defined = defined
            return _meet(self.block(s.body, defined), self.block(s.orelse, defined))
        if isinstance(s, ast.While):
            _flow(s).defined = defined
            self.block(s.body, defined)
            return self.block(s.orelse, defined)
        if isinstance(s, ast.For):
            _flow(s).defined = defined
            self.block(s.body, defined | set(bound_names(s.target)))
            return self.block(s.orelse, defined)
        if isinstance(s, ast.With):
            bound = {n for item in s.items if item.optional_vars is not None
                     for n in bound_names(item.optional_vars)}
            return self.block(s.body, defined | bound)
        if isinstance(s, ast.Try):
            self.block(s.body, defined)
            for h in s.handlers:
                self.block(h.body, defined | ({h.name} if h.name else set()))
            self.block(s.orelse, defined)
            final = self.block(s.finalbody, defined)
            return final
        if isinstance(s, ast.Return | ast.Raise):
            return None
        if isinstance(s, ast.Delete):
            return defined - {t.id for t in s.targets if isinstance(t, ast.Name)}
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return defined | {s.name}
        if isinstance(s, ast.Import | ast.ImportFrom):
            return defined | {(a.asname or a.name).split(".")[0] for a in s.names}
        if isinstance(s, ast.Global | ast.Nonlocal):
            return defined | set(s.names)
        return defined


def _meet(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


__all__ = ["Flow", "MUTATORS", "analyze", "bound_names", "declarations", "mutations", "reads"]

"""AST conversion: rewrite a function so that its control flow can become IR.

Every ``if``, ``while`` and ``for`` is rewritten into a call of a runtime helper in
`irflow.frontend.jst` that receives the statement's parts as small functions. At
trace time the helper looks at the condition: a Python value runs the statement as
plain Python (so ``for _ in range(self.steps)`` and ``if self.training`` behave as
in eager code); a traced tensor emits a ``cond`` or ``while`` op. For example

    if x.mean() > 0:                    def __jst_fn_true_1(y):
        y = relu(x)                         y = relu(x)
    else:                       ──►         return (y,)
        y = x - 2                       def __jst_fn_false_1(y):
                                            y = x - 2
                                            return (y,)
                                        (y,) = _jst.if_(x.mean() > 0, __jst_fn_true_1,
                                                        __jst_fn_false_1,
                                                        (_jst.ld(lambda: y, 'y'),), ('y',))

Each branch or loop body becomes a function of the variables the statement assigns
(its *state*), returning their new values. Before that, ``return`` inside control
flow and ``break``/``continue`` are rewritten with flag variables (as AutoGraph
does), and ``and``/``or``/``not``, conditional expressions and calls go through
helpers that keep Python's semantics for Python values and stay symbolic for
traced ones.

The rewritten tree keeps the user's line numbers and is compiled under the user's
file name, so errors and tracebacks point at the user's code.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap
import types
from dataclasses import dataclass, field
from typing import Callable

from ..errors import ConversionError, Location
from .analysis import analyze, declarations

JST = "_jst"
FN_PREFIX = "__jst_fn_"       # generated helper functions: never state
FLAG_PREFIX = "__jst_flag_"   # generated flags and return values: state like user variables
CELL_PREFIX = "__jst_cell_"   # a parameter standing for a variable closures share
RETURNED = FLAG_PREFIX + "returned"
RETVAL = FLAG_PREFIX + "retval"
COMPREHENSION_ITEM = "__jst_item"  # the parameter of a comprehension's element function


# ---------------------------------------------------------------- analysis

class _Assigned(ast.NodeVisitor):
    """Names a list of statements binds in its own scope (not in nested functions,
    lambdas or comprehensions), minus those declared global or nonlocal."""

    def __init__(self):
        self.names: list[str] = []
        self.declared: set[str] = set()

    def add(self, name: str) -> None:
        if name not in self.names and not name.startswith(FN_PREFIX):
            self.names.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.add(node.id)

    def visit_FunctionDef(self, node) -> None:
        self.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node) -> None:
        pass

    def visit_ListComp(self, node) -> None:
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Global(self, node) -> None:
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import


def assigned_names(stmts) -> list[str]:
    finder = _Assigned()
    for s in stmts:
        finder.visit(s)
    return [n for n in finder.names if n not in finder.declared]


def _contains(stmts, kinds, stop_at_loops: bool) -> bool:
    """Whether `stmts` hold a node of `kinds`, not looking into nested functions (nor
    into nested loops, with `stop_at_loops`)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if stop_at_loops and isinstance(node, ast.For | ast.While):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


# ---------------------------------------------------------------- small builders

def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _jst(attr: str) -> ast.Attribute:
    return ast.Attribute(value=_name(JST), attr=attr, ctx=ast.Load())


def _call(func: ast.expr, *args: ast.expr) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=[])


def _const(value) -> ast.Constant:
    return ast.Constant(value=value)


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(name, store=True)], value=value)


def _tuple(names, store: bool = False) -> ast.Tuple:
    return ast.Tuple(elts=[_name(n, store) for n in names], ctx=ast.Store() if store else ast.Load())


def _lambda(body: ast.expr, params=()) -> ast.Lambda:
    return ast.Lambda(args=_arguments(params), body=body)


def _arguments(params) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _function(name: str, params, body) -> ast.FunctionDef:
    return ast.FunctionDef(name=name, args=_arguments(params), body=body or [ast.Pass()],
                           decorator_list=[], returns=None, type_params=[])


def _load_state(names) -> ast.Tuple:
    """``(_jst.ld(lambda: a, 'a'), ...)``: current values, `Undefined` if unbound."""
    return ast.Tuple(elts=[_call(_jst("ld"), _lambda(_name(n)), _const(n)) for n in names],
                     ctx=ast.Load())


def _return_state(names) -> ast.Return:
    """The return of a branch or loop body function: its variables' values through
    `_load_state`, since a statement nested in it may have unbound one that no path
    assigned (a later ``if`` assigning it in one branch), which the enclosing
    statement then unbinds in turn."""
    return ast.Return(value=_load_state(names))


def _not(expr: ast.expr) -> ast.expr:
    return _call(_jst("not_"), expr)


def _located(node: ast.AST, like: ast.AST) -> ast.AST:
    """Give generated nodes the position where `like` starts, so that a frame running
    generated code reports the line of the user's statement."""
    for n in ast.walk(node):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            n.lineno = n.end_lineno = like.lineno
            n.col_offset = n.end_col_offset = like.col_offset
    return node


# ---------------------------------------------------------------- return, break, continue

class _Returns(ast.NodeTransformer):
    """Single exit: ``return e`` inside control flow becomes ``retval = e; returned =
    True``, loops stop once returned, and code after a statement that may have
    returned runs under ``if not returned``."""

    def convert(self, fn: ast.FunctionDef) -> None:
        if not any(_contains(s.body + getattr(s, "orelse", []), ast.Return, False)
                   for s in fn.body if isinstance(s, ast.If | ast.While | ast.For | ast.With
                                                  | ast.Try)):
            return
        body = self.block(fn.body)
        fn.body = [_located(_assign(RETURNED, _const(False)), fn.body[0]),
                   _located(_assign(RETVAL, _jst("NO_RETURN_VALUE")), fn.body[0]),
                   *body, _located(ast.Return(value=_call(_jst("returned_value"),
                                                          _name(RETVAL))), fn.body[-1])]

    def block(self, stmts):
        out = []
        for i, stmt in enumerate(stmts):
            may_return = _contains([stmt], ast.Return, False)
            out.append(self.statement(stmt))
            rest = stmts[i + 1:]
            if may_return and rest:
                guard = ast.If(test=_not(_name(RETURNED)), body=self.block(rest), orelse=[])
                guard.jst_return_guard = True
                out.append(_located(guard, rest[0]))
                break
        return out

    def statement(self, stmt):
        if isinstance(stmt, ast.Return):
            value = stmt.value if stmt.value is not None else _const(None)
            value = _call(_jst("ReturnValue"), value, _const(stmt.lineno))
            return _located(ast.If(test=_const(True), body=[
                _assign(RETVAL, value), _assign(RETURNED, _const(True))], orelse=[]), stmt)
        if isinstance(stmt, ast.If):
            stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
        elif isinstance(stmt, ast.While | ast.For):
            has_return = _contains(stmt.body, ast.Return, False)
            stmt.body = self.block(stmt.body)
            if has_return:  # leave the loop once returned
                stmt.body.append(_located(ast.If(test=_name(RETURNED), body=[ast.Break()],
                                                 orelse=[]), stmt))
            stmt.orelse = self.block(stmt.orelse)
        elif isinstance(stmt, ast.With | ast.Try):
            stmt.body = self.block(stmt.body)
        return stmt


class _Loops(ast.NodeTransformer):
    """``break`` and ``continue`` become flags: the rest of the body runs under ``if not
    flag``, and the loop condition also checks ``not broke``."""

    def __init__(self):
        self.counter = 0

    def visit_FunctionDef(self, node):
        return node  # nested functions are converted when they are called

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        return self.loop(node)

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        return self.loop(node)

    def loop(self, node):
        has_break = _contains(node.body, ast.Break, True)
        has_continue = _contains(node.body, ast.Continue, True)
        if node.orelse and not has_break:  # `else` runs whenever the loop ends
            rest, node.orelse = node.orelse, []
            return [*_flat([self.loop(node)]), *rest]
        if not (has_break or has_continue):
            return node
        self.counter += 1
        brk = f"{FLAG_PREFIX}break_{self.counter}"
        cont = f"{FLAG_PREFIX}continue_{self.counter}"
        body = self.block(node.body, brk, cont)
        out = []
        if has_continue:
            body.insert(0, _located(_assign(cont, _const(False)), node))
        if has_break:
            out.append(_located(_assign(brk, _const(False)), node))
            if isinstance(node, ast.While):
                node.test = _located(_call(_jst("and_"), _lambda(_not(_name(brk))),
                                           _lambda(node.test)), node.test)
            else:
                node.jst_break_flag = brk  # _ControlFlow.visit_For stops the loop on it
        node.body = body
        if node.orelse and has_break:  # else runs when the loop did not break
            out.append(node)
            out.append(_located(ast.If(test=_not(_name(brk)), body=node.orelse, orelse=[]),
                                node))
            node.orelse = []
            return out
        out.append(node)
        return out

    def block(self, stmts, brk: str, cont: str):
        out = []
        for i, stmt in enumerate(stmts):
            flags = [f for f, kind in ((brk, ast.Break), (cont, ast.Continue))
                     if _contains([stmt], kind, True)]
            out.append(self.replace_jumps(stmt, brk, cont))
            rest = stmts[i + 1:]
            if flags and rest:
                test = _not(_name(flags[0])) if len(flags) == 1 else _not(_call(
                    _jst("or_"), _lambda(_name(flags[0])), _lambda(_name(flags[1]))))
                guard = ast.If(test=test, body=self.block(rest, brk, cont), orelse=[])
                out.append(_located(guard, rest[0]))
                break
        return out

    def replace_jumps(self, stmt, brk: str, cont: str):
        if isinstance(stmt, ast.Break):
            return _located(_assign(brk, _const(True)), stmt)
        if isinstance(stmt, ast.Continue):
            return _located(_assign(cont, _const(True)), stmt)
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, brk, cont)
            stmt.orelse = self.block(stmt.orelse, brk, cont)
        elif isinstance(stmt, ast.With | ast.Try):
            stmt.body = self.block(stmt.body, brk, cont)
        return stmt


# ---------------------------------------------------------------- control flow

@dataclass(frozen=True)
class Statement:
    """What the runtime helpers know about one converted if/while/for, from the static
    analysis (`irflow.frontend.analysis`): the variables its branch or body functions
    take (`params`) and give back (`outputs`: yielded by a ``cond`` or carried by a
    ``while``), the line of a later use of each output, and the variables whose objects
    it changes in place. `outer` are the globals and variables of enclosing functions
    whose objects it changes (``TOTAL.add_(x)``): the runtime receives their values to
    follow those objects, as it follows ``self.h``."""
    kind: str
    loc: Location
    params: tuple[str, ...]
    outputs: tuple[str, ...]
    uses: dict = field(default_factory=dict)      # output -> Location of a later read
    mutated: dict = field(default_factory=dict)   # variable -> Location of the change
    effects: dict = field(default_factory=dict)   # (object path, attribute) -> Location
    outer_writes: dict = field(default_factory=dict)  # global/nonlocal name -> Location
    outer: tuple[str, ...] = ()  # globals/enclosing variables whose objects change
    return_guard: bool = False  # an ``if not returned`` guard: its false branch returned
    inside: frozenset = frozenset()  # mutated variables changed only through elements


STATEMENTS = "__jst_statements"  # the factory's tuple of `Statement`s


class _ControlFlow(ast.NodeTransformer):
    """if/while/for into `_jst` calls over state functions; boolean operators,
    conditional expressions and calls into `_jst` helpers."""

    def __init__(self, filename: str, captured: frozenset | None,
                 declared: tuple[set[str], set[str]]):
        self.filename = filename
        self.captured = captured  # live everywhere; None: every name is
        self.globals, self.nonlocals = declared  # the function's own declarations
        self.counter = 0
        self.statements: list[Statement] = []

    def fresh(self, what: str) -> str:
        self.counter += 1
        return f"{FN_PREFIX}{what}_{self.counter}"

    def visit_FunctionDef(self, node):
        return node  # nested functions are converted when they are called

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    # -- what a statement takes and gives back
    def statement(self, kind: str, node, assigned: list[str], live) -> Statement:
        flow = getattr(node, "jst_flow", None)
        assigned = [n for n in assigned if n not in self.globals and n not in self.nonlocals]
        mutated = dict(flow.mutated) if flow is not None else {}
        params = assigned + [n for n in mutated if n not in assigned]
        if flow is None or self.captured is None:
            outputs = params
        else:
            # a variable changed in place is given back for the object it held before
            # the statement (others may hold it too); a temporary the statement binds,
            # changes and drops is not (``t = x.clone(); t[0] = v`` in one branch)
            outputs = [n for n in params if n in live(flow) or n in self.captured
                       or n in mutated and n in flow.defined]
        uses = {n: Location(self.filename, flow.live_out[n]) for n in outputs
                if flow is not None and n in flow.live_out}
        effects = flow.effects if flow is not None else {}
        outer_writes = flow.outer_writes if flow is not None else {}
        outer = dict.fromkeys(path[0] for path, _ in effects if path[0] not in mutated)
        record = Statement(kind, Location(self.filename, node.lineno), tuple(params),
                           tuple(outputs), uses, self.located(mutated), self.located(effects),
                           self.located(outer_writes), tuple(outer),
                           getattr(node, "jst_return_guard", False),
                           flow.inside if flow is not None else frozenset())
        self.statements.append(record)
        return record

    def located(self, lines: dict) -> dict:
        return {k: Location(self.filename, line) for k, line in lines.items()}

    def function(self, what: str, params, body) -> ast.FunctionDef:
        """A generated branch or body function. It declares the global and nonlocal
        names of the user's function that it assigns, so they stay those variables;
        and so are the variables it takes or assigns that closures read (`captured`):
        a lambda made in a loop reads the user's ``i``, as late as Python binds it
        (every lambda of ``for i in range(3)`` sees the last i), not the generated
        function's own ``i`` of that iteration. Such a variable comes in as a
        parameter of another name, assigned to it first."""
        assigned = set(assigned_names(body))
        declarations = [decl(names=sorted(assigned & declared)) for decl, declared in
                        ((ast.Global, self.globals), (ast.Nonlocal, self.nonlocals))
                        if assigned & declared]
        shared = set() if self.captured is None else \
            (assigned | set(params)) & self.captured - self.globals - self.nonlocals
        if shared:
            declarations.append(ast.Nonlocal(names=sorted(shared)))
            declarations += [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())],
                                        value=_name(CELL_PREFIX + n))
                             for n in params if n in shared]
            params = [CELL_PREFIX + n if n in shared else n for n in params]
        return _function(self.fresh(what), params, [*declarations, *body])

    def record(self, record: Statement) -> ast.Subscript:
        return ast.Subscript(value=_name(STATEMENTS), slice=_const(len(self.statements) - 1),
                             ctx=ast.Load())

    @staticmethod
    def pass_outer(call: ast.Call, record: Statement) -> ast.Call:
        """``outer=(values...)`` on a helper call whose statement changes objects that
        globals or enclosing variables hold."""
        if record.outer:
            call.keywords.append(ast.keyword(arg="outer", value=_load_state(record.outer)))
        return call

    def assign_outputs(self, record: Statement, call: ast.expr, node) -> list[ast.stmt]:
        """``(a, b) = call``, then unbind the outputs that were unbound before and that
        no path of the statement bound (so a later read fails as in Python)."""
        flow = getattr(node, "jst_flow", None)
        out = [_located(ast.Assign(targets=[_tuple(record.outputs, store=True)], value=call),
                        node)]
        for name in record.outputs:
            if flow is not None and name in flow.defined or name.startswith(FLAG_PREFIX):
                continue
            unbind = ast.If(test=_call(_jst("is_undefined"), _name(name)),
                            body=[ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del())])],
                            orelse=[])
            out.append(_located(unbind, node))
        return out

    # -- statements
    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        record = self.statement("if", node, assigned_names(node.body + node.orelse),
                                lambda flow: flow.live_out)
        true_fn = self.function("true", record.params,
                                node.body + [_return_state(record.outputs)])
        false_fn = self.function("false", record.params,
                                 node.orelse + [_return_state(record.outputs)])
        call = self.pass_outer(_call(_jst("if_"), node.test, _name(true_fn.name),
                                     _name(false_fn.name), _load_state(record.params),
                                     self.record(record)), record)
        return [_located(true_fn, node), _located(false_fn, node),
                *self.assign_outputs(record, call, node)]

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        if node.orelse:
            raise ConversionError("`while ... else` with `break` is not supported",
                                  Location(self.filename, node.lineno))
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.test)):
            # the condition runs as a function of the loop's variables, returning the
            # test alone: what it assigned would not reach the body
            raise ConversionError("an assignment expression (:=) in a `while` condition is "
                                  "not supported in compiled code: assign the variable "
                                  "before the loop and at the end of its body",
                                  Location(self.filename, node.lineno))
        record = self.statement("while", node, assigned_names(node.body),
                                lambda flow: flow.live_head)
        carried = record.outputs
        cond_fn = _function(self.fresh("cond"), carried, [ast.Return(value=node.test)])
        body_fn = self.function("body", carried, node.body + [_return_state(carried)])
        call = self.pass_outer(_call(_jst("while_"), _name(cond_fn.name), _name(body_fn.name),
                                     _load_state(carried), self.record(record)), record)
        return [_located(cond_fn, node), _located(body_fn, node),
                *self.assign_outputs(record, call, node)]

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        if node.orelse:
            raise ConversionError("`for ... else` with `break` is not supported",
                                  Location(self.filename, node.lineno))
        target = ast.Assign(targets=[node.target], value=_const(None))
        record = self.statement("for", node, assigned_names([target] + node.body),
                                lambda flow: flow.live_head)
        carried = record.outputs
        item = FN_PREFIX + "item"
        bind = ast.Assign(targets=[node.target], value=_name(item))
        body_fn = self.function("for", [item, *carried], [_located(bind, node), *node.body,
                                                          _return_state(carried)])
        call = self.pass_outer(_call(_jst("for_"), node.iter, _name(body_fn.name),
                                     _load_state(carried), self.record(record)), record)
        out = [_located(body_fn, node)]
        brk = getattr(node, "jst_break_flag", None)
        if brk is not None:  # the loop also stops once the break flag is set
            test_fn = _function(self.fresh("until"), carried, [ast.Return(value=_name(brk))])
            call.keywords.append(ast.keyword(arg="stop", value=_name(test_fn.name)))
            out.append(_located(test_fn, node))
        return out + self.assign_outputs(record, call, node)

    # -- expressions
    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        expr = node.values[-1]
        for value in reversed(node.values[:-1]):
            expr = _call(_jst(helper), _lambda(value), _lambda(expr))
        return _located(expr, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located(_not(node.operand), node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return _located(_call(_jst("ifexp"), node.test, _lambda(node.body),
                              _lambda(node.orelse)), node)

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        expr = parts[-1]
        for part in reversed(parts[:-1]):
            expr = _call(_jst("and_"), _lambda(part), _lambda(expr))
        return _located(expr, node)

    def visit_ListComp(self, node: ast.ListComp):
        """``[f(o) for o in outs]`` calls `jst.listcomp`, which builds the list by a loop
        where the length of `outs` is known only when the program runs. The element is
        a function of one item; a tuple target unpacks it as the comprehension would
        (``[elt for (i, o) in (item,)][0]``)."""
        self.generic_visit(node)
        (gen, *more) = node.generators
        if more or gen.ifs or gen.is_async or _contains([node.elt], ast.NamedExpr, False):
            return node
        if isinstance(gen.target, ast.Name):
            fn = _lambda(node.elt, [gen.target.id])
        else:
            one = ast.comprehension(target=gen.target, iter=ast.Tuple(
                elts=[_name(COMPREHENSION_ITEM)], ctx=ast.Load()), ifs=[], is_async=0)
            fn = _lambda(ast.Subscript(value=ast.ListComp(elt=node.elt, generators=[one]),
                                       slice=_const(0), ctx=ast.Load()), [COMPREHENSION_ITEM])
        return _located(_call(_jst("listcomp"), gen.iter, fn), node)

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        node.func = _located(_call(_jst("call"), node.func), node.func)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue):
        """``f"{v!r:>8}"`` formats through `jst.formatted`, which gives a tensor the
        text eager code gives it when the program knows its value only when it runs."""
        self.generic_visit(node)
        spec = node.format_spec or _const("")
        node.value = _located(_call(_jst("formatted"), node.value, _const(node.conversion),
                                    spec), node.value)
        node.conversion, node.format_spec = -1, None
        return node

    def visit_Attribute(self, node: ast.Attribute):
        """``obj.name`` read goes through `jst.attr`, which records the value for the
        program's guards (`irflow.frontend.guards`)."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or \
                isinstance(node.value, ast.Name) and node.value.id == JST:
            return node
        return _located(_call(_jst("attr"), node.value, _const(node.attr)), node)

    def visit_Subscript(self, node: ast.Subscript):
        """``seq[i]`` read with a computed index goes through `jst.item` (a Python list
        of tensors indexed by a loop's traced counter); constant indices and slices
        stay Python's."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or \
                isinstance(node.slice, (ast.Constant, ast.Slice, ast.Tuple)):
            return node
        return _located(_call(_jst("item"), node.value, node.slice), node)

    def visit_AugAssign(self, node: ast.AugAssign):
        """``obj.n += v`` reads ``obj.n`` before it writes it: the owner goes through
        `jst.updating`, which records that read for the guards as `jst.attr` would."""
        self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Attribute):
            target.value = _located(_call(_jst("updating"), target.value, _const(target.attr)),
                                    target)
        return node

    def visit_Assign(self, node: ast.Assign):
        """``h = expr`` names the IR value of `expr` after the user's variable."""
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                not node.targets[0].id.startswith("__jst"):
            node.value = _located(_call(_jst("named"), node.value, _const(node.targets[0].id)),
                                  node.value)
        return node

    def visit_Assert(self, node: ast.Assert):
        self.generic_visit(node)
        return _located(ast.Expr(value=_call(_jst("assert_"), node.test,
                                             _lambda(node.msg or _const(None)))), node)


# ---------------------------------------------------------------- the entry point

def _flat(items) -> list:
    """Statements, with the lists a transformer returned for one statement spliced in."""
    return [s for item in items for s in (item if isinstance(item, list) else [item])]


class Unconvertible(ConversionError):
    """A function whose source irflow cannot read or rewrite (a lambda, a function
    made by exec); it is traced as it is, without control-flow conversion."""


def _source_tree(fn: types.FunctionType) -> ast.FunctionDef:
    """`fn`'s definition, found from its code object: `inspect` given the function
    would follow ``__wrapped__`` to the function a ``functools.wraps`` decorator
    wraps, and the converted code would leave out what the wrapper does."""
    if fn.__name__ == "<lambda>":
        return _lambda_tree(fn)
    try:
        lines, first = _definition_lines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, SyntaxError) as e:
        raise Unconvertible(f"cannot read the source of {fn.__qualname__}: {e}") from None
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise Unconvertible(f"{fn.__qualname__} is not a plain function definition",
                            Location(fn.__code__.co_filename, first))
    ast.increment_lineno(tree, first - 1)
    return node


_DEFINITION_START = re.compile(r"\s*(@|def\s|async\s+def\s)")


def _definition_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """The lines of `fn`'s definition (its decorators first) and the number of the
    first, as ``inspect.getsourcelines`` gives for its code object, read through
    `linecache` with the function's module globals. inspect finds the module by
    scanning every loaded module's path (its ``getmodule``: 24 ms of a 90 ms compile
    of a training step, warm kernel cache)."""
    code = fn.__code__
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines:
        raise OSError(f"no source lines for {code.co_filename}")
    start = code.co_firstlineno - 1
    if start >= len(lines):
        raise OSError(f"line {code.co_firstlineno} is past the end of {code.co_filename}")
    while start > 0 and not _DEFINITION_START.match(lines[start]):
        start -= 1
    return inspect.getblock(lines[start:]), start + 1


def _lambda_tree(fn: types.FunctionType) -> ast.FunctionDef:
    """A lambda as ``def __jst_lambda(args): return body``. Its node is found in its
    file among the lambdas on its first line; several there are told apart by the
    column where the code of `fn`'s body starts."""
    code = fn.__code__
    try:
        tree = ast.parse("".join(linecache.getlines(code.co_filename)))
    except SyntaxError:
        tree = None
    candidates = [] if tree is None else [
        n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    if len(candidates) > 1:
        starts = {(line, col) for line, _, col, _ in code.co_positions() if line is not None}
        candidates = [n for n in candidates if (n.body.lineno, n.body.col_offset) in starts]
    if len(candidates) != 1:
        raise Unconvertible(f"cannot find the source of the lambda at "
                            f"{code.co_filename}:{code.co_firstlineno}")
    node = candidates[0]
    fn_node = ast.FunctionDef(name="__jst_lambda", args=node.args,
                              body=[ast.Return(value=node.body)], decorator_list=[],
                              returns=None, type_params=[])
    return _located(fn_node, node)


def _check_supported(node: ast.FunctionDef, filename: str) -> None:
    for n in ast.walk(node):
        if isinstance(n, ast.Yield | ast.YieldFrom | ast.Await):
            raise ConversionError(f"{node.name} is a generator or coroutine, which irflow "
                                  "cannot convert", Location(filename, n.lineno))


_COMPILED: dict[types.CodeType, tuple] = {}


def _compiled(fn: types.FunctionType):
    """The code object of the factory that builds `fn`'s converted version, the
    `Statement` records it passes to the runtime helpers, and the names of `fn`'s free
    variables (cached per code object)."""
    found = _COMPILED.get(fn.__code__)
    if found is None:
        found = _COMPILED[fn.__code__] = _compile_converted(fn)
    return found


def _compile_converted(fn: types.FunctionType):
    filename = fn.__code__.co_filename
    node = _source_tree(fn)
    _check_supported(node, filename)
    node.decorator_list = []
    # the defaults are `fn`'s own, already evaluated (`convert_function` passes them):
    # written in the factory, they would be read there, where an enclosing function's
    # locals (`def g(y, k=k)`, `lambda y, i=i: ...`) do not exist
    node.args.defaults = []
    node.args.kw_defaults = [None] * len(node.args.kwonlyargs)
    _Returns().convert(node)
    node.body = _flat([_Loops().visit(s) for s in node.body])
    transformer = _ControlFlow(filename, analyze(node, frozenset({JST})), declarations(node))
    node.body = _flat([transformer.visit(s) for s in node.body])
    freevars = list(fn.__code__.co_freevars)
    factory = _function("__jst_factory", [JST, STATEMENTS, *freevars],
                        [node, ast.Return(value=_name(node.name))])
    module = ast.Module(body=[_located(factory, node)], type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, filename, "exec"), tuple(transformer.statements), freevars


def convert_function(fn: Callable) -> Callable:
    """`fn` with its control flow rewritten to go through `irflow.frontend.jst`.
    Methods come back bound to the same object."""
    from . import jst
    if isinstance(fn, types.MethodType):
        return types.MethodType(convert_function(fn.__func__), fn.__self__)
    if JST in fn.__code__.co_freevars:  # made by this converter: a lambda in converted code
        return fn
    compiled, statements, freevars = _compiled(fn)
    namespace: dict = {}
    exec(compiled, fn.__globals__, namespace)  # defines the factory; runs no user code
    made = namespace["__jst_factory"](jst, statements, *[None] * len(freevars))
    # The converted function shares `fn`'s closure cells (not copies of their values), so
    # it reads their current values and a `nonlocal` assignment reaches the real variable.
    cells = dict(zip(made.__code__.co_freevars, made.__closure__ or ()))
    cells.update(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    new = types.FunctionType(made.__code__, fn.__globals__, made.__name__, fn.__defaults__,
                             tuple(cells[name] for name in made.__code__.co_freevars))
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__wrapped__ = fn
    return new

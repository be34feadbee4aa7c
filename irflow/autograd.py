"""The dynamic graph and `backward()`.

Every eager op that has an input requiring a gradient records a `Node`
(`irflow.dispatch`): the prepared op (which fixes its name, attributes and operand
types), its input Tensors and its output arrays. `backward()` walks the nodes reachable from the loss, writes them down
as an IR function, and differentiates it with the same transform `irflow.compile`
uses (`irflow.passes.autodiff.backward_function`): one autodiff, not two.

Doing that on every training step would be slow, and the steps of a training loop
record the same graph each time. So the walk also builds a structural key (the
prepared ops in order, how they connect, the leaves' types) and the compiled
backward program is cached under it: a repeated step costs a graph walk, a
dictionary lookup and the backward kernels.

After a ``backward()`` pass the graph is freed (as in Paddle), unless ``retain_graph``;
``paddle.grad`` leaves it in place (as Paddle 3.3 does, whatever its ``retain_graph``).
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from .context import state
from .dispatch import Node, apply, enable_grad, no_grad, user_location
from .errors import IrflowError
from .ir import dtypes
from .ir.builder import Builder
from .ir.core import Function, Module
from .passes.manager import DEFAULT_PIPELINE, PassManager, split_at_autodiff
from .ir.types import TensorType
from .tensor.tensor import Tensor


class GraphError(IrflowError, RuntimeError):
    """backward() or grad() through a freed graph, or with nothing to differentiate."""


_walks = itertools.count(1)


class Graph:
    """The part of the dynamic graph that reaches some roots: nodes in topological
    order, the leaves they read, and a key describing its structure.

    A ref names a value of the graph: ``-1 - j`` is leaf j, ``(i, k)`` output k of
    node i. `blocked` holds (node, output index) pairs whose values the graph takes as
    constants, leaves that no gradient reaches (``paddle.grad``'s `no_grad_vars`)."""

    def __init__(self, roots, blocked=frozenset()):
        walk = self.walk = next(_walks)  # a node's mark: -walk while visited, walk once placed
        nodes: list[Node] = []
        stack = [t._node for t in roots if t._node is not None]
        while stack:
            node = stack[-1]
            if node.mark == walk:
                stack.pop()
            elif node.mark == -walk:  # its inputs are placed: place it
                stack.pop()
                node.mark, node.index = walk, len(nodes)
                nodes.append(node)
            else:
                if node.freed:
                    raise GraphError("the dynamic graph behind this tensor was freed by an "
                                     "earlier backward(); call backward(retain_graph=True) "
                                     "the first time to go through it twice", user_location())
                node.mark = -walk
                for t, (src, k, _) in zip(node.inputs, node.sources):
                    if src is not None and src.mark != walk and (
                            not blocked or (src, k) not in blocked):
                        stack.append(src)
        self.nodes = nodes
        self.leaves: list = []       # Tensors no recorded node produced
        self.leaf_values: list = []  # the arrays the graph read from them
        leaf_index: dict[int, int] = {}

        def ref(t, src, k, array):
            if src is not None and src.mark == walk and (not blocked or (src, k) not in blocked):
                return (src.index, k)
            j = leaf_index.get(id(t))
            if j is None:
                j = leaf_index[id(t)] = len(self.leaves)
                self.leaves.append(t)
                self.leaf_values.append(array)
            return -1 - j

        self.input_refs = [tuple(ref(t, *source) for t, source in zip(n.inputs, n.sources))
                           for n in nodes]
        self.root_refs = tuple(ref(t, t._node, t._index, t._value) for t in roots)
        self.key = (tuple(zip((n.prepared for n in nodes), self.input_refs)),
                    tuple((a.dtype, a.shape) for a in self.leaf_values), self.root_refs)

    def ref_of(self, t):
        """The ref of tensor `t` in this graph, or None if the roots do not depend on
        it or it stops gradients (as in Paddle, whose ``paddle.grad`` gives no
        gradient for a tensor with ``stop_gradient=True``)."""
        if t.stop_gradient:
            return None
        for j, leaf in enumerate(self.leaves):
            if leaf is t:
                return -1 - j
        node = t._node
        if node is not None and node.mark == self.walk and not t.stop_gradient:
            return (node.index, t._index)
        return None

    def array(self, ref) -> np.ndarray:
        if isinstance(ref, int):
            return self.leaf_values[-1 - ref]
        node_i, k = ref
        return self.nodes[node_i].outputs[k]

    def tensor(self, ref):
        """A Tensor standing for `ref` that is connected to the graph (for create_graph)."""
        if isinstance(ref, int):
            return self.leaves[-1 - ref]
        node_i, k = ref
        node = self.nodes[node_i]
        t = Tensor._from_array(node.outputs[k])
        t.stop_gradient, t._node, t._index = False, node, k
        return t

    def to_function(self) -> tuple[Function, dict]:
        """The graph as an IR function of its leaves returning its roots, and the map
        from IR values back to refs."""
        types = [TensorType(dtypes.from_numpy(a), a.shape) for a in self.leaf_values]
        fn = Function("dynamic_graph", types, [t.name for t in self.leaves])
        b = Builder(fn.block)
        values = {-1 - j: a for j, a in enumerate(fn.args)}
        for i, (node, refs) in enumerate(zip(self.nodes, self.input_refs)):
            p = node.prepared
            op = b.create(p.opdef.name, [values[r] for r in refs], p.attrs,
                          result_types=p.result_types)
            for k, r in enumerate(op.results):
                values[(i, k)] = r
        b.ret(*(values[r] for r in self.root_refs))
        return fn, {v: r for r, v in values.items()}

    def free(self) -> None:
        for node in self.nodes:
            node.free()


class BackwardProgram:
    """The compiled reverse sweep of one graph structure. A gradient can exist on some
    runs only (a compiled call whose program uses a parameter in one branch of a
    ``cond``): then the program also returns whether it does, and the runs give
    None for it where it does not, as eager code would have no gradient there."""

    def __init__(self, graph: Graph, wrt: Sequence):
        """`wrt`: the refs of the values to differentiate with respect to."""
        from .codegen import compile_plan
        from .passes.autodiff import backward_function
        fn, refs = graph.to_function()
        values = {r: v for v, r in refs.items()}
        self.function, residuals, self.defined = backward_function(
            fn, [values[r] for r in wrt], range(len(graph.root_refs)))
        # `function` stays as the passes before fusion leave it (run_recorded replays
        # its ops eagerly); the plan runs a copy through the whole pipeline
        before, after = split_at_autodiff(DEFAULT_PIPELINE)
        PassManager(before).run(Module([self.function]))
        planned = self.function
        if after:
            planned = self.function.clone()
            PassManager(after).run(Module([planned]))
        self.residual_refs = [refs[v] for v in residuals]
        self.plan = compile_plan(planned)

    def run(self, graph: Graph, seeds: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """The gradients (None where one does not exist on this run)."""
        return self._existing(self.plan.run_trusted(
            [*seeds, *(graph.array(r) for r in self.residual_refs)]))

    def _existing(self, results: list) -> list:
        """The gradients among the program's results, None for those whose flag (the
        results after them, for the positions `defined`) is false."""
        if not self.defined:
            return results
        n = len(results) - len(self.defined)
        grads = list(results[:n])
        for k, flag in zip(self.defined, results[n:]):
            if not (flag._value if isinstance(flag, Tensor) else flag):
                grads[k] = None
        return grads

    def run_recorded(self, graph: Graph, seeds) -> list:
        """Run the backward ops eagerly through `apply`, recording them, so that the
        gradients can themselves be differentiated (``create_graph=True``)."""
        env = dict(zip(self.function.args, [*seeds, *(graph.tensor(r) for r in
                                                       self.residual_refs)]))
        for op in self.function.block.ops[:-1]:
            out = apply(op.name, [env[v] for v in op.operands], op.attrs)
            for r, t in zip(op.results, (out,) if isinstance(out, Tensor) else out):
                env[r] = t
        return self._existing([env[v] for v in self.function.return_op.operands])


_PROGRAMS: dict = {}
_PROGRAMS_LIMIT = 1024


def _program(graph: Graph, wrt: Sequence[int]) -> BackwardProgram:
    key = (graph.key, tuple(wrt))
    program = _PROGRAMS.get(key)
    if program is None:
        if len(_PROGRAMS) >= _PROGRAMS_LIMIT:
            _PROGRAMS.clear()
        program = _PROGRAMS[key] = BackwardProgram(graph, wrt)
    return program


def _seeds(roots, grad_tensors) -> list[np.ndarray]:
    seeds = []
    for i, t in enumerate(roots):
        g = grad_tensors[i] if grad_tensors is not None else None
        if g is None:
            seeds.append(np.ones_like(t._value))
        else:
            value = np.asarray(getattr(g, "_value", g), dtype=t._value.dtype)
            if value.shape != t._value.shape:
                raise GraphError(f"the gradient given for output {i} has shape "
                                 f"{list(value.shape)} but the output has shape "
                                 f"{list(t._value.shape)}", user_location())
            seeds.append(value)
    return seeds


def _check_roots(roots) -> None:
    for t in roots:
        if t.stop_gradient or not t._value.dtype.kind == "f":
            raise GraphError("backward() needs a float tensor that requires a gradient; this "
                             "one has stop_gradient=True (no input of the ops that made it "
                             "requires a gradient)", user_location())


def backward(roots, grad_tensors=None, retain_graph: bool = False) -> None:
    """Accumulate into ``.grad`` of every leaf tensor that requires a gradient the
    gradient of the sum of `roots` (each weighted by its grad tensor, default ones)."""
    _check_roots(roots)
    graph = Graph(roots)
    leaves = [j for j, t in enumerate(graph.leaves) if not t.stop_gradient]
    hooked = _hooked(graph)
    if leaves or hooked:
        wrt, seeds = [-1 - j for j in leaves], _seeds(roots, grad_tensors)
        grads = _hooked_backward(graph, wrt, hooked, seeds, _sweep) if hooked else \
            _sweep(graph, wrt, seeds)
        for j, g in zip(leaves, grads):
            if g is None:  # no op that used it ran (a branch of a compiled call)
                continue
            leaf = graph.leaves[j]
            hooks = getattr(leaf, "_hooks", None)
            leaf._accumulate_grad(_run_hooks(hooks, g) if hooks else g)
    if not retain_graph:
        graph.free()


def _sweep(graph: Graph, wrt: list, seeds) -> list:
    """The gradients of `wrt` as arrays, from array seeds."""
    return _program(graph, wrt).run(graph, seeds)


def _recorded_sweep(graph: Graph, wrt: list, seeds) -> list:
    """The gradients of `wrt` as Tensors connected to the graph (``create_graph``),
    from Tensor seeds."""
    return _program(graph, wrt).run_recorded(graph, seeds)


def _hooked(graph: Graph) -> list:
    """The refs of the intermediate values of `graph` that have gradient hooks."""
    return [(n.index, k) for n in graph.nodes if n.hooks for k, hooks in n.hooks.items()
            if hooks]


def _run_hooks(hooks: dict, g):
    """The gradient `g` passed through `hooks` in order; the same object if none
    replaced it. An array gradient is handed to the hooks as a Tensor and run without
    recording; a Tensor one (``create_graph``) as it is, so that what the hooks compute
    can be differentiated again, as in Paddle."""
    if isinstance(g, Tensor):
        for hook in list(hooks.values()):
            out = hook(g)
            if out is not None:
                g = out if isinstance(out, Tensor) else Tensor(out, dtype=g.dtype)
        return g
    with no_grad():
        for hook in list(hooks.values()):
            out = hook(Tensor._from_array(g))
            if out is not None:
                g = np.asarray(out._value if isinstance(out, Tensor) else out, dtype=g.dtype)
    return g


def _hooked_backward(graph: Graph, wrt: list, hooked: list, seeds, sweep) -> list:
    """The gradients of `wrt` when intermediate values `hooked` have hooks that may
    replace their gradient; `sweep` is `_sweep` or `_recorded_sweep`. Backward is
    linear in its seeds, so one sweep gives every gradient, then each hook's change
    (latest value first, once its gradient is complete) is swept back from that value
    and added to what lies before it. A hooked value in `wrt` (``paddle.grad`` with
    respect to an intermediate tensor) gets its gradient as the hooks left it."""
    hooked = sorted(hooked, reverse=True)
    refs = list(dict.fromkeys([*wrt, *hooked]))
    totals = dict(zip(refs, sweep(graph, refs, seeds)))
    tensors = {r: graph.tensor(r) for r in refs}  # taken before other walks re-mark nodes
    for i, r in enumerate(hooked):
        node_index, k = r
        g = totals[r]
        if g is None:  # it has no gradient on this run: its hooks do not run
            continue
        new = _run_hooks(graph.nodes[node_index].hooks[k], g)
        if new is g:
            continue
        totals[r] = new
        sub = Graph([tensors[r]])
        earlier = [*((w, tensors[w]) for w in wrt if w not in hooked),
                   *((h, tensors[h]) for h in hooked[i + 1:])]
        found = [(key, ref) for key, t in earlier if (ref := sub.ref_of(t)) is not None]
        if found:
            deltas = sweep(sub, [ref for _, ref in found], [new - g])
            for (key, _), d in zip(found, deltas):
                if d is not None:
                    totals[key] = d if totals[key] is None else totals[key] + d
    return [totals[r] for r in wrt]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, no_grad_vars=None):
    """Paddle's ``paddle.grad``: the gradients of `outputs` with respect to `inputs`
    (which may be intermediate tensors), returned rather than accumulated. As in
    Paddle 3.3, it leaves the graph in place whatever `retain_graph` says (only
    ``backward()`` frees it), so two ``paddle.grad`` calls through shared tensors work.
    No gradient flows through the tensors of `no_grad_vars`, and an input that is
    one of them, or stops gradients, has none (None with `allow_unused`); hooks of
    intermediate tensors apply, those of leaves do not (as in Paddle)."""
    single_out = isinstance(outputs, Tensor)
    outputs = [outputs] if single_out else list(outputs)
    single_in = isinstance(inputs, Tensor)
    inputs = [inputs] if single_in else list(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if state.tracer is not None:
        return state.tracer.grad(outputs, inputs, grad_outputs, create_graph, allow_unused)
    _check_roots(outputs)
    no_grad_vars = [no_grad_vars] if isinstance(no_grad_vars, Tensor) else \
        list(no_grad_vars or ())
    graph = Graph(outputs, frozenset((t._node, t._index) for t in no_grad_vars
                                     if t._node is not None))
    refs = [None if any(t is v for v in no_grad_vars) else graph.ref_of(t) for t in inputs]
    unused = [i for i, r in enumerate(refs) if r is None]
    if unused and not allow_unused:
        raise GraphError(f"input {unused[0]} of grad() is not used to compute the outputs "
                         "(or has stop_gradient=True, or is in no_grad_vars); pass "
                         "allow_unused=True to get None for it", user_location())
    wrt = [r for r in refs if r is not None]
    seeds = _seeds(outputs, grad_outputs)
    hooked = _hooked(graph)
    if create_graph:
        # the gradient is a function of the grad_outputs given, which may require one
        seeds = [go if isinstance(go, Tensor) and go.dtype is t.dtype else
                 Tensor._from_array(s)
                 for s, t, go in zip(seeds, outputs, grad_outputs or [None] * len(seeds))]
        with enable_grad():  # create_graph records the gradients, even under no_grad()
            values = _hooked_backward(graph, wrt, hooked, seeds, _recorded_sweep) \
                if hooked else _recorded_sweep(graph, wrt, seeds)
    else:
        with no_grad():
            values = [None if g is None else Tensor._from_array(g) for g in
                      (_hooked_backward(graph, wrt, hooked, seeds, _sweep) if hooked
                       else _sweep(graph, wrt, seeds))]
    by_ref = dict(zip(wrt, values))
    result = [by_ref[r] if r is not None else None for r in refs]
    unused = [i for i, (r, g) in enumerate(zip(refs, result)) if r is not None and g is None]
    if unused and not allow_unused:
        raise GraphError(f"input {unused[0]} of grad() is not used to compute the outputs on "
                         "this run (a compiled call used it in a branch not taken); pass "
                         "allow_unused=True to get None for it", user_location())
    return result


__all__ = ["GraphError", "Node", "backward", "grad"]

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

A `PyLayer` (a forward and a backward written in Python) is one node whose backward
no IR op describes, so it cuts the graph: the walk from the roots stops at it, its
outputs are leaves of what is swept, and the graph before it is swept from the
gradients its backward returns (`_Stages`). Each part is still one cached program.
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from .context import current_observer, current_tracer, grad_enabled, state
from .dispatch import (Node, apply, enable_grad, is_grad_enabled, no_grad, set_grad_enabled,
                       user_location, warn_at_user)
from .errors import ConversionError, IrflowError, ShapeError
from .ir import dtypes
from .ir.builder import Builder
from .ir.core import Function as IRFunction
from .ir.core import Module
from .passes.manager import DEFAULT_PIPELINE, PassManager, split_at_autodiff
from .ir.types import TensorType
from .tensor.tensor import Tensor


class GraphError(IrflowError, RuntimeError):
    """backward() or grad() through a freed graph, or with nothing to differentiate."""


class UnusedInputError(GraphError, ValueError):
    """``paddle.grad`` of an input the outputs do not depend on, without
    ``allow_unused=True``: a ValueError, as Paddle raises."""


class PyLayerError(IrflowError, ValueError):
    """A PyLayer's backward returned gradients that do not fit its forward's inputs."""


_walks = itertools.count(1)


class Graph:
    """The part of the dynamic graph that reaches some roots: nodes in topological
    order, the leaves they read, and a key describing its structure.

    A ref names a value of the graph: ``-1 - j`` is leaf j, ``(i, k)`` output k of
    node i. `blocked` holds (node, output index) pairs whose values the graph takes as
    constants, leaves that no gradient reaches (``paddle.grad``'s `no_grad_vars`).
    The walk stops at PyLayer nodes: their outputs are leaves, listed in `cuts`."""

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
                if type(node) is _LayerNode:  # a cut: its outputs are leaves here
                    stack.pop()
                    continue
                node.mark = -walk
                for t, (src, k, _) in zip(node.inputs, node.sources):
                    if src is not None and src.mark != walk and (
                            not blocked or (src, k) not in blocked):
                        stack.append(src)
        self.nodes = nodes
        self.leaves: list = []       # Tensors no node of the graph produced
        self.leaf_values: list = []  # the arrays the graph read from them
        self.cuts: dict[int, tuple] = {}  # leaf ref -> (its PyLayer node, output index)
        leaf_index = self._leaf_index = {}

        def ref(t, src, k, array):
            if src is not None and src.mark == walk and (not blocked or (src, k) not in blocked):
                return (src.index, k)
            j = leaf_index.get(id(t))
            if j is None:
                j = leaf_index[id(t)] = len(self.leaves)
                self.leaves.append(t)
                self.leaf_values.append(array)
                if type(src) is _LayerNode and (src, k) not in blocked:
                    self.cuts[-1 - j] = (src, k)
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
        j = self._leaf_index.get(id(t))
        if j is not None:
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
        return _connected(node.outputs[k], node, k)

    def to_function(self) -> tuple[IRFunction, dict]:
        """The graph as an IR function of its leaves returning its roots, and the map
        from IR values back to refs."""
        types = [TensorType(dtypes.from_numpy(a), a.shape) for a in self.leaf_values]
        fn = IRFunction("dynamic_graph", types, [t.name for t in self.leaves])
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


def _connected(array: np.ndarray, node: Node, k: int) -> Tensor:
    """A Tensor holding `array` as output `k` of `node`, so that what is computed from it
    is recorded as depending on that node."""
    t = Tensor._from_array(array)
    t.stop_gradient, t._node, t._index = False, node, k
    return t


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


def _requires_grad(t: Tensor) -> bool:
    return not t.stop_gradient and t._value.dtype.kind == "f"


def backward(roots, grad_tensors=None, retain_graph: bool = False) -> None:
    """Accumulate into ``.grad`` of every leaf tensor that requires a gradient the
    gradient of the sum of `roots` (each weighted by its grad tensor, default ones).
    As Paddle's ``paddle.autograd.backward``, `roots` and `grad_tensors` may each be
    one Tensor instead of a list."""
    roots = [roots] if isinstance(roots, Tensor) else list(roots)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    if grad_tensors is not None:
        grad_tensors = [g for t, g in zip(roots, grad_tensors) if _requires_grad(t)]
    wanted = [t for t in roots if _requires_grad(t)]
    if not wanted:  # Paddle does nothing here; a warning says so, unless the call is
        # compile(check=True)'s reference run of the eager code (an observer is set),
        # which runs without gradients by design
        if current_observer() is None:
            warn_at_user("backward() of a tensor that requires no gradient does nothing: "
                         "it has stop_gradient=True or is not a float tensor (no input of "
                         "the ops that made it requires a gradient), so no .grad changes",
                         stacklevel=3)
        return
    roots = wanted
    for t in roots:
        if t._node is not None:
            t._node.differentiated = True
    graph = Graph(roots)
    leaves: dict[int, Tensor] = {}

    def targets(g: Graph) -> list:
        found = []
        cuts = g.cuts
        for j, t in enumerate(g.leaves):
            if not t.stop_gradient and (not cuts or -1 - j not in cuts):
                key = id(t)
                leaves[key] = t
                found.append((key, -1 - j))
        return found

    stages = _Stages(targets, _sweep)
    for key, g in stages.run(graph, _seeds(roots, grad_tensors)).items():
        if g is None:  # no op that used it ran (a branch of a compiled call)
            continue
        leaf = leaves[key]
        hooks = getattr(leaf, "_hooks", None)
        leaf._accumulate_grad(_run_hooks(hooks, g) if hooks else g)
    if not retain_graph:
        stages.free()


class _Stages:
    """The gradients of the dynamic graph, cut at its PyLayer nodes. The graph from the
    roots is swept first: for the values wanted (`targets`) and for the outputs of the
    PyLayers where it stops (`Graph.cuts`). Then each PyLayer reached, latest first,
    runs its backward on the sum of the gradients of its outputs, and the graph before
    it, from its inputs, is swept from what that returned, reaching further PyLayers.
    Latest first is a topological order (a PyLayer made later cannot feed one made
    earlier), so every PyLayer between one and the roots has run when it runs, and
    the gradients of its outputs are complete.

    `targets(graph)` gives the (key, ref) pairs of the values of `graph` whose
    gradients are wanted, right after the graph's walk (refs of intermediate values
    are only valid until the next walk); a key's gradients from several graphs add up.
    `sweep` is `_sweep` (arrays) or `_recorded_sweep` (Tensors, `recorded`)."""

    def __init__(self, targets, sweep, recorded: bool = False, blocked=frozenset()):
        self.targets, self.sweep, self.recorded, self.blocked = \
            targets, sweep, recorded, blocked
        self.totals: dict = {}            # key -> its gradient (None: none on this run)
        self.graphs: list[Graph] = []
        self.layers: list[_LayerNode] = []  # the PyLayer nodes whose backward ran
        self.pending: dict[_LayerNode, list] = {}  # PyLayer node -> its outputs' gradients
        self.wanted_outputs: dict[tuple, list] = {}  # (PyLayer node, k) -> keys of targets

    def run(self, graph: Graph, seeds) -> dict:
        """Sweep from the roots of `graph` with `seeds`: the gradient of each key."""
        self._sweep_graph(graph, seeds)
        while self.pending:
            node = max(self.pending, key=lambda n: n.order)
            grads = node.hooked(self.pending.pop(node))
            for k, g in enumerate(grads):
                for key in self.wanted_outputs.get((node, k), ()):
                    self.totals[key] = g
            self.layers.append(node)
            roots, seeds = node.run_backward(grads, self.recorded)
            if roots:
                self._sweep_graph(Graph(roots, self.blocked), seeds)
        return self.totals

    def _sweep_graph(self, graph: Graph, seeds) -> None:
        self.graphs.append(graph)
        targets = self.targets(graph)
        cuts = graph.cuts
        if cuts:  # a target that is a PyLayer's output: its gradient once its hooks ran
            for key, ref in targets:
                if ref in cuts:
                    self.wanted_outputs.setdefault(cuts[ref], []).append(key)
            targets = [(key, ref) for key, ref in targets if ref not in cuts]
        hooked = _hooked(graph)
        refs = [ref for _, ref in targets] + list(cuts)
        if not (refs or hooked):
            return
        grads = _hooked_backward(graph, refs, hooked, seeds, self.sweep) if hooked else \
            self.sweep(graph, refs, seeds)
        totals = self.totals
        if totals:
            for (key, _), g in zip(targets, grads):
                totals[key] = _plus(totals.get(key), g)
        else:  # the first sweep (the only one without PyLayers): nothing to add to
            totals.update((key, g) for (key, _), g in zip(targets, grads))
        for (node, k), g in zip(cuts.values(), grads[len(targets):]):
            so_far = self.pending.setdefault(node, [None] * len(node.outputs))
            so_far[k] = _plus(so_far[k], g)

    def free(self) -> None:
        for graph in self.graphs:
            graph.free()
        for node in self.layers:
            node.free()


def _plus(a, b):
    """The sum of two gradients, either of which may be None (none)."""
    return b if a is None else a if b is None else a + b


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
    no_grad_vars = [no_grad_vars] if isinstance(no_grad_vars, Tensor) else \
        list(no_grad_vars or ())
    if state.tracer is not None:
        return state.tracer.grad(outputs, inputs, grad_outputs, create_graph, allow_unused,
                                 no_grad_vars)
    if grad_outputs is not None:
        grad_outputs = [g for t, g in zip(outputs, grad_outputs) if _requires_grad(t)]
    outputs = [t for t in outputs if _requires_grad(t)]
    if not outputs:
        return _no_gradients(len(inputs), allow_unused)
    blocked = frozenset((t._node, t._index) for t in no_grad_vars if t._node is not None)
    graph = Graph(outputs, blocked)
    excluded = {id(t) for t in no_grad_vars}

    def targets(g: Graph) -> list:
        return [(i, ref) for i, t in enumerate(inputs)
                if id(t) not in excluded and (ref := g.ref_of(t)) is not None]

    seeds = _seeds(outputs, grad_outputs)
    if create_graph:
        # the gradient is a function of the grad_outputs given, which may require one
        seeds = [go if isinstance(go, Tensor) and go.dtype is t.dtype else
                 Tensor._from_array(s)
                 for s, t, go in zip(seeds, outputs, grad_outputs or [None] * len(seeds))]
        with enable_grad():  # create_graph records the gradients, even under no_grad()
            grads = {i: _differentiable(g) for i, g in
                     _Stages(targets, _recorded_sweep, True, blocked).run(graph, seeds).items()}
    else:
        with no_grad():
            grads = {i: None if g is None else Tensor._from_array(g) for i, g in
                     _Stages(targets, _sweep, False, blocked).run(graph, seeds).items()}
    unused = [i for i in range(len(inputs)) if i not in grads]
    if unused and not allow_unused:
        raise UnusedInputError(f"input {unused[0]} of grad() is not used to compute the "
                               "outputs (or has stop_gradient=True, or is in no_grad_vars); "
                               "pass allow_unused=True to get None for it", user_location())
    unused = [i for i, g in grads.items() if g is None]
    if unused and not allow_unused:
        raise UnusedInputError(f"input {unused[0]} of grad() is not used to compute the "
                               "outputs on this run (a compiled call used it in a branch not "
                               "taken); pass allow_unused=True to get None for it",
                               user_location())
    return [grads.get(i) for i in range(len(inputs))]


def _no_gradients(count: int, allow_unused: bool) -> list:
    """``paddle.grad``'s answer when no output requires a gradient (each stops
    gradients or is an integer tensor): as in Paddle, no input is reached, which is an
    error unless `allow_unused`, and then every gradient is None."""
    if not allow_unused:
        raise UnusedInputError("input 0 of grad() is not used to compute the outputs: no "
                               "output requires a gradient (each has stop_gradient=True or "
                               "is not a float tensor); pass allow_unused=True to get None",
                               user_location())
    return [None] * count


def _differentiable(g):
    """Gradient `g` of ``paddle.grad(..., create_graph=True)`` with
    ``stop_gradient=False``, as Paddle gives every such gradient: one that no input
    requiring a gradient reached (a linear function's, a constant) becomes a new
    Tensor that requires one, so that it can be differentiated again (to None with
    `allow_unused`) rather than raise; `g` itself may be a caller's tensor."""
    if g is None or not g.stop_gradient:
        return g
    out = Tensor._from_array(g._value)
    out.stop_gradient = False
    return out


# ---------------------------------------------------------------- PyLayer

_layer_order = itertools.count()


class _LayerNode(Node):
    """The node of one `PyLayer.apply`: the PyLayer class, its context, how forward's
    tensor arguments and results group into slots (`_slots`), and when it was made
    (`order`). No `Graph` holds it as an op: it cuts the graph, and `_Stages` runs its
    backward between sweeps."""

    __slots__ = ("layer", "ctx", "input_slots", "output_slots", "order")

    def __init__(self, layer: type, ctx: "PyLayerContext", inputs: list, input_slots: list,
                 outputs: list, output_slots: list):
        super().__init__(None, inputs, [t._value for t in outputs])
        self.layer, self.ctx = layer, ctx
        self.input_slots, self.output_slots = input_slots, output_slots
        self.order = next(_layer_order)

    def free(self) -> None:
        super().free()
        self.ctx = None  # and the tensors it saved

    def hooked(self, grads: list) -> list:
        """The gradients of the outputs, through the hooks registered on them."""
        if not self.hooks:
            return grads
        return [g if g is None or not self.hooks.get(k) else _run_hooks(self.hooks[k], g)
                for k, g in enumerate(grads)]

    def run_backward(self, grads: list, recorded: bool) -> tuple[list, list]:
        """Run the user's backward on the gradients of the outputs (None where none
        arrived): the inputs that take a gradient, as roots of the graph before this
        node, and their gradients (Tensors if `recorded`, else arrays)."""
        args = [self._gradient_argument(k, g, recorded) for k, g in enumerate(grads)]
        with enable_grad() if recorded else no_grad():
            returned = self.layer.backward(self.ctx, *_grouped(args, self.output_slots))
        roots, seeds = [], []
        for i, g in enumerate(self._input_grads(returned)):
            if g is None or not self._takes_gradient(i):
                continue
            t, (src, k, array) = self.inputs[i], self.sources[i]
            roots.append(t if src is None else _connected(array, src, k))
            seeds.append(g if recorded else g._value)
        return roots, seeds

    def _gradient_argument(self, k: int, g, recorded: bool):
        """What backward receives for output `k` from its gradient `g` (None if none)."""
        if g is None:
            if not self.ctx.materialize_grads:
                return None
            return Tensor._from_array(np.zeros_like(self.outputs[k]))
        return g if recorded else Tensor._from_array(g)

    def _takes_gradient(self, i: int) -> bool:
        """Whether forward's tensor argument `i` required a gradient when it ran (or is
        a leaf that requires one now)."""
        return self.sources[i][0] is not None or not self.inputs[i].stop_gradient

    def _input_grads(self, returned) -> list:
        """What backward returned, one gradient or None per Tensor among forward's
        arguments: a tuple has an entry per slot (a list for a list argument), anything
        else is the entry of the first slot. As in Paddle, entries may be missing at the
        end for arguments that take no gradient."""
        name = f"{self.layer.__name__}.backward"
        entries = list(returned) if isinstance(returned, tuple) else [returned]
        slots = self.input_slots
        if len(entries) > len(slots):
            raise PyLayerError(f"{name} returned {len(entries)} gradients, but forward took "
                               f"{len(slots)} tensor arguments: return one Tensor (or None) "
                               "for each, a list for a list of tensors", user_location())
        flat = []
        for s, (n, entry) in enumerate(zip(slots, entries + [_MISSING] * len(slots))):
            if n is None:
                flat.append(entry)
            elif entry is None or entry is _MISSING:
                flat.extend([entry] * n)
            elif isinstance(entry, (list, tuple)) and len(entry) == n:
                flat.extend(entry)
            else:
                raise PyLayerError(f"{name} returned a {type(entry).__name__} for argument "
                                   f"{s} of forward, a list of {n} tensors: return a list of "
                                   f"{n} gradients (Tensors or None)", user_location())
        return [self._checked(name, i, g) for i, g in enumerate(flat)]

    def _checked(self, name: str, i: int, g):
        """Gradient `g` of input `i` as a Tensor of the input's shape and dtype, or None."""
        if g is _MISSING:
            if self._takes_gradient(i):
                raise PyLayerError(f"{name} returned no gradient for tensor input {i} of "
                                   "forward, which requires one: return a gradient for each "
                                   "tensor argument (None for those that take none)",
                                   user_location())
            return None
        if g is None:
            return None
        if not isinstance(g, Tensor):
            raise PyLayerError(f"{name} returned a {type(g).__name__} as the gradient of "
                               f"tensor input {i} of forward; return a Tensor or None",
                               user_location())
        array = self.sources[i][2]
        if tuple(g.shape) != array.shape:
            raise PyLayerError(f"{name} returned a gradient of shape {list(g.shape)} for "
                               f"tensor input {i} of forward, whose shape is "
                               f"{list(array.shape)}", user_location())
        dtype = dtypes.from_numpy(array)
        return g if g.dtype is dtype else apply("cast", [g], {"dtype": dtype})


_MISSING = object()  # an entry backward did not return


def _slots(items) -> tuple[list, list]:
    """Paddle's grouping of a PyLayer's tensor arguments (or results): each item that
    is a Tensor is a slot, and so is each list or tuple holding Tensors; other items
    (numbers, strings, None) are none. Returns the Tensors in order and, per slot, None
    for a Tensor or the number of Tensors of its list."""
    flat, layout = [], []
    for item in items:
        if isinstance(item, Tensor):
            flat.append(item)
            layout.append(None)
        elif isinstance(item, (list, tuple)):
            tensors = [t for t in item if isinstance(t, Tensor)]
            if tensors:
                flat.extend(tensors)
                layout.append(len(tensors))
    return flat, layout


def _grouped(flat: list, layout: list) -> list:
    """`flat` split back into slots (`_slots`): an item for each None, a list for each
    length."""
    grouped, i = [], 0
    for n in layout:
        if n is None:
            grouped.append(flat[i])
            i += 1
        else:
            grouped.append(list(flat[i:i + n]))
            i += n
    return grouped


def _as_items(result) -> list:
    """What forward returned, as the items whose slots are its outputs."""
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _fresh_outputs(result, inputs: list):
    """`result` with a new Tensor, sharing the array, in place of each Tensor that cannot
    become an output of the PyLayer's node because it already has a place in the graph:
    an input returned as it is, a Tensor returned twice, one recorded by an op or that
    requires a gradient (a parameter). Paddle makes an input returned as it is the
    output in place unless forward calls `mark_not_inplace`; irflow always gives a new
    Tensor, so the input keeps its own history."""
    taken = {id(t) for t in inputs}

    def fresh(value):
        if not isinstance(value, Tensor):
            return value
        if id(value) in taken or value._node is not None or not value.stop_gradient:
            value = Tensor._from_array(value._value)
        taken.add(id(value))
        return value

    def fresh_item(item):
        if isinstance(item, (list, tuple)):
            return type(item)(fresh(t) for t in item)
        return fresh(item)

    if isinstance(result, (list, tuple)):
        return type(result)(fresh_item(item) for item in result)
    return fresh(result)


class PyLayerContext:
    """The `ctx` a PyLayer's forward and backward receive: forward stores what backward
    needs on it (`save_for_backward`, or any attribute: ``ctx.alpha = alpha``) and
    declares how its outputs take gradients."""

    container = None             # the tensors of save_for_backward
    not_inplace_tensors = ()
    non_differentiable = ()      # outputs that take no gradient
    materialize_grads = True     # zeros, not None, for outputs no gradient reached
    grad_in_dtype_consistent = True

    def save_for_backward(self, *tensors) -> None:
        """Keep `tensors` (other values too) for backward, which reads them with
        `saved_tensor`. An output of forward kept here is that output, so that a
        gradient computed from it in backward can be differentiated again."""
        self.container = tensors

    def saved_tensor(self):
        """What forward gave `save_for_backward` (a tuple), or None if nothing."""
        return self.container

    def mark_not_inplace(self, *tensors) -> None:
        """Paddle's request for a new output Tensor where forward returns an input as
        it is. irflow always makes one (`apply`), so this only records `tensors`."""
        self.not_inplace_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs of forward that take no gradient: they get ``stop_gradient=True``
        and backward receives zeros (or None, see `set_materialize_grads`) for them."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, the default) or None for the outputs
        that no gradient reached."""
        self.materialize_grads = bool(value)

    def set_grad_in_dtype_consistent(self, flag: bool) -> None:
        """Paddle's switch for casting the gradients backward receives to the dtypes of
        forward's outputs. In irflow they always have those dtypes: the flag is
        recorded and changes nothing."""
        self.grad_in_dtype_consistent = bool(flag)


class PyLayer:
    """A function with a hand-written gradient, as Paddle's ``paddle.autograd.PyLayer``:
    subclass it with static methods ``forward(ctx, *args, **kwargs)`` and
    ``backward(ctx, *grads)``, and call ``MyLayer.apply(*args, **kwargs)``.

    Forward runs without recording the dynamic graph and returns a Tensor, or a tuple
    or list whose items are Tensors, lists of Tensors or other values. Backward gets
    one gradient per Tensor output (a list for a list of them; zeros for an output no
    gradient reached, see `PyLayerContext.set_materialize_grads`) and returns one per
    Tensor argument of forward (positional, then keyword; a list for a list of
    Tensors; None for an argument that takes no gradient), of the argument's shape.
    It runs without recording, unless the gradient is itself differentiated
    (``paddle.grad(..., create_graph=True)``): then what it computes is recorded, and
    gradients of gradients flow through it. Non-Tensor arguments are passed to
    forward as they are and take no gradient.

    Unlike Paddle: an integer output has ``stop_gradient=True`` (Paddle says False but
    gives it no gradient); a gradient returned for an argument that requires none is
    ignored (Paddle raises); a gradient of another float dtype is cast to the
    argument's (Paddle passes it on); and hooks registered on an output apply to its
    gradient before backward runs (Paddle skips them). A hook on a tensor whose
    gradient comes both through a PyLayer and around it runs once for each of the two
    parts (the graph is swept in parts, `_Stages`), where Paddle runs it once on the sum.

    In compiled code (`irflow.compile`, ``to_static``, static-graph programs) a
    PyLayer runs only where no gradient is needed through it (its inputs stop
    gradients, or under ``no_grad``): its forward is then traced as ordinary ops."""

    @staticmethod
    def forward(ctx: PyLayerContext, *args, **kwargs):
        raise NotImplementedError("a PyLayer must define forward(ctx, *args) as a "
                                  "staticmethod")

    @staticmethod
    def backward(ctx: PyLayerContext, *grads):
        raise NotImplementedError("a PyLayer must define backward(ctx, *grads) as a "
                                  "staticmethod")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the arguments and, if a Tensor argument requires a gradient
        (and gradients are being recorded), record one node whose gradient is backward."""
        inputs, input_slots = _slots([*args, *kwargs.values()])
        records = grad_enabled() and any(not t.stop_gradient for t in inputs)
        if records and current_tracer() is not None:
            raise ConversionError(
                f"PyLayer {cls.__name__} cannot be differentiated in compiled code "
                "(irflow.compile, to_static or a static-graph program) yet: the program's "
                "autodiff cannot run its Python backward. Call it from eager code, or "
                "call it where its inputs need no gradient (under no_grad)",
                user_location())
        ctx = PyLayerContext()
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        if not records:
            return result
        excluded = {id(t) for t in ctx.non_differentiable}
        returned, _ = _slots(_as_items(result))
        differentiable = [t.dtype.is_float and id(t) not in excluded for t in returned]
        result = _fresh_outputs(result, inputs)
        outputs, output_slots = _slots(_as_items(result))
        node = _LayerNode(cls, ctx, inputs, input_slots, outputs, output_slots)
        for k, (t, flag) in enumerate(zip(outputs, differentiable)):
            if flag:
                t.stop_gradient, t._node, t._index = False, node, k
        return result


# ---------------------------------------------------------------- jacobian, hessian

class Jacobian:
    """Paddle's ``paddle.autograd.Jacobian``: the Jacobian of `ys` with respect to `xs`,
    computed when first read (indexed, or used as a Tensor: ``J[:]``, ``J[0, :]``,
    ``J.numpy()``, ``J * 2``) and then kept. Without a batch axis, `ys` and `xs` are 0-D
    or 1-D and it has shape ``[M, N]`` (a 0-D one's axis left out); with one (the
    first), they are ``[B]`` or ``[B, n]`` and it has shape ``[B, M, N]`` (a 1-D one's
    axis left out), sample b's outputs differentiated by sample b's inputs only (as
    Paddle, which assumes the samples independent). It is differentiable again
    (computed with ``create_graph=True``), and zero where `ys` does not depend on `xs`.

    Each row is one ``paddle.grad`` seeded with a one-hot cotangent, so that every row
    reuses one compiled backward program; unlike Paddle's, the rows are computed all
    at once, at the first read."""

    def __init__(self, ys, xs, is_batched: bool = False):
        ys = ys._evaluate_all() if isinstance(ys, Jacobian) else ys
        low, high = (1, 2) if is_batched else (0, 1)
        for name, t in (("xs", xs), ("ys", ys)):
            if not low <= t.ndim <= high:
                raise ShapeError(f"jacobian: {name}.ndim should be {low} or {high} when "
                                 f"is_batched={is_batched} but got {t.ndim}",
                                 user_location())
        self._ys, self._xs, self._batched = ys, xs, is_batched
        self._matrix = None
        batch = [xs.shape[0]] if is_batched else []
        self.shape = [*batch, *ys.shape[low:high], *xs.shape[low:high]]

    def _evaluate_all(self) -> Tensor:
        if self._matrix is None:
            self._matrix = self._compute()
        return self._matrix

    def _compute(self) -> Tensor:
        from .tensor.manipulation import reshape, stack
        shape = list(self._ys.shape)
        flat = [shape[0], int(np.prod(shape[1:]))] if self._batched else [int(np.prod(shape))]
        rows = []
        for i in range(flat[-1]):
            seed = np.zeros(flat, self._ys.dtype.np)
            seed[..., i] = 1
            rows.append(self._row(Tensor._from_array(seed.reshape(shape))))
        return reshape(stack(rows, axis=1 if self._batched else 0), self.shape)

    def _row(self, seed: Tensor) -> Tensor:
        """The gradient of ``(ys * seed).sum()`` with respect to `xs`, flattened to one
        row per sample (one row without a batch axis); zeros if `ys` does not
        depend on `xs`."""
        from .tensor.creation import zeros_like
        (g,) = grad(self._ys, self._xs, seed, create_graph=True, allow_unused=True)
        if g is None:
            g = zeros_like(self._xs)
            g.stop_gradient = self._xs.stop_gradient
        return g.reshape([g.shape[0], -1]) if self._batched else g.reshape([-1])

    def __getitem__(self, index):
        if not self.shape:
            raise IndexError("0-D tensor can not be indexed.")
        return self._evaluate_all()[index]

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_ys", "_xs", "_batched", "_matrix"):
            raise AttributeError(name)
        return getattr(self._evaluate_all(), name)


class Hessian(Jacobian):
    """Paddle's ``paddle.autograd.Hessian``: the Jacobian of a gradient (`hessian`)."""


def _evaluated_operator(name: str):
    """Jacobian's operator `name`: that of its full matrix, as Paddle's."""
    def operator(self, other):
        other = other._evaluate_all() if isinstance(other, Jacobian) else other
        return getattr(self._evaluate_all(), name)(other)
    operator.__name__ = name
    return operator


for _name in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__mod__",
              "__floordiv__", "__matmul__", "__eq__", "__ne__", "__lt__", "__le__",
              "__gt__", "__ge__"):
    setattr(Jacobian, _name, _evaluated_operator(_name))


def _batched(batch_axis) -> bool:
    if batch_axis is not None and batch_axis != 0:
        raise ValueError(f"batch_axis should be None or 0, but got {batch_axis}.")
    return batch_axis is not None


def jacobian(ys, xs, batch_axis=None):
    """Paddle's ``paddle.autograd.jacobian``: a `Jacobian` of `ys` by `xs`, or, where
    either is a list or tuple, a tuple of them (nested: one per output, each with one
    per input)."""
    batched = _batched(batch_axis)
    if isinstance(ys, (list, tuple)):
        return tuple(jacobian(y, xs, batch_axis) for y in ys)
    if isinstance(xs, (list, tuple)):
        return tuple(Jacobian(ys, x, batched) for x in xs)
    return Jacobian(ys, xs, batched)


def hessian(ys, xs, batch_axis=None):
    """Paddle's ``paddle.autograd.hessian``: the `Hessian` of a single-element `ys`
    (one element per sample with ``batch_axis=0``) by `xs`; for a list or tuple of
    inputs, a nested tuple: ``H[i][j]`` differentiates by ``xs[i]`` then ``xs[j]``."""
    batched = _batched(batch_axis)
    if batched:
        if ys.size // max(ys.shape[0], 1) > 1:
            raise ShapeError(f"hessian: ys must have one element per sample when "
                             f"batch_axis=0, but has shape {list(ys.shape)}",
                             user_location())
        ys = ys.reshape([-1])
    else:
        if ys.size > 1:
            raise ShapeError(f"hessian: ys must have one element when batch_axis is None, "
                             f"but has {ys.size}", user_location())
        ys = ys.reshape([])
    first = jacobian(ys, xs, batch_axis)
    if not isinstance(xs, (list, tuple)):
        return Hessian(first, xs, batched)
    return tuple(tuple(Hessian(j, x, batched) for x in xs) for j in first)


Function = PyLayer  # Paddle's other name for it


__all__ = ["Function", "GraphError", "Hessian", "Jacobian", "Node", "PyLayer",
           "PyLayerContext", "PyLayerError", "UnusedInputError", "backward", "enable_grad",
           "grad", "hessian", "is_grad_enabled", "jacobian", "no_grad", "set_grad_enabled"]

"""Layers only look down: every ``import`` in the package (at module level or inside
a function) is read, and the graph of its components (``irflow.ir``,
``irflow.passes``, ``irflow.tensor``, ...) must respect the layers and have no cycle.

    errors  <-  ir  <-  ops            (ops declare ops with ir; ir knows no op)
                ir  <-  passes         (passes see only the IR)
                ir, passes  <-  codegen
    everything above may import what is below it.
"""
import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "irflow"

# What each lower component may import, besides itself, irflow.errors and
# irflow.version.
LAYERS = {
    "errors": set(),
    "version": set(),
    "ir": set(),
    "ops": {"ir"},
    "passes": {"ir"},
    "codegen": {"ir", "passes"},
}
# Cycles among the upper components, left to their owners: Tensor.backward calls
# autograd, which wraps results in Tensors; dispatch makes Tensors, and the tensor API
# calls dispatch; Layer.__call__ converts forward when tracing, and the frontend checks
# for Layers. Any other cycle fails.
KNOWN_CYCLES = [{"tensor", "autograd"}, {"tensor", "dispatch"}, {"frontend", "nn"}]


def component(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "irflow"


def imports() -> dict[str, set[tuple[str, str]]]:
    """Component -> {(imported component, "file:line")}."""
    found = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        package = parts[:-1]  # what a relative import starts from, for a module or a package
        module = ".".join(package if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = list(package[:len(package) - node.level + 1]) if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if t == "irflow" or t.startswith("irflow."):
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    found[component(module)].add((component(t), where))
    return found


def test_lower_layers_import_only_what_is_below_them():
    upward = [f"{where}: {source} imports {target}"
              for source, edges in imports().items() if source in LAYERS
              for target, where in edges
              if target not in LAYERS[source] | {source, "errors", "version"}]
    assert upward == []


def test_no_cycles_between_components():
    graph = {source: {t for t, _ in edges} - {source} for source, edges in imports().items()}
    for known in KNOWN_CYCLES:
        a, b = sorted(known)
        graph.get(a, set()).discard(b)
    cycles = []

    def visit(node, path):
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cycles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in done:
                visit(nxt, path + [nxt])
        done.add(node)

    done: set[str] = set()
    for start in sorted(graph):
        if start not in done:
            visit(start, [start])
    assert cycles == []


def test_the_graph_is_read():
    found = {source: {t for t, _ in edges} for source, edges in imports().items()}
    assert found["passes"] == {"errors", "ir", "passes"}
    assert found["frontend"] >= {"ir", "passes", "codegen", "tensor"}

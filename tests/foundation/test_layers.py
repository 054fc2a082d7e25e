"""The layer map of ARCHITECTURE.md, enforced over the import graph (module-level, function-level
and type-checking imports alike): no import circle in testhelix, autosaddler or gtdd, no import
from a lower layer of testhelix up to a higher one, and testhelix imports neither of its callers."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("testhelix", "autosaddler", "gtdd")

# testhelix's layers, lowest first: a module may import its own layer and the layers below it.
# Keep in step with the drawing in ARCHITECTURE.md ("Layers"). A module belongs to the layer of the
# longest prefix listed here.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("testhelix", "testhelix.core.errors", "testhelix.core.digest", "testhelix.core.atomic",
                    "testhelix.core.readers",
                    "testhelix.core.agent_roles", "testhelix.core.paths", "testhelix.core.bundled_data",
                    "testhelix.core.staging", "testhelix.core.heartbeat",
                    "testhelix.core.plugins", "testhelix.core.forkrun", "testhelix.core.inputs", "testhelix.core.lazycli")),
    ("format", ("testhelix.tasks", "testhelix.strategy", "testhelix.strategy.skills", "testhelix.tasks.splits")),
    ("execution", ("testhelix.execution",)),
    ("models", ("testhelix.llm",)),
    ("setup", ("testhelix.run.setup",)),
    ("records", ("testhelix.store",)),
    ("judge", ("testhelix.prism",)),
    ("agent", ("testhelix.agent",)),
    ("pipeline", ("testhelix.helix",)),
    ("parallel", ("testhelix.parallel", "testhelix.parallel.build")),
    ("tools", ("testhelix.pack", "testhelix.importers", "testhelix.conformance.plugin_check")),
    ("interface", ("testhelix.commands.cli", "testhelix.commands.plumbing", "testhelix.commands.run_options",
                   "testhelix.commands", "testhelix.view",
                   "testhelix.view.mlflow_log")),
)



def modules(root: Path) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(root: Path) -> nx.DiGraph:
    """module -> the project modules it imports anywhere in its source (one edge per pair)."""
    mods = modules(root)

    def owner(name: str) -> str | None:  # `pkg.mod.NAME` -> `pkg.mod`: the longest known prefix
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: nx.DiGraph = nx.DiGraph()
    for name, path in mods.items():
        graph.add_node(name)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
            else:
                continue
            for target in targets:
                found = owner(target)
                if found and found != name:
                    graph.add_edge(name, found, line=node.lineno)
    return graph


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None   # (prefix length, layer index)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def upward_imports(graph: nx.DiGraph) -> list[str]:
    out = []
    for a, b, data in graph.edges(data=True):
        la, lb = layer_of(a), layer_of(b)
        if la is not None and lb is not None and lb > la:
            out.append(f"{a}:{data['line']} ({LAYERS[la][0]}) imports {b} ({LAYERS[lb][0]})")
    return sorted(out)


def circles(graph: nx.DiGraph) -> list[set[str]]:
    return [c for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_every_testhelix_module_has_a_layer():
    assert [m for m in modules(ROOT) if m.startswith("testhelix") and layer_of(m) is None] == []


def test_no_import_runs_against_the_layers():
    assert upward_imports(import_graph(ROOT)) == []


def test_no_import_circle():
    assert circles(import_graph(ROOT)) == []


def test_testhelix_imports_neither_of_its_callers():
    graph = import_graph(ROOT)
    assert sorted(f"{a} imports {b}" for a, b in graph.edges
                  if a.startswith("testhelix") and b.split(".")[0] in ("autosaddler", "gtdd")) == []


def test_the_checks_find_a_planted_upward_import_and_circle(tmp_path):
    """The checks above can fail: an upward import, even inside a function, and a circle are found."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "testhelix" / "errors.py").write_text("def f():\n    from testhelix.helix.pipeline import run\n")
    (tmp_path / "testhelix" / "helix").mkdir()
    (tmp_path / "testhelix" / "helix" / "__init__.py").write_text("")
    (tmp_path / "testhelix" / "helix" / "pipeline.py").write_text("from ..errors import f\nrun = f\n")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == ["testhelix.core.errors:2 (foundation) imports testhelix.helix.pipeline (pipeline)"]
    assert circles(graph) == [{"testhelix.core.errors", "testhelix.helix.pipeline"}]

"""An import-graph check of its own, independent of test_layers.py's layer table (nothing is imported
from it): the graph of testhelix, autosaddler and gtdd is read from the source's syntax trees, every
import kind counted (module level, inside functions, under TYPE_CHECKING, relative, and
importlib.import_module of a literal name), and three rules are checked on it with networkx:

1. no import cycle among modules, nor among folders (a module counted as its top two name parts,
   `gtdd.domains`, `testhelix.llm`: two folders that import each other are one tangle);
2. the package direction: testhelix imports neither autosaddler nor gtdd, and autosaddler and gtdd do
   not import each other;
3. GTDD's domains describe behaviour only: no domain module -- nor the sample plug-in's out-of-tree
   domain -- reaches gtdd.isolation or gtdd.execution by any chain of imports, counting that
   importing a module first runs its packages' __init__.py (the trace executor owns isolation).
"""

from __future__ import annotations

import ast
from importlib.util import resolve_name
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("testhelix", "autosaddler", "gtdd")
# package -> the project packages it may import (besides itself)
MAY_IMPORT = {"testhelix": set(), "autosaddler": {"testhelix"}, "gtdd": {"testhelix"}}
DOMAINS = "gtdd.domains"
EXECUTOR_SIDE = ("gtdd.isolation", "gtdd.execution")
SAMPLE_DOMAIN = ("sample_plugin.counter", ROOT / "tests/plugins/sample_plugin/sample_plugin/counter.py")


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def find_modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """dotted name -> (file, is a package's __init__) for every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            is_init = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return found


def imported_names(tree: ast.AST, module: str, is_init: bool) -> list[tuple[str, int]]:
    """(absolute dotted name, line) of everything the module imports, wherever in its tree."""
    anchor = module if is_init else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve_name("." * node.level + (node.module or ""), anchor) if node.level else node.module or ""
            out += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
              and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append((node.args[0].value, node.lineno))
    return out


def build_graph(sources: dict[str, tuple[str, bool]]) -> nx.DiGraph:
    """module -> project module edges from (source text, is a package) per dotted module name.
    `from a.b import c` is an edge to a.b.c when that is a module, else to a.b (c is a name in it)."""
    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(sources)
    for module, (text, is_init) in sources.items():
        for name, line in imported_names(ast.parse(text), module, is_init):
            if name in sources and name != module:
                graph.add_edge(module, name, line=line)
            elif name.rpartition(".")[0] in sources and name.rpartition(".")[0] != module:
                graph.add_edge(module, name.rpartition(".")[0], line=line)  # a name, not a module
    return graph


def project_graph(root: Path = ROOT) -> nx.DiGraph:
    sources = {name: (path.read_text(), is_init) for name, (path, is_init) in find_modules(root).items()}
    name, path = SAMPLE_DOMAIN
    if root == ROOT:  # the out-of-tree domain is held to the domains' rule
        sources[name] = (path.read_text(), False)
    return build_graph(sources)


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """One cycle (its modules in import order) per knot of modules that import each other."""
    found = []
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            found.append([a for a, _ in nx.find_cycle(graph.subgraph(component))])
    return sorted(found)


def folder_cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Cycles of the graph with every module merged into its folder (its first two name parts)."""
    folders: nx.DiGraph = nx.DiGraph()
    for a, b in graph.edges:
        fa, fb = ".".join(a.split(".")[:2]), ".".join(b.split(".")[:2])
        if fa != fb:
            folders.add_edge(fa, fb)
    return cycles(folders)


def against_the_direction(graph: nx.DiGraph) -> list[str]:
    out = []
    for a, b, data in graph.edges(data=True):
        pa, pb = a.split(".")[0], b.split(".")[0]
        if pa in MAY_IMPORT and pb in MAY_IMPORT and pa != pb and pb not in MAY_IMPORT[pa]:
            out.append(f"{a}:{data['line']} imports {b}")
    return sorted(out)


def domains_reaching_the_executor(graph: nx.DiGraph) -> list[str]:
    """Domain modules from which an import chain reaches the isolation or the executor, with the chain."""
    runtime = graph.copy()
    for module in list(runtime):  # importing a.b.c first runs a/__init__.py and a/b/__init__.py
        parent = module.rpartition(".")[0]
        while parent:
            if parent in runtime:
                runtime.add_edge(module, parent)
            parent = parent.rpartition(".")[0]
    out = []
    for module in sorted(m for m in runtime if within(m, DOMAINS) or m == SAMPLE_DOMAIN[0]):
        paths = nx.single_source_shortest_path(runtime, module)
        reached = sorted((len(path), path) for target, path in paths.items()
                         if any(within(target, t) for t in EXECUTOR_SIDE))
        if reached:
            out.append(" -> ".join(reached[0][1]))
    return out


def test_the_project_graph_is_read_whole():
    graph = project_graph()
    # spot checks that the reader sees each import kind in the real code
    assert graph.has_edge("gtdd.execution", "gtdd.isolation")  # module level
    assert graph.has_edge("gtdd.policies", "gtdd.isolation")  # inside a function
    assert graph.has_edge("gtdd.isolation.runner", "testhelix.execution.sandbox")  # under TYPE_CHECKING
    assert len(graph) > 200 and graph.number_of_edges() > 500


def test_no_import_cycle_among_modules_or_folders():
    graph = project_graph()
    assert cycles(graph) == [] and folder_cycles(graph) == []


def test_the_package_direction_holds():
    assert against_the_direction(project_graph()) == []


def test_domains_describe_behaviour_only():
    assert domains_reaching_the_executor(project_graph()) == []


def test_the_checks_fail_on_planted_violations():
    planted: nx.DiGraph = nx.DiGraph()
    planted.add_edge("gtdd.loop", "gtdd.feedback", line=3)
    planted.add_edge("gtdd.feedback", "gtdd.execution", line=7)
    planted.add_edge("gtdd.execution", "gtdd.loop", line=9)  # a cycle of three
    planted.add_edge("testhelix.store", "autosaddler.dag", line=4)  # the shared base imports a caller
    planted.add_edge("autosaddler.dag", "gtdd.report", line=5)  # two callers tied together
    planted.add_edge("gtdd.domains.toy", "gtdd.domains.toy.helper", line=1)
    planted.add_edge("gtdd.domains.toy.helper", "gtdd.sim", line=2)
    planted.add_edge("gtdd.sim", "gtdd.isolation.runner", line=8)  # a domain reaching isolation indirectly
    planted.add_edge("gtdd.isolation.runner", "gtdd.domains.base", line=6)
    [cycle] = cycles(planted)
    assert sorted(cycle) == ["gtdd.execution", "gtdd.feedback", "gtdd.loop"]
    # the isolation using a domain's value types closes a loop of folders, though no module imports itself
    assert sorted(sorted(c) for c in folder_cycles(planted)) == [["gtdd.domains", "gtdd.isolation", "gtdd.sim"],
                                                                  ["gtdd.execution", "gtdd.feedback", "gtdd.loop"]]
    assert against_the_direction(planted) == ["autosaddler.dag:5 imports gtdd.report",
                                              "testhelix.store:4 imports autosaddler.dag"]
    assert domains_reaching_the_executor(planted) == [
        "gtdd.domains.toy -> gtdd.domains.toy.helper -> gtdd.sim -> gtdd.isolation.runner",
        "gtdd.domains.toy.helper -> gtdd.sim -> gtdd.isolation.runner"]


def test_the_reader_finds_every_import_kind_in_planted_sources():
    sources = {
        "gtdd": ("", True),
        "gtdd.domains": ("", True),
        "gtdd.domains.toy": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..isolation import runner\n",
                             False),
        "gtdd.isolation": ("", True),
        "gtdd.isolation.runner": ("def f():\n    from gtdd.domains import toy\n", False),
        "testhelix": ("import importlib\nimportlib.import_module('gtdd.domains')\n", True),
    }
    graph = build_graph(sources)
    assert {(a, b) for a, b in graph.edges} == {("gtdd.domains.toy", "gtdd.isolation.runner"),
                                                ("gtdd.isolation.runner", "gtdd.domains.toy"),
                                                ("testhelix", "gtdd.domains")}
    assert cycles(graph) and against_the_direction(graph) == ["testhelix:2 imports gtdd.domains"]
    assert domains_reaching_the_executor(graph) == ["gtdd.domains.toy -> gtdd.isolation.runner"]

"""The layer map of ARCHITECTURE.md, enforced over the folder tree and the import graph.

The layers and the folders of each are declared once, in the drawing of ARCHITECTURE.md's "Layers"
section; this test reads them from there. The tree must agree with the drawing: every folder of
testhelix/ is named by exactly one layer, every named folder exists, and no module sits loose at
the top of testhelix/ (only __init__.py and __main__.py may). Over the import graph (module-level,
function-level and type-checking imports alike): no import circle in testhelix, autosaddler or gtdd,
no import from a lower layer of testhelix up to a higher one, and testhelix imports neither of its
callers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("testhelix", "autosaddler", "gtdd")
TOP_LEVEL_FILES = ("__init__.py", "__main__.py")   # the only modules allowed outside a layer folder
PATH_MENTION = re.compile(r"(?<![\w/.-])((?:testhelix|autosaddler|gtdd)/[\w/.-]*\w)")


def declared_layers(architecture: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(layer, its folders) lowest first, from the drawing in the "## Layers" section: a layer's line
    starts with its name at column 2 followed by its folders (`name/`); a line indented to that
    folder column continues the layer's folder list."""
    section = architecture.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    drawing = section.split("```", 2)[1]
    layers: list[tuple[str, list[str]]] = []
    column = 0   # where the folder list of the last layer line starts
    for line in drawing.splitlines():
        words = line.split()
        if line.startswith("  ") and not line.startswith("   ") and len(words) > 1 and words[1].endswith("/"):
            column = line.index(words[1], len(words[0]) + 2)
            layers.append((words[0], []))
            words = words[1:]
        elif not (layers and words and line[:column].strip() == "" and line[column:column + 1].strip()):
            continue
        for word in words:
            if not word.endswith("/"):
                break
            layers[-1][1].append(word.rstrip("/"))
    return tuple((name, tuple(folders)) for name, folders in reversed(layers))


LAYERS = declared_layers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))


def layer_folders(root: Path) -> list[str]:
    """The folders directly under testhelix/ that hold Python modules."""
    return sorted(p.name for p in (root / "testhelix").iterdir()
                  if p.is_dir() and p.name != "__pycache__" and any(p.rglob("*.py")))


def tree_disagreements(root: Path, layers: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    """Where the folder tree and the declared layers disagree, one line each."""
    declared = [folder for _, folders in layers for folder in folders]
    found = layer_folders(root)
    out = [f"testhelix/{f}/ is named by more than one layer" for f in sorted(set(declared)) if declared.count(f) > 1]
    out += [f"testhelix/{f}/ has no layer in ARCHITECTURE.md" for f in found if f not in declared]
    out += [f"testhelix/{f}/ is a declared layer folder that does not exist" for f in declared if f not in found]
    out += [f"testhelix/{p.name} sits outside every layer folder" for p in sorted((root / "testhelix").glob("*.py"))
            if p.name not in TOP_LEVEL_FILES]
    return out


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
    """The index in LAYERS of the layer whose folder holds `module`; the package itself (its
    __init__.py) is the foundation's; None outside testhelix or outside every declared folder."""
    parts = module.split(".")
    if parts[0] != "testhelix":
        return None
    if len(parts) == 1:
        return 0
    return next((index for index, (_, folders) in enumerate(LAYERS) if parts[1] in folders), None)


def upward_imports(graph: nx.DiGraph) -> list[str]:
    out = []
    for a, b, data in graph.edges(data=True):
        la, lb = layer_of(a), layer_of(b)
        if la is not None and lb is not None and lb > la:
            out.append(f"{a}:{data['line']} ({LAYERS[la][0]}) imports {b} ({LAYERS[lb][0]})")
    return sorted(out)


def circles(graph: nx.DiGraph) -> list[set[str]]:
    return [c for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_the_drawing_declares_the_layers_in_order():
    assert [name for name, _ in LAYERS][:2] == ["foundation", "format"] and LAYERS[-1][0] == "interface"
    assert all(folders for _, folders in LAYERS)


def test_the_folder_tree_and_the_drawing_agree():
    assert tree_disagreements(ROOT, LAYERS) == []


def test_every_testhelix_module_has_a_layer():
    assert [m for m in modules(ROOT) if m.startswith("testhelix") and layer_of(m) is None] == []


def test_every_path_architecture_names_exists():
    """The map's paths (`testhelix/...`, `autosaddler/...`, `gtdd/...`) are files or folders of the tree."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert sorted({p for p in PATH_MENTION.findall(text) if not (ROOT / p).exists()}) == []


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
    for folder in ("core", "helix"):
        (tmp_path / "testhelix" / folder).mkdir()
        (tmp_path / "testhelix" / folder / "__init__.py").write_text("")
    (tmp_path / "testhelix" / "core" / "errors.py").write_text("def f():\n    from testhelix.helix.pipeline import run\n")
    (tmp_path / "testhelix" / "helix" / "pipeline.py").write_text("from ..core.errors import f\nrun = f\n")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == ["testhelix.core.errors:2 (foundation) imports testhelix.helix.pipeline (pipeline)"]
    assert circles(graph) == [{"testhelix.core.errors", "testhelix.helix.pipeline"}]


def test_a_folder_without_a_layer_and_a_loose_module_are_found(tmp_path):
    """A new folder the drawing does not name, a named folder that is gone, one named twice, and a
    module at the top of testhelix/ each fail the tree check."""
    for folder in ("core", "helix", "newthing"):
        (tmp_path / "testhelix" / folder).mkdir(parents=True)
        (tmp_path / "testhelix" / folder / "__init__.py").write_text("")
    (tmp_path / "testhelix" / "__init__.py").write_text("")
    (tmp_path / "testhelix" / "loose.py").write_text("")
    layers = (("foundation", ("core",)), ("pipeline", ("helix", "gone")), ("interface", ("helix",)))
    assert tree_disagreements(tmp_path, layers) == [
        "testhelix/helix/ is named by more than one layer",
        "testhelix/newthing/ has no layer in ARCHITECTURE.md",
        "testhelix/gone/ is a declared layer folder that does not exist",
        "testhelix/loose.py sits outside every layer folder",
    ]


def test_the_drawing_is_read_as_written():
    """Layer lines, folder lists continued on the next line, and description lines that are not folders."""
    architecture = """# A
## Layers
```
  callers     x                      not a layer
 ───────────────
  interface   commands/ view/        command lines, and a description
                                     that goes on: not/ a folder
      ▲
  tools       pack/ importers/       packs and
              conformance/           checks
      ▲
  foundation  core/                  the base
```
## Next
"""
    assert declared_layers(architecture) == (("foundation", ("core",)),
                                             ("tools", ("pack", "importers", "conformance")),
                                             ("interface", ("commands", "view")))

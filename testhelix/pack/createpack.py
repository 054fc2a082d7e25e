"""Drive `pack create` over many task sources: the sandboxed verifier, task-source folders, a
resumable build (one journal entry per finished task, so an interrupted build continues where it
stopped) and the funnel (seed 000's Table 5, per stage: how many tasks are still in)."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.core.readers import read_toml
from testhelix.pack.create import (
    SEED_PANEL,
    STAGES,
    STRICT_STAGE,
    PanelShape,
    RunResult,
    TaskOutcome,
    TaskSource,
    Verifier,
    build_panel,
)
from testhelix.pack.generators import CandidateGenerator
from testhelix.pack.panelgate import Diversity
from testhelix.tasks.model import CONTEXTS, DIFFICULTIES, ID_PATTERN

SOURCE_FILE = "create.toml"
MAX_REFERENCE_BYTES = 256 * 1024  # a task's reference: one module or a few (the katas' are under 10 kB)
PACK_INDEX = "pack.json"
LABEL_WALL_S = 10.0   # a candidate that has not finished the checks by then gets no label


def executor_verifier(executor: object, wall_s: float = LABEL_WALL_S) -> Verifier:
    """The trusted tests on candidate programs through the project's sandboxed executor."""
    from testhelix.execution.outcome import Limits

    def run(tests: Path, programs: Sequence[Path], traceback: str) -> list[RunResult]:
        limits = Limits(wall_s=wall_s, cpu_s=int(wall_s) + 5, traceback=traceback)
        outcomes = executor.run_many([(tests, p) for p in programs], limits)  # type: ignore[attr-defined]
        return [RunResult(o.status, o.reason, o.output) for o in outcomes]

    return run


def load_source(folder: Path) -> TaskSource:
    """A task source folder: create.toml, spec.md, reference/, tests/ and optionally initial/."""
    import re

    folder = Path(folder)
    path = folder / SOURCE_FILE
    if not path.is_file():
        raise UserError(f"{path}: missing (a task source needs create.toml)")
    doc = read_toml(path)  # bounded: size, nesting, integer digits (testhelix/core/readers.py)
    for key in ("id", "title", "target", "context", "difficulty", "source"):
        if key in doc and not isinstance(doc[key], str):
            raise UserError(f"{path}: {key} = {str(doc[key])[:40]} is a {type(doc[key]).__name__}; write it as a "
                            f'string ({key} = "...")')
    task_id = str(doc.get("id", folder.name))
    if not re.match(ID_PATTERN, task_id):
        raise UserError(f"{path}: id {task_id!r} is not a name ([A-Za-z0-9_.-]+)")
    for key, allowed in (("context", CONTEXTS), ("difficulty", DIFFICULTIES)):
        if key in doc and doc[key] not in allowed:
            raise UserError(f"{path}: {key} {doc[key]!r} is not one of {', '.join(allowed)}")
    reference, tests = folder / "reference", folder / "tests"
    for need in (reference, tests, folder / "spec.md"):
        if not need.exists():
            raise UserError(f"{need}: missing (a task source needs spec.md, reference/ and tests/)")
    if not any(tests.glob("test_*.py")):
        raise UserError(f"{tests}: holds no test_*.py file")
    py_files = sorted(p.relative_to(reference).as_posix() for p in reference.rglob("*.py") if "__pycache__" not in p.parts)
    size = sum((reference / f).stat().st_size for f in py_files)
    if size > MAX_REFERENCE_BYTES:
        raise UserError(f"{reference}: {size} bytes of Python, above the {MAX_REFERENCE_BYTES} bytes a reference may "
                        "have (every candidate is a rewrite of it, analysed and tested many times); give the module "
                        "the task is about, not a whole code base")
    target = str(doc.get("target") or (py_files[0] if len(py_files) == 1 else ""))
    if target not in py_files:
        raise UserError(f"{path}: target {target!r}: name the reference's .py file the generators change "
                        f"(one of {', '.join(py_files) or 'none'})")
    packages = doc.get("packages") or sorted({Path(f).parts[0].removesuffix(".py") for f in py_files})
    initial = folder / "initial"
    return TaskSource(id=task_id, title=str(doc.get("title", task_id)), spec=(folder / "spec.md").read_text(encoding="utf-8"),
                      reference=reference, tests=tests, target=target, packages=tuple(packages),
                      context=str(doc.get("context", "general")), difficulty=str(doc.get("difficulty", "medium")),
                      source=str(doc.get("source", "created")), initial=initial if initial.is_dir() else None)


def find_sources(paths: Sequence[Path]) -> list[TaskSource]:
    """Each path is a task source folder or a folder of them."""
    out = []
    for path in paths:
        if (Path(path) / SOURCE_FILE).is_file():
            out.append(load_source(path))
            continue
        found = sorted(p.parent for p in Path(path).glob(f"*/{SOURCE_FILE}"))
        if not found:
            raise UserError(f"{path}: no {SOURCE_FILE} here or in its sub-folders")
        out += [load_source(p) for p in found]
    ids = [s.id for s in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"task ids used twice: {', '.join(dupes)}")
    return out


def state_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.create-state"


def funnel(total: int, outcomes: Sequence[TaskOutcome], refused: int = 0,
           stages: Sequence[str] = STAGES) -> list[tuple[str, int]]:
    """Tasks remaining after each stage, from the sources given (`refused`: not convertible at all)."""
    rows = [("source problems", total), ("converted to a task source", total - refused)]
    remaining = total - refused
    for stage in stages:
        remaining -= sum(1 for o in outcomes if o.stage == stage)
        rows.append((f"after {stage}", remaining))
    rows.append(("admitted", sum(1 for o in outcomes if o.stage is None)))
    survived = sum(1 for o in outcomes if o.stage is None and o.survivors)
    if survived:
        rows.append(("admitted with a surviving faulty candidate (labelled valid; weak tests?)", survived))
    return rows


def create_pack(sources: Sequence[TaskSource], out: Path, generator: CandidateGenerator, verifier: Verifier, *,
                budget: int, criterion: Diversity, seed: int, with_bank: bool, refused: Sequence[tuple[str, str]] = (),
                source_note: str = "", tasks_at_once: int = 2, shape: PanelShape = SEED_PANEL,
                log: Callable[[str], None] = print) -> dict:
    """Build every source into `out` (resumable: finished tasks are kept in the journal beside it);
    returns the pack index written to out/pack.json."""
    from testhelix.pack.taskwriter import write_task

    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (state_dir(out).is_dir() or (out / PACK_INDEX).is_file()):
        raise UserError(f"{out}: exists and is not a pack written by `testhelix pack create`; refusing to write into it")
    journal = state_dir(out)
    journal.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / PACK_INDEX).unlink(missing_ok=True)
    done = 0
    lock = threading.Lock()

    def one(src: TaskSource) -> TaskOutcome:
        nonlocal done
        entry = journal / f"{src.id}.json"
        if entry.is_file():
            data = json.loads(entry.read_text())
            if data["stage"] is not None or (out / src.id).is_dir():
                return TaskOutcome(data["task"], data["stage"], data["reason"], data["outputs"], data["gated"],
                                   data["labels"], tuple(data.get("survivors", ())))
        shutil.rmtree(out / src.id, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="pack-create-") as tmp:
            result, panel = build_panel(src, generator, verifier, Path(tmp), budget, criterion, seed, shape)
            if panel is not None:
                staging = out / f".{src.id}.writing"
                shutil.rmtree(staging, ignore_errors=True)
                write_task(src, panel, staging, with_bank, result.outputs, budget)
                staging.rename(out / src.id)
        entry.write_text(json.dumps(result.to_json(), sort_keys=True) + "\n")
        verdict = "admitted" if result.stage is None else f"excluded at {result.stage}: {result.reason}"
        if result.survivors and result.stage is None:
            verdict += (f"; WARNING: {', '.join(result.survivors)} generated as faulty passed every check "
                        f"(labelled valid: the task's tests may be weak; --strict excludes such tasks)")
        with lock:
            done += 1
            log(f"[{done}/{len(sources)}] {src.id}: {verdict} ({result.outputs} outputs)")
        return result

    # Tasks are independent (own seed, own budget, own scratch): building two at once keeps both
    # executor workers busy while one task waits on a single run; results do not depend on it.
    with ThreadPoolExecutor(max(1, tasks_at_once)) as pool:
        outcomes = list(pool.map(one, sources))
    admitted = sorted(o.task for o in outcomes if o.stage is None)
    contexts: dict[str, int] = {}
    for src in sources:
        if src.id in admitted:
            contexts[src.context] = contexts.get(src.context, 0) + 1
    index = {"builder": "testhelix pack create", "generator": generator.name, "seed": seed, "budget": budget,
             "diversity": {"min_pair": criterion.min_pair, "min_mean": criterion.min_mean}, "source": source_note,
             "tasks": admitted, "contexts": dict(sorted(contexts.items())),
             "panel": {"alternatives": shape.alternatives, "invalids": shape.invalids, "strict": shape.strict},
             "surviving_faulty": {o.task: list(o.survivors) for o in outcomes if o.survivors},
             "funnel": [{"stage": s, "tasks": n} for s, n in funnel(len(sources) + len(refused), outcomes, len(refused),
                                                                  (*STAGES, STRICT_STAGE) if shape.strict else STAGES)],
             "excluded": [{"task": o.task, "stage": o.stage, "reason": o.reason} for o in outcomes if o.stage is not None]
             + [{"task": t, "stage": "conversion", "reason": r} for t, r in refused],
             "outputs": {o.task: o.outputs for o in outcomes}}
    (out / PACK_INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return index

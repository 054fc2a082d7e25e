"""Harbor task folders into our layout (tasks/README.md, "Importing Harbor tasks").

A Harbor task: `instruction.md`, `task.toml`, `environment/` (the working files; a Dockerfile there
describes the container and is kept hidden, never built), `solution/solve.sh` (the oracle) and
`tests/` (`test.sh`, the verifier entry, plus test files). The reference program is what solve.sh
leaves in `/app` when it runs -- in the sandbox, on a private copy of environment/, under its own
shebang interpreter, with the task's solution/ at `/solution` (read-only).

Metadata is kept, not dropped: a category that is one of our contexts becomes the context; any
other category is refused unless the caller names the context to use (`context=`), and is kept
verbatim as `metadata.category`; tags, resource limits, timeouts and the remaining Harbor fields
(in `metadata.upstream`) go into task.toml. `tests/test.sh` stays the verifier entry: the trusted
suite's `run_tests.sh` runs it with `/app` mapped to the workspace and `/tests` to the suite folder.
At import the trusted tests must fail on the initial program and pass on the reference.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.core.readers import read_toml
from testhelix.importers.common import (
    SOLVE_SH,
    ImportResult,
    Progress,
    Refused,
    TrustedRunner,
    check_id,
    collect_results,
    copy_program,
    describe,
    import_one,
    importable_modules,
)
from testhelix.importers.script_sandbox import run_script, shebang
from testhelix.tasks.model import (
    CONTEXTS,
    DIFFICULTIES,
    Agent,
    Artifact,
    CandidateEntry,
    Environment,
    Metadata,
    PanelManifest,
    TaskToml,
    Verifier,
    write_manifest,
    write_task_toml,
)

SOURCE = "harbor"
BUILD_FILES = ("Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore")
_KNOWN = {"metadata": {"difficulty", "category", "tags"},
          "agent": {"timeout_sec"}, "verifier": {"timeout_sec"},
          "environment": {"cpus", "memory_mb", "memory", "storage_mb", "storage", "requirements", "python"}}


def _is_task(folder: Path) -> bool:
    return (folder / "task.toml").is_file() and (folder / "instruction.md").is_file()


def import_harbor(source: Path, pack: Path, context: str | None = None, workers: int = 2,
                  wheels: Path | None = None, timeout_s: float = 300, progress: Progress | None = None
                  ) -> list[ImportResult]:
    """Import one Harbor task folder, or every task folder directly inside `source`."""
    source = Path(source)
    if not source.is_dir():
        raise UserError(f"{source}: Harbor source folder does not exist")
    if context is not None and context not in CONTEXTS:
        raise UserError(f"--context {context!r} is not one of {', '.join(CONTEXTS)}")
    folders = [source] if _is_task(source) else sorted(p for p in source.iterdir() if _is_task(p))
    if not folders:
        raise UserError(f"{source}: no Harbor task folder (with task.toml and instruction.md) found")
    Path(pack).mkdir(parents=True, exist_ok=True)
    runner = TrustedRunner(workers, wheels)
    return collect_results((_import_folder(folder, Path(pack), context, runner, timeout_s) for folder in folders),
                           runner, progress)


def _import_folder(folder: Path, pack: Path, context: str | None, runner: TrustedRunner,
                   timeout_s: float) -> ImportResult:
    try:
        task_id = check_id(folder.name, "task folder name")
    except Refused as err:
        return ImportResult(folder.name, "refused", str(err))
    return import_one(pack, task_id, SOURCE, lambda stage: _build(folder, stage, task_id, context, runner, timeout_s))


def _size_mb(value: object, key: str) -> int | None:
    """Harbor sizes: an integer of MB, or a string such as "2G" / "512M"."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(value), re.I)
    if not m:
        raise Refused(f"task.toml: environment.{key} {value!r} is not a size")
    scale = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def _upstream(meta: dict) -> dict:
    """Harbor fields we have no column for, kept verbatim (tables and odd values as JSON text)."""
    out: dict = {}
    for table, values in meta.items():
        if not isinstance(values, dict):
            out[table] = values if isinstance(values, (str, int, float, bool)) else json.dumps(values)
            continue
        for key, value in values.items():
            if key in _KNOWN.get(table, ()):
                continue
            scalar = isinstance(value, (str, int, float, bool)) or (
                isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value))
            out[f"{table}.{key}"] = value if scalar else json.dumps(value, sort_keys=True, default=str)
    return out


def _task_toml(src: Path, task_id: str, context: str | None, program: Path) -> TaskToml:
    try:
        meta = read_toml(src / "task.toml")
    except UserError as err:
        raise Refused(err.message) from None
    m, env = meta.get("metadata", {}), meta.get("environment", {})
    for table, value in (("metadata", m), ("environment", env), ("verifier", meta.get("verifier", {}))):
        if not isinstance(value, dict):
            raise Refused(f"task.toml: [{table}] must be a table, got {type(value).__name__}")
    category = m.get("category")
    if category in CONTEXTS:
        chosen = category
    elif context is not None:
        chosen = context
    else:
        raise Refused(f"category {category!r} is not one of our contexts ({', '.join(CONTEXTS)}); "
                      "name the context to use with --context")
    difficulty = m.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        raise Refused(f"difficulty {difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
    tags = m.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise Refused(f"metadata.tags must be a list of strings (got {tags!r})")
    try:
        return TaskToml(
            metadata=Metadata(id=task_id, source=SOURCE, context=chosen, difficulty=difficulty,
                              category=category if isinstance(category, str) else None, tags=tags,
                              upstream=_upstream(meta) or None),
            agent=Agent(timeout_sec=meta.get("agent", {}).get("timeout_sec", 600)),
            verifier=Verifier(timeout_sec=meta.get("verifier", {}).get("timeout_sec", 60),
                              entry="test.sh" if (src / "tests" / "test.sh").is_file() else None),
            environment=Environment(python=env.get("python", ">=3.11"), packages=importable_modules(program),
                                    requirements=env.get("requirements"), cpus=env.get("cpus"),
                                    memory_mb=_size_mb(env.get("memory_mb", env.get("memory")), "memory"),
                                    storage_mb=_size_mb(env.get("storage_mb", env.get("storage")), "storage")))
    except ValueError as err:  # pydantic's ValidationError is a ValueError
        raise Refused(f"task.toml: {str(err).splitlines()[0]} -- {str(err).splitlines()[1:3]}") from None


def _verifier_entry(test_sh: Path) -> str:
    """run_tests.sh that honours Harbor's test.sh, with Harbor's absolute paths mapped: /app -> the
    workspace, /tests -> suite/, /logs -> a scratch folder (the mapped copy is harbor_test.sh)."""
    interpreter = " ".join(shebang(test_sh))
    return ("#!/bin/sh\n# Harbor verifier entry tests/test.sh, paths mapped into the workspace.\n"
            'HARBOR_APP="$(pwd)"; HARBOR_TESTS="$(pwd)/suite"; HARBOR_LOGS="${TMPDIR:-/tmp}/harbor-logs"\n'
            'export HARBOR_APP HARBOR_TESTS HARBOR_LOGS\nmkdir -p "$HARBOR_LOGS/verifier"\n'
            f"exec {interpreter} suite/harbor_test.sh\n")


def _map_paths(script: str) -> str:
    for path, var in (("/app", "HARBOR_APP"), ("/tests", "HARBOR_TESTS"), ("/logs", "HARBOR_LOGS")):
        script = re.sub(rf"(?<![\w./-]){path}(?=/|\s|$|[\"';)])", "${" + var + "}", script)
    return script


def _build(src: Path, stage: Path, task_id: str, context: str | None, runner: TrustedRunner, timeout_s: float) -> None:
    for need in ("instruction.md", "task.toml", "environment", "solution/solve.sh"):
        if not (src / need).exists():
            raise Refused(f"not a Harbor task folder (missing {need})")
    tests = src / "tests"
    if not tests.is_dir() or not (any(tests.rglob("test_*.py")) or (tests / "test.sh").is_file()):
        raise Refused("tests/ has neither test.sh nor test_*.py files: no verifier")
    copy_program(src / "environment", stage / "environment", drop=BUILD_FILES)
    doc = _task_toml(src, task_id, context, stage / "environment")
    hidden = stage / "solution" / "harbor"
    hidden.mkdir(parents=True)
    for name in BUILD_FILES:
        if (src / "environment" / name).is_file():
            shutil.copy2(src / "environment" / name, hidden / name)  # kept for reference; never built
    shutil.copytree(src / "solution", hidden / "solution", symlinks=True)
    with tempfile.TemporaryDirectory(prefix="harbor-solve-") as tmp:
        work, solution = Path(tmp) / "app", Path(tmp) / "solution"
        copy_program(stage / "environment", work)
        shutil.copytree(src / "solution", solution, symlinks=False)
        try:
            run = run_script(solution / "solve.sh", "/solution/solve.sh", work, {"/solution": solution}, timeout_s)
        except UserError as err:
            raise Refused(str(err)) from None
        if run.timed_out:
            raise Refused(f"solution/solve.sh timed out after {timeout_s:g}s in the sandbox")
        if run.exit_code != 0:
            raise Refused(f"solution/solve.sh failed in the sandbox (exit {run.exit_code}): "
                          f"{' | '.join(run.output.strip().splitlines()[-3:])[-300:]}")
        copy_program(work, stage / "solution" / "program")
    if tree_sha256(stage / "solution" / "program") == tree_sha256(stage / "environment"):
        raise Refused("solution/solve.sh left the program unchanged: the reference would equal the initial program")
    (stage / "solution" / "solve.sh").write_text(SOLVE_SH)
    shutil.copytree(tests, stage / "tests", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "run_tests.sh", "harbor_test.sh"))
    if (tests / "test.sh").is_file():
        (stage / "tests" / "harbor_test.sh").write_text(_map_paths((tests / "test.sh").read_text()))
        (stage / "tests" / "run_tests.sh").write_text(_verifier_entry(tests / "test.sh"))
    shutil.copy2(src / "instruction.md", stage / "instruction.md")
    write_task_toml(stage / "task.toml", doc)
    candidates = [CandidateEntry(id="reference", label="valid", role="reference",
                                 provenance="Harbor solution/solve.sh run in the sandbox on environment/",
                                 artifact="solution/program", sha256=tree_sha256(stage / "solution" / "program"))]
    write_manifest(stage / "panel" / "manifest.json",
                   PanelManifest(task=task_id, candidates=candidates,
                                 initial=Artifact(artifact="environment", sha256=tree_sha256(stage / "environment"))))
    initial, reference = runner.run(stage, doc, [stage / "environment", stage / "solution" / "program"])
    if initial.status != "fail":
        raise Refused(f"the verifier must FAIL on the initial program, got {describe(initial)}")
    if reference.status != "pass":
        raise Refused(f"the verifier must PASS on the reference, got {describe(reference)}")

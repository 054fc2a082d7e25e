"""`testhelix pack verify`: re-check every label and digest of a built task pack.

For each task folder (a folder with task.toml): task.toml and panel/manifest.json parse, every
artifact exists and its tree digest matches the manifest, there is exactly one reference, the
initial program FAILS the trusted tests, the reference and every valid candidate PASS them, and
every invalid candidate FAILS them (a clean failure: a timeout or a run where no test ran is an
error, not a rejection). A simulation bank's labels are measured again from the task folder -- its
tests on the initial program and on the bank's own repairs only -- and must equal bank/bank.json.
Identical (tests, program) pairs across tasks run once: once the digests are checked, the digest
pair identifies the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.execution.workspace import ENTRY_SCRIPT
from testhelix.pack.runner import Job, SuiteRun, run_each, run_jobs
from testhelix.tasks.model import read_manifest, read_task_toml

Expect = Literal["pass", "fail"]


@dataclass(frozen=True)
class Check:
    """One expected run: the task's trusted tests on one of its programs."""

    task: str
    what: str        # "initial" or "candidate <id>"
    program: Path
    expect: Expect
    key: str         # tests digest + program digest


@dataclass
class TaskInfo:
    id: str
    context: str
    problems: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    timeout: float = 60.0
    requirements: tuple[str, ...] = ()  # pinned packages: its runs use the task's environment


@dataclass(frozen=True)
class VerifyReport:
    tasks: int
    contexts: dict[str, int]
    failures: tuple[tuple[str, str], ...]  # (task id, problem)
    runs: int
    wall_s: float
    runner: str

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {"ok": self.ok, "tasks": self.tasks, "contexts": self.contexts, "runs": self.runs,
                "wall_s": round(self.wall_s, 1), "runner": self.runner,
                "failures": [{"task": t, "problem": p} for t, p in self.failures]}


if TYPE_CHECKING:
    from testhelix.run.setup import ExecutionChoice


def _inspect(task_dir: Path) -> TaskInfo:
    """Parse and digest-check one task folder; list the runs it needs."""
    info = TaskInfo(task_dir.name, "?")
    try:
        doc = read_task_toml(task_dir / "task.toml")
        info.id, info.context = doc.metadata.id, doc.metadata.context
        info.timeout, info.requirements = float(doc.verifier.timeout_sec), tuple(doc.environment.requirements or ())
    except UserError as err:
        info.problems.append(f"task.toml: {err}")
        return info
    if not (task_dir / "panel" / "manifest.json").is_file():
        info.problems.append("panel/manifest.json is missing")
        return info
    try:
        parsed = read_manifest(task_dir / "panel" / "manifest.json")
    except UserError as err:
        info.problems.append(f"panel/manifest.json is malformed: {err}")
        return info
    manifest = parsed.model_dump()
    candidates, initial = manifest["candidates"], manifest["initial"]
    if info.id != task_dir.name or manifest.get("task") != info.id:
        info.problems.append(f"task ids disagree: folder {task_dir.name!r}, task.toml {info.id!r}, "
                             f"manifest {manifest.get('task')!r}")
    tests_dir = task_dir / "tests"
    # Test files may sit at their repository paths (imported tasks); an entry script selects them.
    if not any(tests_dir.rglob("test_*.py")) and not any(tests_dir.rglob("*_test.py")):
        info.problems.append("tests/ holds no test_*.py file")
        return info
    tests_digest = tree_sha256(tests_dir)
    roles = [c.get("role") for c in candidates]
    if roles.count("reference") != 1:
        info.problems.append(f"the panel needs exactly one reference, found {roles.count('reference')}")
    entries: list[tuple[str, dict, Expect]] = [("initial", initial, "fail")]
    for cand in candidates:
        label = cand.get("label")
        if label not in ("valid", "invalid"):
            info.problems.append(f"candidate {cand.get('id')}: label {label!r} is not valid/invalid")
            continue
        entries.append((f"candidate {cand.get('id')}", cand, "pass" if label == "valid" else "fail"))
    for what, entry, expect in entries:
        artifact = task_dir / str(entry.get("artifact", ""))
        if not entry.get("artifact") or not artifact.is_dir() or task_dir.resolve() not in artifact.resolve().parents:
            info.problems.append(f"{what}: artifact {entry.get('artifact')!r} is missing or outside the task folder")
            continue
        digest = tree_sha256(artifact)
        if digest != entry.get("sha256"):
            info.problems.append(f"{what}: artifact {entry['artifact']} does not match its digest in the manifest "
                                 f"(manifest {str(entry.get('sha256'))[:12]}, found {digest[:12]})")
            continue
        info.checks.append(Check(info.id, what, artifact, expect, f"{tests_digest}:{digest}"))
    return info


def _run_with_executor(jobs: list[Job], workers: int, envs: dict[str, tuple[str, ...]] | None = None,
                       execution: ExecutionChoice | None = None) -> dict[str, SuiteRun]:
    """The harness executor (fast path). Only pass/fail/error and the reason come back. `envs`: job
    key -> pinned requirements; such jobs run in that task environment's pool."""
    from testhelix.execution.environments import environment_executor
    from testhelix.execution.outcome import Limits
    from testhelix.prism.evaluation import PANEL_TRACEBACK
    from testhelix.run.setup import ExecutionChoice

    envs = envs or {}
    executor = (execution or ExecutionChoice()).create_executor(workers=workers)
    try:
        runs: dict[str, SuiteRun] = {}
        for timeout, reqs in sorted({(j.timeout, envs.get(j.key, ())) for j in jobs}):
            batch = [j for j in jobs if j.timeout == timeout and envs.get(j.key, ()) == reqs]
            limits = Limits(wall_s=timeout, traceback=PANEL_TRACEBACK)
            pool = environment_executor(executor, reqs, where="pack verify") if reqs else executor
            outcomes = pool.run_many([(j.suite, j.program) for j in batch], limits)
            for job, outcome in zip(batch, outcomes):
                runs[job.key] = SuiteRun(outcome.status, outcome.reason, {}, outcome.duration_s)
        return runs
    finally:
        executor.close()


def executor_available() -> bool:
    try:
        from testhelix.execution.seam import create_executor  # noqa: F401
    except ImportError:
        return False
    return True


def verify_pack(pack: Path, workers: int = 2, runner: str = "auto", log: Callable[[str], None] = lambda s: None,
                execution: ExecutionChoice | None = None) -> VerifyReport:
    """`execution`: the executor and sandbox chosen (`--executor`, `--sandbox`); None: the defaults."""
    start = time.monotonic()
    pack = Path(pack)
    if not pack.is_dir():
        raise UserError(f"{pack}: task pack folder does not exist")
    task_dirs = sorted(p.parent for p in pack.glob("*/task.toml"))
    if not task_dirs:
        raise UserError(f"{pack}: no task folders (with task.toml) found")
    if runner == "auto":
        runner = "executor" if executor_available() else "subprocess"
    infos = [_inspect(d) for d in task_dirs]
    if runner != "executor":  # plain pytest runs neither an entry script nor a task environment
        for d, info in zip(task_dirs, infos):
            if info.checks and (info.requirements or (d / "tests" / ENTRY_SCRIPT).is_file()):
                info.problems.append(f"needs the executor runner (tests/{ENTRY_SCRIPT} or [environment] requirements)")
                info.checks = []
    # The environment is part of a run's identity: the same trees may behave differently under it.
    for info in infos:
        if info.requirements:
            info.checks = [replace(c, key=f"{c.key}:env={','.join(info.requirements)}") for c in info.checks]
    jobs = {c.key: Job(c.key, d / "tests", c.program, info.timeout)
            for d, info in zip(task_dirs, infos) for c in info.checks}
    envs = {c.key: info.requirements for info in infos for c in info.checks if info.requirements}
    log(f"verifying {len(infos)} tasks: {len(jobs)} distinct runs on {workers} workers ({runner})")
    if runner == "executor":
        runs = _run_with_executor(list(jobs.values()), workers, envs, execution)
    else:
        runs = run_jobs(list(jobs.values()), workers)
    failures: list[tuple[str, str]] = _bank_failures(task_dirs, workers)
    contexts: dict[str, int] = {}
    for info in infos:
        contexts[info.context] = contexts.get(info.context, 0) + 1
        failures += [(info.id, p) for p in info.problems]
        for check in info.checks:
            run = runs[check.key]
            if run.status != check.expect:
                failures.append((info.id, f"{check.what}: expected the trusted tests to {check.expect.upper()}, "
                                           f"got {run.status}{f' ({run.reason})' if run.reason else ''}"))
    return VerifyReport(len(infos), dict(sorted(contexts.items())), tuple(failures), len(jobs),
                        time.monotonic() - start, runner)


def _bank_failures(task_dirs: list[Path], workers: int) -> list[tuple[str, str]]:
    """Tasks whose bank labels differ from a fresh measurement on the initial program and the bank's
    repairs (identical bank modules and programs across tasks run once)."""
    import hashlib
    import tempfile

    from testhelix.pack import bank as banks

    failures: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bank-verify-") as tmp:
        planned = []
        jobs: dict[str, Job] = {}
        for d in task_dirs:
            path = d / "bank" / "bank.json"
            if not path.is_file():
                continue
            try:
                doc = json.loads(path.read_text())
                text = banks.bank_module(doc)
                programs = {"initial": d / "environment", **{r["id"]: d / r["artifact"] for r in doc["repairs"]}}
            except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
                failures.append((d.name, f"bank/bank.json is malformed: {err}"))
                continue
            module = Path(tmp) / hashlib.sha256(text.encode()).hexdigest()[:16] / "test_bank.py"
            if not module.exists():
                module.parent.mkdir()
                module.write_text(text)
            keys = {}
            for name, program in programs.items():
                if not program.is_dir():
                    failures.append((d.name, f"bank: program {name} ({program.relative_to(d)}) is missing"))
                    continue
                keys[name] = f"{module.parent.name}:{tree_sha256(program)}"
                jobs[keys[name]] = Job(keys[name], module, program, 60.0)
            if len(keys) == len(programs):
                planned.append((d, doc, keys))
        runs = run_jobs(list(jobs.values()), workers)
        for key, run in list(runs.items()):
            if run.reason == "timeout":      # as the builder does: one hanging test must not fail the others
                job = jobs[key]
                names = [t.name for t in banks.split_bank(job.suite).tests]
                runs[key] = run_each(job.suite, job.program, names)
    for d, doc, keys in planned:
        names = [t["name"] for t in doc["tests"]]
        maps = {name: banks.per_function(runs[key], names) for name, key in keys.items()}
        source = banks.BankSource(doc["header"], tuple(banks.BankTest(t["name"], t["source"]) for t in doc["tests"]))
        fresh = banks.bank_document(source, maps["initial"],
                                    [(banks.Repair(r["id"], d / r["artifact"]), maps[r["id"]]) for r in doc["repairs"]])
        for old, new in zip(doc["tests"], fresh["tests"]):
            if {k: old.get(k) for k in new} != new:
                failures.append((d.name, f"bank test {new['name']}: recorded label {old.get('label')!r} "
                                         f"(passes {old.get('passes_repairs')}) but measured {new['label']!r} "
                                         f"(passes {new['passes_repairs']})"))
    return failures

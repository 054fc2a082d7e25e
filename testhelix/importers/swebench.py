"""SWE-bench / SWT-bench style records into our layout (tasks/README.md, "Importing SWE-bench records").

One JSON object per line, with a local repository snapshot per record (`SNAPSHOTS/<instance_id>/`,
else `SNAPSHOTS/<owner>__<repo>/`). Initial program = the snapshot; reference = snapshot + gold
`patch`; trusted tests = exactly the `FAIL_TO_PASS` and `PASS_TO_PASS` pytest node ids (a list, or
a JSON string holding one), whose files come from applying `test_patch` to the reference, kept at
their repository paths under tests/ together with the helpers next to them.

Checked at import, per record (a refused record leaves nothing behind):
- `instance_id` is a name, never a path; `patch` is not empty and applies; `test_patch` applies;
- the snapshot is at `base_commit`: a git checkout's HEAD (and a clean work tree), or the commit
  named in a `.testhelix-commit` file at the snapshot's root; a snapshot that records neither, or a
  record without `base_commit`, is refused;
- every FAIL_TO_PASS test fails on the initial program and passes on the reference; every
  PASS_TO_PASS test passes on both; extra `candidate_patches` are judged by the same tests.
`environment_setup_commit`, `version`, `repo` and the ids go into `metadata.upstream`; every other
field we do not use is kept in `solution/upstream.json` (hidden: hints may give the fix away).
A record may pin third-party packages with `requirements` (a list, as in task.toml).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.core.readers import read_jsonl
from testhelix.importers.common import (
    SOLVE_SH,
    ImportResult,
    Progress,
    Refused,
    TrustedRunner,
    apply_patch,
    check_id,
    collect_results,
    copy_program,
    import_one,
    importable_modules,
    patched_files,
)
from testhelix.tasks.model import (
    Artifact,
    CandidateEntry,
    Environment,
    Metadata,
    PanelManifest,
    TaskToml,
    write_manifest,
    write_task_toml,
)

COMMIT_FILE = ".testhelix-commit"
SELECTION = "selection.json"
_USED = {"instance_id", "repo", "patch", "test_patch", "problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS",
         "base_commit", "environment_setup_commit", "version", "candidate_patches", "requirements", "python"}
_PYTEST_CONFIG = ("conftest.py", "pytest.ini")


def import_swebench(jsonl: Path, snapshots: Path, pack: Path, source: str = "swebench", workers: int = 2,
                    wheels: Path | None = None, progress: Progress | None = None) -> list[ImportResult]:
    jsonl, snapshots = Path(jsonl), Path(snapshots)
    if not jsonl.is_file():
        raise UserError(f"{jsonl}: file does not exist")
    if not snapshots.is_dir():
        raise UserError(f"{snapshots}: snapshots folder does not exist")
    records = list(read_jsonl(jsonl))
    if not records:
        raise UserError(f"{jsonl}: no records (the file is empty or holds only blank lines; expected one JSON "
                        "object per line)")
    Path(pack).mkdir(parents=True, exist_ok=True)
    runner = TrustedRunner(workers, wheels)
    return collect_results((_one(rec, f"{jsonl.name}:{n}", snapshots, Path(pack), source, runner)
                            for n, rec in records), runner, progress)


def _one(rec: Any, where: str, snapshots: Path, pack: Path, source: str, runner: TrustedRunner) -> ImportResult:
    try:
        if isinstance(rec, UserError):  # the bounded reader refused this line (it names the place)
            raise Refused(rec.message.split(": ", 1)[-1])
        if not isinstance(rec, dict):
            raise Refused("a record must be a JSON object")
        task_id = check_id(rec.get("instance_id"), "instance_id")
    except Refused as err:
        return ImportResult(where, "refused", str(err))
    return import_one(pack, task_id, source, lambda stage: _build(rec, stage, task_id, snapshots, source, runner))


def test_ids(rec: dict, key: str) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS: a list of node ids, or a JSON string encoding one."""
    value = rec.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise Refused(f"{key} is a string that is not a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise Refused(f"{key} must be a list of test ids (or a JSON string of one)")
    for node in value:
        path = node.split("::", 1)[0]
        if "::" not in node and not path.endswith(".py") or path.startswith("/") or ".." in Path(path).parts:
            raise Refused(f"{key}: {node!r} is not a pytest node id inside the repository (path.py::test)")
    return value


def _snapshot(snapshots: Path, rec: dict, task_id: str) -> Path:
    repo = rec.get("repo")
    names = [task_id]
    if isinstance(repo, str) and re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo) and ".." not in repo:
        names.append(repo.replace("/", "__"))
    for name in names:
        if (snapshots / name).is_dir():
            return snapshots / name
    raise Refused(f"no repository snapshot under {snapshots} (looked for {', '.join(names)})")


def snapshot_commit(snapshot: Path) -> str | None:
    """The commit a snapshot holds: a git checkout's HEAD (refused when its work tree has changes),
    else the first word of `.testhelix-commit`; None when it records neither."""
    if (snapshot / ".git").exists():
        def git(*args: str) -> str:
            run = subprocess.run(["git", "-c", f"safe.directory={snapshot.resolve()}", "-C", str(snapshot), *args],
                                 capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                raise Refused(f"snapshot {snapshot}: git {' '.join(args)} failed: {run.stderr.strip()[-200:]}")
            return run.stdout.strip()
        if git("status", "--porcelain", "--untracked-files=no"):
            raise Refused(f"snapshot {snapshot} has uncommitted changes; it is not the state of any commit")
        return git("rev-parse", "HEAD")
    marker = snapshot / COMMIT_FILE
    if marker.is_file():
        words = marker.read_text().split()
        return words[0] if words else None
    return None


def _check_commit(snapshot: Path, rec: dict) -> str:
    base = rec.get("base_commit")
    if not isinstance(base, str) or not re.fullmatch(r"[0-9a-fA-F]{7,64}", base):
        raise Refused(f"base_commit missing or not a commit hash (got {base!r})")
    found = snapshot_commit(snapshot)
    if found is None:
        raise Refused(f"snapshot {snapshot} does not record its commit (not a git checkout, no {COMMIT_FILE})")
    if not found.lower().startswith(base.lower()) and not base.lower().startswith(found.lower()):
        raise Refused(f"snapshot {snapshot} is at {found[:12]}, but base_commit is {base[:12]}")
    return base


def _copy_tests(tested: Path, dest: Path, test_files: list[str], keep_out: set[str]) -> None:
    """Each test file with its helpers: every file of its folder (data, loaders, conftest) and the
    conftest.py / pytest.ini of every folder above it -- but never a file that some candidate patch
    changes (that copy would hide the candidate's own version)."""
    wanted: set[str] = set()
    for rel in test_files:
        folder = Path(rel).parent
        if folder != Path("."):
            wanted.update(str(p.relative_to(tested)) for p in (tested / folder).rglob("*")
                          if p.is_file() and "__pycache__" not in p.parts)
        wanted.add(rel)
        for parent in [*folder.parents, folder]:
            wanted.update(str(parent / name) for name in _PYTEST_CONFIG if (tested / parent / name).is_file())
    for rel in sorted(wanted - keep_out):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((tested / rel).read_bytes())


def _entry(ids: list[str]) -> str:
    quoted = " ".join(shlex.quote(f"suite/{i}") for i in ids)
    return ("#!/bin/sh\n# The trusted tests: exactly FAIL_TO_PASS + PASS_TO_PASS (selection.json), at their\n"
            "# repository paths under suite/; -rA lists every test's outcome.\n"
            f"exec python -m pytest -q -rA -p no:cacheprovider --rootdir=suite {quoted}\n")


def per_test(output: str) -> dict[str, str]:
    """node id -> PASSED / FAILED / ERROR / SKIPPED ... from pytest's -rA summary lines."""
    found: dict[str, str] = {}
    for m in re.finditer(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", output, re.M):
        node = m.group(2)
        found[node[len("suite/"):] if node.startswith("suite/") else node] = m.group(1)  # ids as run from the workspace
    return found


def _build(rec: dict, stage: Path, task_id: str, snapshots: Path, source: str, runner: TrustedRunner) -> None:
    for key in ("patch", "problem_statement"):
        if not isinstance(rec.get(key), str):
            raise Refused(f"field {key!r} missing or not a string")
    if not rec["patch"].strip():
        raise Refused("the gold patch is empty: the reference would equal the initial program")
    f2p, p2p = test_ids(rec, "FAIL_TO_PASS"), test_ids(rec, "PASS_TO_PASS")
    if not f2p:
        raise Refused("FAIL_TO_PASS is empty: no trusted test tells the bug from its repair")
    snapshot = _snapshot(snapshots, rec, task_id)
    base = _check_commit(snapshot, rec)
    drop = (COMMIT_FILE,)
    copy_program(snapshot, stage / "environment", drop=drop)
    reference = stage / "solution" / "program"
    copy_program(snapshot, reference, drop=drop)
    apply_patch(reference, rec["patch"], "gold patch")
    if tree_sha256(reference) == tree_sha256(stage / "environment"):
        raise Refused("the gold patch changes nothing")
    candidates = [CandidateEntry(id="reference", label="valid", role="reference", provenance=f"{source} gold patch",
                                 artifact="solution/program")]
    touched = set(patched_files(rec["patch"]))
    for extra in rec.get("candidate_patches") or []:
        cid, label = extra.get("id"), extra.get("label")
        if not isinstance(cid, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", cid) or cid in ("initial", "reference") \
                or label not in ("valid", "invalid"):
            raise Refused("a candidate patch needs an id ([A-Za-z0-9_.-]+) and a label valid|invalid")
        copy_program(snapshot, stage / "panel" / cid, drop=drop)
        apply_patch(stage / "panel" / cid, str(extra.get("patch", "")), f"candidate {cid}")
        touched |= set(patched_files(str(extra.get("patch", ""))))
        candidates.append(CandidateEntry(id=cid, label=label, role="alternative" if label == "valid" else "invalid",
                                         provenance=str(extra.get("provenance", f"{source} candidate patch")),
                                         artifact=f"panel/{cid}"))
    tested = stage / ".tested"
    copy_program(reference, tested)
    if rec.get("test_patch"):
        apply_patch(tested, rec["test_patch"], "test patch")
    test_files = sorted({i.split("::", 1)[0] for i in f2p + p2p})
    missing = [f for f in test_files if not (tested / f).is_file()]
    if missing:
        raise Refused(f"test files named by FAIL_TO_PASS/PASS_TO_PASS do not exist: {', '.join(missing)}")
    _copy_tests(tested, stage / "tests", test_files, touched)
    shutil.rmtree(tested)
    (stage / "tests" / "run_tests.sh").write_text(_entry(f2p + p2p))
    (stage / "tests" / SELECTION).write_text(json.dumps({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}, indent=2) + "\n")
    (stage / "solution" / "solve.sh").write_text(SOLVE_SH)
    extras = {k: v for k, v in rec.items() if k not in _USED}
    if extras:
        (stage / "solution" / "upstream.json").write_text(json.dumps(extras, indent=2, sort_keys=True) + "\n")
    (stage / "instruction.md").write_text(rec["problem_statement"].rstrip() + "\n")
    upstream = {"instance_id": task_id, "base_commit": base}
    upstream.update({k: str(rec[k]) for k in ("repo", "version", "environment_setup_commit") if rec.get(k) is not None})
    try:
        doc = TaskToml(metadata=Metadata(id=task_id, source=source, upstream=upstream),
                       environment=Environment(python=rec.get("python", ">=3.11"),
                                               packages=importable_modules(stage / "environment"),
                                               requirements=rec.get("requirements")))
    except ValueError as err:
        raise Refused(f"record: {' '.join(str(err).split())[:300]}") from None
    write_task_toml(stage / "task.toml", doc)
    write_manifest(stage / "panel" / "manifest.json",
                   PanelManifest(task=task_id, candidates=[c.model_copy(update={"sha256": tree_sha256(stage / c.artifact)})
                                                           for c in candidates],
                                 initial=Artifact(artifact="environment", sha256=tree_sha256(stage / "environment"))))
    _check_tests(stage, doc, f2p, p2p, candidates, runner)


def _check_tests(stage: Path, doc: TaskToml, f2p: list[str], p2p: list[str], candidates: list[CandidateEntry],
                 runner: TrustedRunner) -> None:
    programs = [("initial", stage / "environment")] + [(c.id, stage / c.artifact) for c in candidates]
    outcomes = runner.run(stage, doc, [p for _, p in programs])
    labels = {"initial": "invalid", **{c.id: c.label for c in candidates}}
    for (name, _), outcome in zip(programs, outcomes):
        if outcome.status == "error":
            raise Refused(f"trusted tests on {name}: {outcome.status} ({outcome.reason})")
        seen = per_test(outcome.output)
        if name in ("initial", "reference"):
            for node in f2p + p2p:
                want = "PASSED" if name == "reference" or node in p2p else "FAILED"
                if seen.get(node) != want:
                    kind = "FAIL_TO_PASS" if node in f2p else "PASS_TO_PASS"
                    raise Refused(f"{kind} test {node} must be {want} on the {name} program, "
                                  f"was {seen.get(node, 'not run')}")
        elif (outcome.status == "pass") != (labels[name] == "valid"):
            raise Refused(f"candidate {name} is labelled {labels[name]} but the trusted tests {outcome.status} on it")

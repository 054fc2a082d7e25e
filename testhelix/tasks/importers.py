"""Importers that convert outside task formats into our task layout (tasks/README.md).

- `import_harbor(src, dest)`: a plain Harbor task folder (instruction.md, task.toml, environment/,
  solution/solve.sh, tests/test.sh). The reference is produced by running solve.sh on a copy of
  environment/ (solve.sh must act on its working directory); the panel holds only the reference.
- `import_swebench(jsonl, snapshots, dest_pack)`: SWE-bench / SWT-bench style instances with a local
  repository snapshot per instance (`snapshots/<instance_id>/`, else `snapshots/<owner>__<repo>/`).
  Initial program = snapshot; reference = snapshot + gold `patch`; trusted tests = the files the
  `test_patch` touches, applied on the reference; extra candidates from an optional
  `candidate_patches` list of {id, label, patch, provenance}.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

from testhelix.digest import tree_sha256
from testhelix.errors import UserError
from testhelix.tasks.task import CONTEXTS, DIFFICULTIES, ID_RE, load_task
from testhelix.execution.workspace import program_packages

SOLVE_SH = "#!/bin/sh\n# Copies the reference program over the working program (our layout).\n" \
           'set -e\ncp -R "$(dirname "$0")/program/." "${1:-.}"\n'


def _toml_value(v: object) -> str:
    return json.dumps(v)  # strings, numbers and lists of strings are valid TOML in JSON spelling


def _write_task_toml(path: Path, task_id: str, source: str, context: str, difficulty: str,
                     agent_s: float, verifier_s: float, packages: list[str]) -> None:
    path.write_text(
        "[metadata]\n"
        f"id = {_toml_value(task_id)}\nsource = {_toml_value(source)}\ncontext = {_toml_value(context)}\n"
        f"difficulty = {_toml_value(difficulty)}\n\n"
        f"[agent]\ntimeout_sec = {agent_s:g}\n\n[verifier]\ntimeout_sec = {verifier_s:g}\n\n"
        f'[environment]\npython = ">=3.11"\npackages = {_toml_value(sorted(packages))}\n')


def _write_manifest(dest: Path, task_id: str, candidates: list[dict]) -> None:
    for c in candidates:
        c["sha256"] = tree_sha256(dest / c["artifact"])
    manifest = {"task": task_id, "candidates": candidates,
                "initial": {"artifact": "environment", "sha256": tree_sha256(dest / "environment")}}
    (dest / "panel").mkdir(parents=True, exist_ok=True)
    (dest / "panel" / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def _fresh(dest: Path) -> None:
    if dest.exists():
        raise UserError(f"{dest}: already exists; refusing to overwrite")
    dest.mkdir(parents=True)


def import_harbor(src: Path, dest: Path, task_id: str | None = None, timeout_s: float = 120) -> Path:
    src, dest = Path(src), Path(dest)
    for need in ("instruction.md", "task.toml", "environment", "solution/solve.sh"):
        if not (src / need).exists():
            raise UserError(f"{src}: not a Harbor task folder (missing {need})")
    try:
        meta = tomllib.loads((src / "task.toml").read_text())
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{src / 'task.toml'}: TOML does not parse: {err}") from None
    task_id = task_id or src.name
    if not ID_RE.match(task_id):
        raise UserError(f"task id {task_id!r} must match [A-Za-z0-9_.-]+ (pass task_id=...)")
    _fresh(dest)
    shutil.copytree(src / "environment", dest / "environment")
    program = dest / "solution" / "program"
    shutil.copytree(src / "environment", program)
    shutil.copy2(src / "solution" / "solve.sh", dest / "solution" / "harbor_solve.sh")
    try:
        run = subprocess.run(["sh", str((src / "solution" / "solve.sh").resolve())], cwd=program,
                             capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        shutil.rmtree(dest)
        raise UserError(f"{src}/solution/solve.sh: timed out after {timeout_s:g}s") from None
    if run.returncode != 0:
        shutil.rmtree(dest)
        raise UserError(f"{src}/solution/solve.sh: exit code {run.returncode}: {run.stderr.strip()[-300:]}")
    (dest / "solution" / "solve.sh").write_text(SOLVE_SH)
    if (src / "tests").is_dir():
        shutil.copytree(src / "tests", dest / "tests")
    shutil.copy2(src / "instruction.md", dest / "instruction.md")
    m = meta.get("metadata", {})
    context = m.get("category") if m.get("category") in CONTEXTS else "general"
    difficulty = m.get("difficulty") if m.get("difficulty") in DIFFICULTIES else "medium"
    _write_task_toml(dest / "task.toml", task_id, "harbor", context, difficulty,
                     float(meta.get("agent", {}).get("timeout_sec", 600)),
                     float(meta.get("verifier", {}).get("timeout_sec", 60)),
                     list(program_packages(dest / "environment")))
    _write_manifest(dest, task_id, [{"id": "reference", "label": "valid", "role": "reference",
                                     "provenance": "Harbor solution/solve.sh applied to environment/",
                                     "artifact": "solution/program"}])
    load_task(dest)  # the result must load
    return dest


def _apply_patch(tree: Path, patch: str, what: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as fh:
        fh.write(patch)
    try:
        run = subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", fh.name],
                             cwd=tree, capture_output=True, text=True, timeout=60)
    finally:
        Path(fh.name).unlink()
    if run.returncode != 0:
        raise UserError(f"{what}: patch does not apply: {(run.stdout + run.stderr).strip()[-300:]}")


def _patched_files(patch: str) -> list[str]:
    return sorted(set(re.findall(r"^\+\+\+ b/(\S+)", patch, re.M)))


def _snapshot_for(snapshots: Path, inst: dict) -> Path:
    for name in (inst["instance_id"], str(inst.get("repo", "")).replace("/", "__")):
        if name and (snapshots / name).is_dir():
            return snapshots / name
    raise UserError(f"no repository snapshot for {inst['instance_id']} under {snapshots}")


def _read_instances(jsonl: Path) -> list[dict]:
    if not Path(jsonl).is_file():
        raise UserError(f"{jsonl}: file does not exist")
    out = []
    for n, line in enumerate(Path(jsonl).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            inst = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(f"{jsonl}:{n}: JSON does not parse: {err}") from None
        for key in ("instance_id", "patch", "problem_statement"):
            if not isinstance(inst.get(key), str):
                raise UserError(f"{jsonl}:{n}: field '{key}' missing or not a string")
        out.append(inst)
    return out


def import_swebench(jsonl: Path, snapshots: Path, dest_pack: Path, source: str = "swebench") -> list[Path]:
    made = []
    for inst in _read_instances(jsonl):
        task_id = re.sub(r"[^A-Za-z0-9_.-]", "_", inst["instance_id"])
        dest = Path(dest_pack) / task_id
        _fresh(dest)
        try:
            made.append(_import_instance(inst, _snapshot_for(Path(snapshots), inst), dest, task_id, source))
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise
    return made


def _import_instance(inst: dict, snapshot: Path, dest: Path, task_id: str, source: str) -> Path:
    ignore = shutil.ignore_patterns(".git")
    shutil.copytree(snapshot, dest / "environment", ignore=ignore)
    reference = dest / "solution" / "program"
    shutil.copytree(snapshot, reference, ignore=ignore)
    _apply_patch(reference, inst["patch"], f"{task_id}: gold patch")
    (dest / "solution" / "solve.sh").write_text(SOLVE_SH)
    (dest / "instruction.md").write_text(inst["problem_statement"].rstrip() + "\n")
    tests = dest / "tests"
    tests.mkdir()
    if inst.get("test_patch"):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(reference, Path(tmp) / "t")
            _apply_patch(Path(tmp) / "t", inst["test_patch"], f"{task_id}: test patch")
            for rel in _patched_files(inst["test_patch"]):
                if (Path(tmp) / "t" / rel).is_file():
                    (tests / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(Path(tmp) / "t" / rel, tests / rel)
    selection = {k: inst[k] for k in ("FAIL_TO_PASS", "PASS_TO_PASS") if k in inst}
    (tests / "swebench.json").write_text(json.dumps(selection, indent=2) + "\n")
    candidates = [{"id": "reference", "label": "valid", "role": "reference",
                   "provenance": f"{source} gold patch", "artifact": "solution/program"}]
    for extra in inst.get("candidate_patches") or []:
        cid, label = extra.get("id"), extra.get("label")
        if not isinstance(cid, str) or not ID_RE.match(cid) or label not in ("valid", "invalid"):
            raise UserError(f"{task_id}: candidate patch needs an id ([A-Za-z0-9_.-]+) and label valid|invalid")
        tree = dest / "panel" / cid
        shutil.copytree(snapshot, tree, ignore=ignore)
        _apply_patch(tree, extra.get("patch", ""), f"{task_id}: candidate {cid}")
        candidates.append({"id": cid, "label": label, "role": "alternative" if label == "valid" else "invalid",
                           "provenance": str(extra.get("provenance", f"{source} candidate patch")),
                           "artifact": f"panel/{cid}"})
    _write_task_toml(dest / "task.toml", task_id, source, "general", "medium", 600, 60,
                     list(program_packages(dest / "environment")))
    _write_manifest(dest, task_id, candidates)
    load_task(dest)
    return dest

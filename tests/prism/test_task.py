"""Task loading (digest checks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testhelix.core.errors import UserError
from testhelix.tasks.task import load_pack, load_task, panel_programs

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack"


@pytest.fixture
def task_copy(tmp_path):
    dest = tmp_path / "fx-clamp-m01"
    shutil.copytree(PACK / "fx-clamp-m01", dest)
    return dest


def test_load_task_reads_metadata_and_panel():
    task = load_task(PACK / "fx-clamp-m01")
    assert task.id == "fx-clamp-m01" and task.context == "algorithm" and task.packages == ("clampy",)
    assert task.reference_dir == (PACK / "fx-clamp-m01" / "solution" / "program").resolve()
    roles = [c.role for c in task.candidates]
    assert roles.count("reference") == 1 and roles.count("alternative") == 2 and roles.count("invalid") == 2
    assert [p[0] for p in panel_programs(task)][:2] == ["initial", "reference"]
    assert "clamp(10, 0, 5)" in task.instruction


def test_load_pack_sorted():
    assert [t.id for t in load_pack(PACK)] == ["fx-clamp-m01", "fx-stack-m02"]


def test_tampered_candidate_is_refused_naming_the_artifact(task_copy):
    (task_copy / "panel" / "alt1" / "clampy" / "__init__.py").write_text("def clamp(x, lo, hi):\n    return x\n")
    with pytest.raises(UserError, match="panel/alt1"):
        load_task(task_copy)
    load_task(task_copy, verify=False)  # an explicit opt-out still loads


def test_tampered_initial_program_is_refused(task_copy):
    (task_copy / "environment" / "clampy" / "extra.py").write_text("x = 1\n")
    with pytest.raises(UserError, match="environment"):
        load_task(task_copy)


@pytest.mark.parametrize("edit,match", [
    (lambda m: m["candidates"].pop(0), "exactly one candidate"),
    (lambda m: m["candidates"][1].update(label="invalid"), "does not fit role"),
    (lambda m: m["candidates"][1].update(artifact="../../etc"), "outside the task"),
    (lambda m: m.update(task="other"), "task.toml says"),
])
def test_malformed_manifest_is_refused(task_copy, edit, match):
    path = task_copy / "panel" / "manifest.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=match):
        load_task(task_copy)


def test_bad_toml_is_a_user_error(task_copy):
    (task_copy / "task.toml").write_text("[metadata\nid=")
    with pytest.raises(UserError, match="TOML"):
        load_task(task_copy)


# The Harbor and SWE-bench importers are tested in tests/tasks/test_importers.py.

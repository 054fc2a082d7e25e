"""Task loading (digest checks) and the Harbor / SWE-bench importers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testhelix.errors import UserError
from testhelix.tasks.importers import import_harbor, import_swebench
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


def _harbor_task(root: Path) -> Path:
    src = root / "hello-fix"
    (src / "environment" / "greet").mkdir(parents=True)
    (src / "environment" / "greet" / "__init__.py").write_text("def hello():\n    return 'helo'\n")
    (src / "environment" / "Dockerfile").write_text("FROM python:3.11\n")
    (src / "solution").mkdir()
    (src / "solution" / "solve.sh").write_text("sed -i s/helo/hello/ greet/__init__.py\n")
    (src / "tests").mkdir()
    (src / "tests" / "test.sh").write_text("pytest /tests/test_outputs.py\n")
    (src / "tests" / "test_outputs.py").write_text("from greet import hello\n\ndef test_h():\n    assert hello() == 'hello'\n")
    (src / "instruction.md").write_text("hello() misspells its greeting\n")
    (src / "task.toml").write_text('[metadata]\ndifficulty = "easy"\ncategory = "cli"\n[verifier]\ntimeout_sec = 30\n')
    return src


def test_import_harbor(tmp_path):
    dest = import_harbor(_harbor_task(tmp_path), tmp_path / "out" / "hello-fix")
    task = load_task(dest)
    assert task.id == "hello-fix" and task.context == "cli" and task.difficulty == "easy"
    assert task.verifier_timeout_s == 30 and task.packages == ("greet",)
    assert [c.id for c in task.candidates] == ["reference"]
    assert "hello'" in (task.reference_dir / "greet" / "__init__.py").read_text()
    assert "helo'" in (task.initial_dir / "greet" / "__init__.py").read_text()
    assert (dest / "tests" / "test_outputs.py").is_file()


def test_import_harbor_refuses_incomplete_folder(tmp_path):
    src = _harbor_task(tmp_path)
    (src / "solution" / "solve.sh").unlink()
    with pytest.raises(UserError, match="solve.sh"):
        import_harbor(src, tmp_path / "out")


GOLD = """--- a/mathy/__init__.py
+++ b/mathy/__init__.py
@@ -1,2 +1,2 @@
 def double(x):
-    return x + 2
+    return x * 2
"""
WRONG = GOLD.replace("x * 2", "x + x + 1")
TEST_PATCH = """--- /dev/null
+++ b/tests/test_double.py
@@ -0,0 +1,4 @@
+from mathy import double
+
+def test_double():
+    assert double(3) == 6
"""


def test_import_swebench(tmp_path):
    snap = tmp_path / "snaps" / "acme__mathy"
    (snap / "mathy").mkdir(parents=True)
    (snap / "mathy" / "__init__.py").write_text("def double(x):\n    return x + 2\n")
    inst = {"instance_id": "acme__mathy-1", "repo": "acme/mathy", "patch": GOLD, "test_patch": TEST_PATCH,
            "problem_statement": "double(3) returns 5", "FAIL_TO_PASS": ["tests/test_double.py::test_double"],
            "candidate_patches": [{"id": "wrong1", "label": "invalid", "patch": WRONG}]}
    jsonl = tmp_path / "inst.jsonl"
    jsonl.write_text(json.dumps(inst) + "\n")
    [dest] = import_swebench(jsonl, tmp_path / "snaps", tmp_path / "pack")
    task = load_task(dest)
    assert task.id == "acme__mathy-1" and task.packages == ("mathy",)
    assert "x * 2" in (task.reference_dir / "mathy" / "__init__.py").read_text()
    assert [(c.id, c.role) for c in task.candidates] == [("reference", "reference"), ("wrong1", "invalid")]
    assert (dest / "tests" / "tests" / "test_double.py").is_file()
    assert json.loads((dest / "tests" / "swebench.json").read_text())["FAIL_TO_PASS"]


def test_import_swebench_bad_patch_is_a_user_error(tmp_path):
    snap = tmp_path / "snaps" / "x-1"
    (snap / "mathy").mkdir(parents=True)
    (snap / "mathy" / "__init__.py").write_text("something else\n")
    (tmp_path / "i.jsonl").write_text(json.dumps({"instance_id": "x-1", "patch": GOLD, "problem_statement": "p"}))
    with pytest.raises(UserError, match="does not apply"):
        import_swebench(tmp_path / "i.jsonl", tmp_path / "snaps", tmp_path / "pack")
    assert not (tmp_path / "pack" / "x-1").exists()

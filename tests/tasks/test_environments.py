"""Per-task Python environments: pinned requirements, built once offline, used by panel and verify."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testhelix.core.errors import UserError
from testhelix.execution.environments import ensure_environment, normalise
from testhelix.execution.executor import default_executor
from testhelix.execution.sandbox import namespaces_available
from testhelix.importers.swebench import import_swebench
from testhelix.pack.verify import verify_pack
from testhelix.prism.evaluation import evaluate_task
from testhelix.tasks.task import load_task
from tests.tasks.wheel_maker import make_wheel

SWE = Path(__file__).resolve().parents[1] / "fixtures" / "swebench"
PIN = "helixpin==1.2.3"
GOLD = """--- a/pinned_app/__init__.py
+++ b/pinned_app/__init__.py
@@ -2,2 +2,2 @@ import helixpin
 def scaled(x):
-    return x * helixpin.FACTOR + 1
+    return x * helixpin.FACTOR
"""
TEST_PATCH = """--- /dev/null
+++ b/tests/test_app.py
@@ -0,0 +1,5 @@
+from pinned_app import scaled
+
+
+def test_scaled():
+    assert scaled(2) == 6
"""


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    folder = tmp_path / "wheels"
    make_wheel(folder, "helixpin", "1.2.3", "FACTOR = 3\nVERSION = '1.2.3'\n")
    make_wheel(folder, "helixpin", "2.0.0", "FACTOR = 30\nVERSION = '2.0.0'\n")  # the pin must win
    monkeypatch.setenv("TESTHELIX_ENV_CACHE", str(tmp_path / "envs"))
    monkeypatch.setenv("TESTHELIX_WHEELS", str(folder))
    return folder


def test_requirements_must_be_pins():
    assert normalise(["HelixPin==1.2.3", "helixpin==1.2.3"], "t") == ("helixpin==1.2.3",)
    for bad in (["helixpin"], ["helixpin>=1"], ["helixpin==1.*"], ["--index-url=http://x"], ["x @ https://e/x.whl"]):
        with pytest.raises(UserError, match="requirement"):
            normalise(bad, "task t")


def test_environment_is_built_once_and_a_build_failure_is_a_clear_error(wheels, tmp_path):
    env = ensure_environment([PIN])
    marker = env.root / "testhelix-env.json"
    stamp = marker.stat().st_mtime_ns
    assert ensure_environment([PIN]).root == env.root and marker.stat().st_mtime_ns == stamp
    assert (env.root / "lib").is_dir()
    assert not list((tmp_path / "envs").glob(".build-*"))
    with pytest.raises(UserError, match="installing helixpin==9.9.9 failed"):
        ensure_environment(["helixpin==9.9.9"])
    assert not list((tmp_path / "envs").glob(".build-*"))


def test_a_backend_without_task_environments_is_refused_before_anything_is_built(tmp_path, monkeypatch):
    from testhelix.execution import seam
    from testhelix.pack.runner import Job
    from testhelix.pack.verify import _run_with_executor

    class NoEnvironments:  # a plug-in backend: the Executor protocol, but no for_environment
        closed = False

        def run_many(self, jobs, limits=None, coverage=False):
            raise AssertionError("a pinned job must not run in the harness's own interpreter")

        def close(self):
            self.closed = True

    backend = NoEnvironments()
    monkeypatch.setattr(seam, "create_executor", lambda **kwargs: backend)
    monkeypatch.setenv("TESTHELIX_ENV_CACHE", str(tmp_path / "envs"))
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("TESTHELIX_WHEELS", str(tmp_path / "no-wheels"))  # offline either way
    job = Job("k", tmp_path / "suite", tmp_path / "program")
    with pytest.raises(UserError, match=r"pack verify: pins requirements, and the executor in use \(NoEnvironments\) "
                                        "cannot run a task environment"):
        _run_with_executor([job], 1, {"k": (PIN,)})
    assert backend.closed and not (tmp_path / "envs").exists()


@pytest.mark.skipif(not namespaces_available(), reason="needs the namespaced sandbox")
def test_task_with_a_pinned_package_runs_in_its_own_environment(wheels, tmp_path):
    snaps = tmp_path / "snaps"
    shutil.copytree(SWE / "snapshots", snaps)
    app = snaps / "acme__pinned"
    (app / "pinned_app").mkdir(parents=True)
    (app / "pinned_app" / "__init__.py").write_text("import helixpin\ndef scaled(x):\n    return x * helixpin.FACTOR + 1\n")
    (app / ".testhelix-commit").write_text("abcdef1234567\n")
    pinned = {"instance_id": "acme__pinned-1", "repo": "acme/pinned", "base_commit": "abcdef1234567",
              "problem_statement": "scaled(2) is 7, should be 6", "patch": GOLD, "test_patch": TEST_PATCH,
              "FAIL_TO_PASS": ["tests/test_app.py::test_scaled"], "PASS_TO_PASS": [], "requirements": [PIN]}
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps(pinned) + "\n" + (SWE / "records.jsonl").read_text().splitlines()[0] + "\n")
    pack = tmp_path / "pack"
    results = import_swebench(records, snaps, pack)
    assert [r.status for r in results] == ["imported", "imported"], [r.reason for r in results]
    task = load_task(pack / "acme__pinned-1")
    other = load_task(pack / "acme__statkit-12")
    assert task.requirements == (PIN,) and other.requirements == ()
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "test_probe.py").write_text("import helixpin\n\ndef test_version():\n    assert helixpin.VERSION == '1.2.3'\n")
    with default_executor(1) as executor:
        judged = evaluate_task(executor, task, probe)
        assert judged.statuses() == {"initial": "pass", "reference": "pass"}
        suite = tmp_path / "suite"
        suite.mkdir()
        (suite / "test_scaled.py").write_text("from pinned_app import scaled\n\ndef test_s():\n    assert scaled(2) == 6\n")
        judged = evaluate_task(executor, task, suite)
        assert judged.statuses()["initial"] == "fail" and judged.statuses()["reference"] == "pass"
        assert judged.indicators.F
        # the other task of the same pack does not see the package
        elsewhere = evaluate_task(executor, other, probe)
        assert all(s != "pass" for s in elsewhere.statuses().values())
        assert "No module named 'helixpin'" in executor.run(probe, other.initial_dir).output
    report = verify_pack(pack, workers=1)
    assert report.ok, report.failures

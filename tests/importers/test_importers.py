"""`testhelix pack import`: Harbor folders and SWE-bench records, imported safely and faithfully."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testhelix.execution.sandbox import namespaces_available
from testhelix.importers.harbor import import_harbor
from testhelix.importers.swebench import import_swebench
from testhelix.pack.verify import verify_pack
from testhelix.tasks.task import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HARBOR = FIXTURES / "harbor"
SWE = FIXTURES / "swebench"
RECORDS = [json.loads(line) for line in (SWE / "records.jsonl").read_text().splitlines()]
GOOD = RECORDS[0]

needs_namespaces = pytest.mark.skipif(not namespaces_available(), reason="needs the namespaced sandbox (root + unshare)")


def _jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ----------------------------------------------------------------------------- Harbor
@needs_namespaces
def test_harbor_solve_sh_cannot_touch_the_host(tmp_path):
    src = tmp_path / "src" / "escape"
    shutil.copytree(HARBOR / "greet-fix", src)
    outside = tmp_path / "outside"
    outside.mkdir()
    (src / "solution" / "solve.sh").write_text(
        "#!/bin/bash\n"
        f"echo pwned > {outside}/written 2>/dev/null\n"
        f"mkdir -p {outside}/made 2>/dev/null\n"
        f"touch {src}/instruction.md.bak 2>/dev/null\n"
        "echo pwned > /etc/testhelix-pwned 2>/dev/null\n"
        "echo pwned > /root/testhelix-pwned 2>/dev/null\n"
        "echo pwned > /solution/pwned 2>/dev/null\n"
        "sed -i 's/Helo,/Hello,/' /app/greet/__init__.py\n")
    before = sorted(p.name for p in src.rglob("*"))
    [result] = import_harbor(src, tmp_path / "pack")
    assert result.status == "imported", result.reason
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in src.rglob("*")) == before
    assert not Path("/etc/testhelix-pwned").exists() and not Path("/root/testhelix-pwned").exists()
    task = load_task(tmp_path / "pack" / "escape")
    assert "Hello," in (task.reference_dir / "greet" / "__init__.py").read_text()
    assert not (task.reference_dir / "pwned").exists()


@needs_namespaces
def test_harbor_keeps_metadata_and_refuses_unknown_category_and_failing_solve(tmp_path):
    pack = tmp_path / "pack"
    results = {r.task_id: r for r in import_harbor(HARBOR, pack)}
    assert results["greet-fix"].status == "imported"
    assert results["wordcount-off-by-one"].status == "refused" and "--context" in results["wordcount-off-by-one"].reason
    assert not (pack / "wordcount-off-by-one").exists()
    task = load_task(pack / "greet-fix")
    meta = task.meta
    assert meta is not None
    assert (meta.metadata.category, meta.metadata.tags) == ("cli", ["strings", "fixture"])
    assert (meta.environment.cpus, meta.environment.memory_mb, meta.environment.storage_mb) == (1, 2048, 10240)
    assert meta.verifier.entry == "test.sh" and (pack / "greet-fix" / "tests" / "run_tests.sh").is_file()
    assert meta.environment.packages == ["greet"]  # no Dockerfile, no data folders
    assert (pack / "greet-fix" / "solution" / "harbor" / "Dockerfile").is_file()
    assert not (task.initial_dir / "Dockerfile").exists()
    # --context imports it; the Python oracle ran under its shebang's interpreter
    [wc] = import_harbor(HARBOR / "wordcount-off-by-one", pack, context="general")
    assert wc.status == "imported", wc.reason
    wc_task = load_task(pack / "wordcount-off-by-one")
    assert wc_task.meta is not None
    assert wc_task.meta.environment.packages == ["wc"] and wc_task.meta.metadata.category == "programming"
    assert "len(text.split())" in (wc_task.reference_dir / "wc" / "__init__.py").read_text()
    # a failing solve.sh is a clear refusal and leaves nothing
    bad = tmp_path / "bad" / "broken-solve"
    shutil.copytree(HARBOR / "greet-fix", bad)
    (bad / "solution" / "solve.sh").write_text("#!/bin/sh\necho cannot >&2\nexit 3\n")
    [refused] = import_harbor(bad, pack)
    assert refused.status == "refused" and "exit 3" in refused.reason and "cannot" in refused.reason
    assert not (pack / "broken-solve").exists() and not (pack / ".import-staging").exists()


# ----------------------------------------------------------------------------- SWE-bench
def test_traversal_and_empty_patch_are_refused_and_leave_nothing(tmp_path):
    secret = tmp_path / "outside_secret"
    secret.mkdir()
    (secret / "key.txt").write_text("secret")
    snaps = tmp_path / "snaps" / "deep"
    shutil.copytree(SWE / "snapshots", snaps)
    records = [dict(GOOD, instance_id="../../outside_secret"), dict(GOOD, instance_id=".."),
               dict(GOOD, instance_id="a/b"), dict(GOOD, instance_id="acme__statkit-99", patch="  \n")]
    results = import_swebench(_jsonl(tmp_path / "r.jsonl", *records), snaps, tmp_path / "pack")
    assert [r.status for r in results] == ["refused"] * 4
    assert "not a name" in results[0].reason and "not a name" in results[2].reason
    assert "gold patch is empty" in results[3].reason
    assert list((tmp_path / "pack").iterdir()) == []
    assert not any(p.name == "key.txt" for p in (tmp_path / "pack").rglob("*"))


def test_missing_and_wrong_base_commit_are_refused(tmp_path):
    no_base = {k: v for k, v in GOOD.items() if k != "base_commit"}
    wrong = dict(GOOD, instance_id="acme__statkit-20", base_commit="0" * 40)
    results = import_swebench(_jsonl(tmp_path / "r.jsonl", no_base, wrong), SWE / "snapshots", tmp_path / "pack")
    assert results[0].status == "refused" and "base_commit missing" in results[0].reason
    assert results[1].status == "refused" and "is at 3f2c9a1b7d4e" in results[1].reason


def _git_snapshot(root: Path) -> tuple[Path, str]:
    snap = root / "acme__statkit"
    shutil.copytree(SWE / "snapshots" / "acme__statkit", snap, ignore=shutil.ignore_patterns(".testhelix-commit"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(snap)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    return snap, head


def test_multi_instance_import_is_atomic_per_task_and_reruns_are_idempotent(tmp_path):
    snaps = tmp_path / "snaps"
    snap, head = _git_snapshot(snaps)
    good = dict(GOOD, base_commit=head, candidate_patches=[])
    wrong_f2p = dict(good, instance_id="acme__statkit-30",  # test_mean passes on the initial program
                     FAIL_TO_PASS=json.dumps(["statkit/tests/test_stats.py::test_mean"]), PASS_TO_PASS="[]")
    records = _jsonl(tmp_path / "r.jsonl", good, wrong_f2p)
    pack = tmp_path / "pack"
    first = import_swebench(records, snaps, pack)
    assert [(r.task_id, r.status) for r in first] == [("acme__statkit-12", "imported"), ("acme__statkit-30", "refused")]
    assert "FAIL_TO_PASS test statkit/tests/test_stats.py::test_mean must be FAILED on the initial" in first[1].reason
    assert sorted(p.name for p in pack.iterdir()) == ["acme__statkit-12"]
    task = load_task(pack / "acme__statkit-12")
    assert task.meta is not None and task.meta.metadata.upstream is not None
    upstream = task.meta.metadata.upstream
    assert upstream["base_commit"] == head
    assert upstream["environment_setup_commit"] == GOOD["environment_setup_commit"]
    assert upstream["version"] == "0.3"
    # string-encoded lists are decoded, stored as lists and select the trusted tests
    selection = json.loads((pack / "acme__statkit-12" / "tests" / "selection.json").read_text())
    assert selection["FAIL_TO_PASS"] == ["statkit/tests/test_stats.py::test_median_even"]
    assert len(selection["PASS_TO_PASS"]) == 2
    assert "created_at" in json.loads((pack / "acme__statkit-12" / "solution" / "upstream.json").read_text())
    again = import_swebench(records, snaps, pack)
    assert [r.status for r in again] == ["unchanged", "refused"]
    changed = _jsonl(tmp_path / "r2.jsonl", dict(good, problem_statement="median([4, 1, 3, 2]) should be 2.5"))
    [updated] = import_swebench(changed, snaps, pack)
    assert updated.status == "updated"
    assert "should be 2.5" in load_task(pack / "acme__statkit-12").instruction
    # a dirty or moved checkout is not the base commit
    (snap / "statkit" / "stats.py").write_text("# edited\n")
    [dirty] = import_swebench(records.with_name("r.jsonl"), snaps, tmp_path / "pack2")[:1]
    assert dirty.status == "refused" and "uncommitted changes" in dirty.reason


def test_nested_tests_with_helpers_pass_pack_verify(tmp_path):
    results = import_swebench(SWE / "records.jsonl", SWE / "snapshots", tmp_path / "pack")
    assert [r.status for r in results] == ["imported", "refused", "refused"]
    tests = tmp_path / "pack" / "acme__statkit-12" / "tests"
    for rel in ("statkit/tests/test_stats.py", "statkit/tests/conftest.py", "statkit/tests/loaders.py",
                "statkit/tests/data/samples.json"):
        assert (tests / rel).is_file(), rel
    assert not (tests / "statkit" / "stats.py").exists()  # never a program file
    task = load_task(tmp_path / "pack" / "acme__statkit-12")
    assert task.packages == ("statkit",)
    assert [(c.id, c.role) for c in task.candidates] == [("reference", "reference"), ("partial", "invalid")]
    report = verify_pack(tmp_path / "pack", workers=1)
    assert report.ok, report.failures
    assert report.runs == 3


# ----------------------------------------------------------------------------- command line
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from testhelix.commands.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=600)


def test_pack_import_command_summary_and_bad_input(tmp_path):
    res = _cli("pack", "import", "swebench", "--jsonl", str(SWE / "records.jsonl"), "--snapshots",
               str(SWE / "snapshots"), "--out", str(tmp_path / "pack"), "--json")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["imported"], doc["refused"]) == (1, 2)
    assert {t["task"]: t["status"] for t in doc["tasks"]}["acme__statkit-13"] == "refused"
    bad = _cli("pack", "import", "swebench", str(tmp_path / "nope.jsonl"), "--snapshots", str(SWE / "snapshots"),
               "--out", str(tmp_path / "pack"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr
    missing = _cli("pack", "import", "swebench", str(SWE / "records.jsonl"), "--out", str(tmp_path / "p"))
    assert missing.returncode == 2 and "--snapshots" in missing.stderr


def test_collect_results_reports_each_import_as_it_finishes_and_always_closes_the_runner():
    from testhelix.importers.common import ImportResult, TrustedRunner, collect_results

    class Runner(TrustedRunner):  # starts no executor until run(), which this test never calls
        closed = 0

        def close(self) -> None:
            self.closed += 1

    told: list[str] = []
    runner = Runner()

    def imports():
        yield ImportResult("a", "imported")
        assert told == ["a"], "the first result is reported before the next import starts"
        yield ImportResult("b", "refused", "why")

    results = collect_results(imports(), runner, lambda r: told.append(r.task_id))
    assert [r.task_id for r in results] == ["a", "b"] and told == ["a", "b"] and runner.closed == 1

    def failing():
        yield ImportResult("a", "imported")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        collect_results(failing(), runner)
    assert runner.closed == 2

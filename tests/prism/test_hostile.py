"""Hostile suites (tests/fixtures/hostile/) are contained, classified, and leave nothing behind."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from testhelix.core.digest import tree_sha256
from testhelix.execution.executor import ForkServerExecutor
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import OVERLAY_ENV, namespaces_available
from testhelix.tasks.task import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTILE = FIXTURES / "hostile"
TASK = FIXTURES / "tasks" / "pack" / "fx-clamp-m01"
LIMITS = Limits(wall_s=3, cpu_s=2, memory_mb=256, fsize_mb=16, nofile=64, nproc=32, output_bytes=4096)
MARK = "prism-hostile-was-here"
FAKE_KEY = "sk-ant-fake-0123456789"

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")


def _suites(tmp: Path) -> Path:
    dest = tmp / "hostile"
    shutil.copytree(HOSTILE, dest)
    targets = [TASK / "solution" / "program" / "clampy" / "__init__.py", TASK / "panel" / "manifest.json",
               TASK / "panel", TASK / "tests", TASK]
    for name in ("guess_paths", "write_outside"):
        (dest / name / "targets.txt").write_text("\n".join(str(t) for t in targets))
    return dest


def _host_marks() -> list[str]:
    spots = [Path("/tmp"), Path("/dev/shm"), Path("/"), TASK, TASK / "panel", TASK / "solution" / "program"]
    return [str(p / MARK) for p in spots if (p / MARK).exists()] + \
        [str(p) for p in TASK.rglob(MARK)]


def _stray_sleepers() -> list[str]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"987.65" in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(pid)
        except OSError:
            pass
    return out


@pytest.fixture(scope="module", params=["overlay", "linked"])
def namespaced(tmp_path_factory, request):
    """Both ways the namespaced sandbox makes a workspace: overlay mounts, or hard-linked folders."""
    if not namespaces_available():
        pytest.skip("needs root and unshare (namespaced sandbox)")
    mp = pytest.MonkeyPatch()
    mp.setenv(OVERLAY_ENV, "1" if request.param == "overlay" else "0")
    old = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = FAKE_KEY  # must never reach a test process
    before = tree_sha256(TASK)
    ex = ForkServerExecutor(workers=2, sandbox="namespaced")
    suites = _suites(tmp_path_factory.mktemp("ns"))
    names = sorted(p.name for p in suites.iterdir() if p.is_dir() and p.name != "probe_clean")
    program = TASK / "solution" / "program"
    results = dict(zip(names, ex.run_many([(suites / n, program) for n in names], LIMITS)))
    results["probe_clean"] = ex.run(suites / "probe_clean", program, LIMITS)
    results["after"] = ex.run(FIXTURES / "tasks" / "suites" / "good" / "fx-clamp-m01", program, LIMITS)
    yield results, before
    ex.close()
    mp.undo()
    if old is None:
        os.environ.pop("ANTHROPIC_API_KEY", None)
    else:
        os.environ["ANTHROPIC_API_KEY"] = old


EXPECTED = {  # suite -> (status, reason prefixes accepted)
    "guess_paths": ("pass", (None,)),
    "env_secrets": ("pass", (None,)),
    "write_outside": ("pass", (None,)),
    # the job's process cap or its aggregate memory cap (all processes together) stops it first
    "fork_bomb": ("error", ("resource limit: processes", "resource limit: memory", "timeout")),
    "memory_hog": ("error", ("resource limit: memory",)),
    "busy_loop": ("error", ("resource limit: cpu time", "timeout")),
    "sleeper": ("error", ("timeout after 3s",)),
    "network": ("pass", (None,)),
    "forge_result": ("fail", ("tests failed",)),  # forged files and descriptors change nothing
    "kill_parent": ("pass", (None,)),
    "flood_output": ("fail", ("tests failed",)),
    "flood_script": ("pass", (None,)),
    "leave_children": ("pass", (None,)),
    "probe_clean": ("pass", (None,)),
}


@needs_ns
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_suite_is_contained_and_classified(namespaced, name):
    results, _ = namespaced
    outcome = results[name]
    status, reasons = EXPECTED[name]
    assert outcome.status == status, (outcome.reason, outcome.output[-1500:])
    assert any(r is None and outcome.reason is None or r and (outcome.reason or "").startswith(r)
               for r in reasons), outcome.reason


@needs_ns
def test_secret_never_reaches_the_test_process(namespaced):
    results, _ = namespaced
    assert all(FAKE_KEY not in o.output for o in results.values())


@needs_ns
def test_output_is_capped(namespaced):
    results, _ = namespaced
    for name in ("flood_output", "flood_script"):
        assert len(results[name].output.encode()) <= LIMITS.output_bytes + 100
        assert "truncated" in results[name].output


@needs_ns
def test_timeouts_kill_promptly(namespaced):
    results, _ = namespaced
    assert results["sleeper"].duration_s < LIMITS.wall_s + 2.5
    assert results["leave_children"].duration_s < LIMITS.wall_s


@needs_ns
def test_nothing_escapes_to_the_host(namespaced):
    results, before = namespaced
    assert _host_marks() == []
    assert not Path("/tmp/reward.txt").exists()
    assert _stray_sleepers() == []
    assert tree_sha256(TASK) == before
    load_task(TASK)  # every digest still verifies


@needs_ns
def test_harness_keeps_going(namespaced):
    results, _ = namespaced
    assert results["after"].status == "pass"


# The plain fallback is weaker (no private file system view, Python-level network block). These
# check what it does promise; see sandbox.py for what it does not.
@pytest.mark.parametrize("name,status", [("env_secrets", "pass"), ("forge_result", "fail"), ("sleeper", "error"),
                                         ("memory_hog", "error"), ("kill_parent", "pass"),
                                         ("flood_output", "fail")])
def test_plain_fallback_contains_the_basics(plain_results, name, status):
    outcome = plain_results[name]
    assert outcome.status == status, (outcome.reason, outcome.output[-800:])


def test_plain_fallback_keeps_going(plain_results):
    assert plain_results["after"].status == "pass"
    assert all(FAKE_KEY not in o.output for o in plain_results.values())


@pytest.fixture(scope="module")
def plain_results(tmp_path_factory):
    old = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = FAKE_KEY
    suites = _suites(tmp_path_factory.mktemp("plain"))
    names = ["env_secrets", "forge_result", "sleeper", "memory_hog", "kill_parent", "flood_output"]
    program = TASK / "solution" / "program"
    with ForkServerExecutor(workers=2, sandbox="plain") as ex:
        results = dict(zip(names, ex.run_many([(suites / n, program) for n in names], LIMITS)))
        results["after"] = ex.run(FIXTURES / "tasks" / "suites" / "good" / "fx-clamp-m01", program, LIMITS)
    if old is None:
        os.environ.pop("ANTHROPIC_API_KEY", None)
    else:
        os.environ["ANTHROPIC_API_KEY"] = old
    return results

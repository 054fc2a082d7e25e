"""No position signal (issue 28): an oracle that tries to tell its panel position, and so its label,
from everything a job can observe, on a real bundled kata with 1, 2 and 4 workers.

Two attackers, both using the same observations (a conftest records them and prints them in
pytest's terminal summary, which the harness keeps in the outcome's output):

- the suite itself: it estimates its copy position from the inode distance between its program
  tree and its suite tree (both copied in one batch), assumes the kata layout (initial, reference,
  four alternatives, mutants) and asserts on that prediction, as an attacker would. It must score
  S=0 while the task's trusted tests, on the same pool, score S=1;
- an omniscient attacker on the host, stronger than any one job: it sees every job's observations
  at once, ranks the jobs by each varying observable and predicts the labels from the layout. It
  must not beat chance; every observable that should be the same for every job is the same.

A control shows the omniscient attacker has teeth: with the tree cache's random copy order turned
off, inode order alone gives it every label (the leak the random order closes), and with one
worker the start time follows the (secret) run order exactly -- which is why that order is secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testhelix.core.bundled_data import bundled_pack
from testhelix.execution import workspace
from testhelix.execution.cached_executor import CachedExecutor
from testhelix.execution.sandbox import namespaces_available
from testhelix.execution.seam import create_executor
from testhelix.prism.evaluation import evaluate_task, task_limits
from testhelix.tasks.task import load_task, panel_programs

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")
pytestmark = [needs_ns, pytest.mark.slow]

TASK = "katas-lru_cache-m01"

CONFTEST = r'''
import json, os, socket, stat, time

OBS = {"t_ns": time.time_ns()}


def _st(path):
    s = os.lstat(path)
    return {"ino": s.st_ino, "dev": s.st_dev, "mtime": s.st_mtime_ns, "ctime": s.st_ctime_ns}


def _observe():
    ws = "/workspace"
    program = sorted(os.path.join(d, f) for d, ds, fs in os.walk(ws) for f in fs
                     if not d.startswith((ws + "/suite", ws + "/.home")) and "__pycache__" not in d)
    OBS["program_files"] = len(program)
    OBS["program_entries"] = sum(1 + len(fs) for d, ds, fs in os.walk(ws)
                                 if not d.startswith((ws + "/suite", ws + "/.home")))
    OBS["program_root"] = _st(ws)
    OBS["suite_root"] = _st(ws + "/suite")
    OBS["min_file_ino"] = min(os.lstat(p).st_ino for p in program)
    suite = [os.path.join(d, f) for d, ds, fs in os.walk(ws + "/suite") for f in fs if "__pycache__" not in d]
    OBS["mtimes"] = sorted({os.lstat(p).st_mtime_ns for p in program + suite})
    OBS["ctime_spread"] = max(os.lstat(p).st_ctime_ns for p in program) - min(os.lstat(p).st_ctime_ns for p in program)
    OBS["listing"] = [n for n in os.listdir(ws)]
    OBS["tmp_dev"] = os.stat("/tmp").st_dev
    OBS["cgroup"] = open("/proc/self/cgroup").read()
    OBS["hostname"] = socket.gethostname()
    OBS["pid"], OBS["ppid"], OBS["uid"] = os.getpid(), os.getppid(), os.getuid()
    OBS["starttime"] = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    OBS["ns"] = {n: os.readlink("/proc/self/ns/" + n) for n in ("net", "mnt", "pid", "ipc", "cgroup", "uts")}
    mounts = open("/proc/self/mountinfo").read().splitlines()
    OBS["mount_ids"] = [int(line.split()[0]) for line in mounts if line.split()[4].startswith(("/workspace", "/tmp"))]
    OBS["mounts"] = len(mounts)


_observe()


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("ORACLE " + json.dumps(OBS, sort_keys=True))
'''

SUITE = r'''
from conftest import OBS

VALID_POSITIONS = range(1, 6)  # the kata layout: initial, reference, alt1..alt4, then mutants


def test_i_am_a_valid_program():
    # The suite tree is copied in the same batch as the programs: a harness that copied in panel
    # order would put this program's tree (position + 1) trees after the suite's.
    stride = max(1, OBS["program_entries"])
    position = round((OBS["min_file_ino"] - OBS["suite_root"]["ino"]) / stride) - 1
    assert position in VALID_POSITIONS, f"predicted position {position}: a mutant"
'''

VALID = {"reference", "alternative"}


def _oracle_suite(root: Path) -> Path:
    suite = root / "oracle"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_oracle.py").write_text(SUITE)
    return suite


def _observations(ex: CachedExecutor, task, suite: Path) -> dict[str, dict]:
    """Each program's observations, read from the outcomes the evaluation just cached (no rerun)."""
    programs = panel_programs(task)
    before = ex.executions
    outs = ex.run_many([(suite, tree) for _, _, _, tree in programs], task_limits(task))
    assert ex.executions == before and all(o.cached for o in outs)
    found = {}
    for (pid, _, _, _), out in zip(programs, outs):
        line = [ln for ln in out.output.splitlines() if ln.startswith("ORACLE ")]
        assert line, out.output[-2000:]
        found[pid] = json.loads(line[-1][len("ORACLE "):])
    return found


FEATURES = {  # varying observables, as the omniscient attacker ranks them
    "program inode": lambda o: o["min_file_ino"],
    "program inode - suite inode": lambda o: o["min_file_ino"] - o["suite_root"]["ino"],
    "workspace ctime": lambda o: o["program_root"]["ctime"],
    "suite folder mtime": lambda o: o["suite_root"]["mtime"],  # the writable layer's: made as the job starts
    "workspace device": lambda o: o["program_root"]["dev"],
    "/tmp device": lambda o: o["tmp_dev"],
    "uid": lambda o: o["uid"],
    "start time": lambda o: o["t_ns"],
    "process start (ticks)": lambda o: o["starttime"],
    "network namespace": lambda o: o["ns"]["net"],
    "mount namespace": lambda o: o["ns"]["mnt"],
    "mount ids": lambda o: o["mount_ids"],
}
SAME_FOR_EVERY_JOB = ("mtimes", "listing", "cgroup", "hostname", "pid", "ppid", "mounts")


def _rank_attack(task, obs: dict[str, dict], feature) -> int:
    """Valid programs the omniscient rank attacker places right: it ranks the jobs by the feature
    (ties by program id) and calls valid the ranks where the panel layout has valid programs."""
    layout = [role in VALID for _, role, _, _ in panel_programs(task)]
    ranked = sorted(obs, key=lambda pid: (feature(obs[pid]), pid))
    roles = {pid: role for pid, role, _, _ in panel_programs(task)}
    return sum(1 for pid, valid in zip(ranked, layout) if valid and roles[pid] in VALID)


@pytest.fixture(scope="module")
def task():
    return load_task(bundled_pack("katas") / TASK)


def _evaluate_oracle(ex, task, suite):
    """The suite's own score. S=1 by chance has probability 1/462 (C(11,5) placements of the valid
    programs); a leak gives S=1 every time, so a first S=1 is followed by one more evaluation (on a
    second copy of the suite: a new digest, new trees, a new secret order)."""
    res = evaluate_task(ex, task, suite)
    if res.indicators.S:
        again = suite.parent / "oracle-again"
        if not again.exists():
            import shutil
            shutil.copytree(suite, again)
            (again / "test_again.py").write_text("def test_again():\n    pass\n")
        res = evaluate_task(ex, task, again)
        suite = again
    return res, suite


def test_no_observable_tells_a_job_its_position(task, tmp_path):
    suite = _oracle_suite(tmp_path)
    valid_total = sum(1 for _, role, _, _ in panel_programs(task) if role in VALID)
    placed = {name: 0 for name in FEATURES}
    runs = 0
    for workers in (1, 2, 4):
        with create_executor("forkserver", workers=workers, sandbox="namespaced") as ex:
            res, used = _evaluate_oracle(ex, task, suite)
            assert not res.indicators.S, (workers, res.outcomes)
            obs = _observations(ex, task, used)
            trusted = evaluate_task(ex, task, task.trusted_tests_dir)
            assert trusted.indicators.S, (workers, trusted.outcomes)
        for key in SAME_FOR_EVERY_JOB:
            assert len({json.dumps(o[key]) for o in obs.values()}) == 1, (workers, key, {p: o[key] for p, o in obs.items()})
        assert all(o["cgroup"].strip().endswith(":/") for o in obs.values())
        assert len(obs["reference"]["mtimes"]) == 1  # one timestamp on every cached file, the suite's included
        for name, feature in FEATURES.items():
            placed[name] += _rank_attack(task, obs, feature)
        runs += 1
        if workers == 1:  # the control: the start time does follow the run order, which is secret
            assert res.panel_order is not None
            assert sorted(obs, key=lambda p: obs[p]["t_ns"]) == list(res.panel_order.run_order)
    print("valid programs the rank attacker placed right, of", runs * valid_total, placed)
    # Chance places a hypergeometric number of the 5 valid programs right (mean 25/11 per run);
    # all 15 over three runs has probability ~1e-8, 14 or more ~1e-6. A leak places all 15.
    for name, hits in placed.items():
        assert hits <= runs * valid_total - 2, (name, hits, placed)


def test_the_omniscient_attacker_wins_when_copy_order_follows_the_panel(task, tmp_path, monkeypatch):
    """The control for the inode channel: without the random copy order (and run in panel order)
    inode order names every program's position, and the rank attacker places every valid one."""

    class InOrder:
        def shuffle(self, items: list) -> None:
            pass

    monkeypatch.setattr(workspace.secrets, "SystemRandom", InOrder)
    suite = _oracle_suite(tmp_path)
    with create_executor("forkserver", workers=2, sandbox="namespaced") as ex:
        programs = panel_programs(task)
        ex.run_many([(suite, tree) for _, _, _, tree in programs], task_limits(task))
        obs = _observations(ex, task, suite)
    valid_total = sum(1 for _, role, _, _ in programs if role in VALID)
    assert _rank_attack(task, obs, FEATURES["program inode"]) == valid_total

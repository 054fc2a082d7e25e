"""Pieces of the judge that need no sandbox: clean-up, file names, cgroup set-up, the trusted pool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.core.digest import NonUtf8Name, tree_sha256
from testhelix.execution.cgroup import PARENT, Cgroups, own_v1_group
from testhelix.execution.outcome import Limits, Outcome
from testhelix.execution.workspace import force_rmtree
from testhelix.tasks.task import load_task

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack" / "fx-clamp-m01"


def test_force_rmtree_is_iterative_and_never_follows_symlinks(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    top = tmp_path / "top"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(3000):  # deeper than the recursion limit and than PATH_MAX allows by path
        os.mkdir("d", dir_fd=fd)
        sub = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.symlink(str(outside), "link", dir_fd=fd)
    os.close(fd)
    os.chmod(top / "d", 0o555)  # a read-only folder on the way
    force_rmtree(top)
    assert not top.exists()
    assert (outside / "keep.txt").read_text() == "keep"
    force_rmtree(tmp_path / "does-not-exist")  # never raises


def test_non_utf8_file_name_is_refused_naming_the_file(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_ok.py").write_text("def test_a():\n    pass\n")
    bad = os.fsdecode(b"helper\xff.py")
    (suite / bad).write_text("X = 1\n")
    with pytest.raises(NonUtf8Name, match=r"helper\\udcff\.py: file name is not valid UTF-8"):
        tree_sha256(suite)
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--task", str(TASK), "--suite", str(suite)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "helper\\udcff.py: file name is not valid UTF-8" in err and "Traceback" not in err


class NeverRuns:
    """A SuiteRunner for tool calls that must not run the suite."""

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits) -> Outcome:
        raise AssertionError(f"the suite {suite_dir} was run")


def test_agent_write_file_refuses_a_lone_surrogate(tmp_path):
    sim_task = load_task(Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01")
    from testhelix.agent.tools import AgentWorkspace, ToolBox
    from testhelix.llm.base import ToolCall

    ws = AgentWorkspace.create(tmp_path / "ws", sim_task.initial_dir)
    box = ToolBox(ws, NeverRuns(), limits=Limits(), output_chars=300, writable=("suite", "repair"))
    out = box.execute(ToolCall("c1", "write_file", {"path": "suite/test_\udcff.py", "content": "x"}))
    assert out.startswith("refused") and "not a valid UTF-8 file name" in out
    assert not any((ws.root / "suite").iterdir()) if (ws.root / "suite").exists() else True


def _fake_v2(root: Path) -> Path:
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu memory pids\n")
    (root / "cgroup.subtree_control").write_text("")
    return root


def test_cgroup_v2_limits_are_written(tmp_path):
    root = _fake_v2(tmp_path / "cg")
    groups = Cgroups.detect(root)
    assert groups.kind == "v2"
    (root / "testhelix-prism" / "j1").mkdir(parents=True)  # plain folders: pre-create what the kernel would
    os.rmdir(root / "testhelix-prism" / "j1")
    cg = groups.create("j1", Limits(memory_mb=300, nproc=17))
    assert cg is not None
    d = root / "testhelix-prism" / "j1"
    assert (d / "memory.max").read_text() == str(300 * 1024 * 1024)
    assert (d / "pids.max").read_text() == "17"
    assert "+memory" in (root / "testhelix-prism" / "cgroup.subtree_control").read_text()
    assert cg.exceeded() is None
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cg.exceeded() == "memory"
    (d / "memory.events").write_text("oom_kill 0\n")
    (d / "pids.events").write_text("max 2\n")
    assert cg.exceeded() == "processes"


def test_cgroup_v1_job_cpu_group_sits_beside_the_harness(tmp_path):
    """memory and pids under one parent; cpu beside the harness's own group, so that under CPU
    contention each job weighs one process, not all jobs together one process."""
    root = tmp_path / "cg"
    for ctrl in ("memory", "pids", "cpu"):
        (root / ctrl / own_v1_group("cpu").lstrip("/")).mkdir(parents=True, exist_ok=True)
    groups = Cgroups.detect(root)
    assert groups.kind == "v1"
    cg = groups.create("j1", Limits(memory_mb=300, nproc=17))
    assert cg is not None
    assert cg.dirs["memory"] == root / "memory" / PARENT / "j1"
    assert cg.dirs["cpu"] == root / "cpu" / own_v1_group("cpu").lstrip("/") / f"{PARENT}-j1"
    assert (cg.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(300 * 1024 * 1024)
    assert (cg.dirs["pids"] / "pids.max").read_text() == "17"
    assert (cg.dirs["cpu"] / "cpu.cfs_quota_us").read_text() == (cg.dirs["cpu"] / "cpu.cfs_period_us").read_text()


def test_own_v1_group_reads_the_hierarchy_line(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/process_api/x\n2:cpu,cpuacct:/some/group\n0::/\n")
    assert own_v1_group("cpu", proc) == "/some/group"
    assert own_v1_group("memory", proc) == "/process_api/x"
    assert own_v1_group("pids", proc) == "/"
    assert own_v1_group("cpu", tmp_path / "missing") == "/"


def test_no_cgroup_hierarchy_means_no_cgroups(tmp_path):
    assert Cgroups.detect(tmp_path / "nothing").kind == "none"


def test_trusted_suites_get_their_own_pool():
    from testhelix.execution.executor import ForkServerExecutor

    ex = ForkServerExecutor(workers=1)
    try:
        trusted = ex.trusted()
        assert trusted is not ex and trusted.staging != ex.staging and ex.trusted() is trusted
    finally:
        ex.close()

"""The host side stays small whatever a suite's shape (issue 28): the judge and its compile helpers
under a suite that holds a 6 MB module it never imports, a module just under the compile limit,
a deep nest and thousands of files; a sparse 1 GiB file is refused before anything reads it. And
the compile helper really runs under its memory and CPU rlimits.

The peak is measured with wait4 on a `testhelix evaluate` process run as a user runs it: the
largest resident set of that process and of every process it waited for (its compile helpers,
its fork servers), so no in-process state of the test run distorts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testhelix.execution import precompile
from testhelix.execution.sandbox import namespaces_available

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack" / "fx-clamp-m01"
TESTHELIX = Path(sys.executable).with_name("testhelix")
JUDGE_PEAK_MB = 400  # a suite is at most 64 MB (shape.py); the judge never holds it whole, let alone twice


def _bomb(root: Path) -> Path:
    suite = root / "bomb"
    suite.mkdir()
    (suite / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    (suite / "huge.py").write_text("x = [\n" + "1,\n" * (3 << 20) + "]\n")  # 6 MB, never imported
    (suite / "big.py").write_text("x = [\n" + "1,\n" * 340_000 + "]\n")  # just under the 1 MB compile limit
    deep = suite
    for _ in range(30):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("leaf")
    many = suite / "many"
    many.mkdir()
    for i in range(4000):
        (many / f"f{i}.txt").write_text(str(i))
    return suite


def _peak_of(argv: list[str], cwd: Path) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak resident set in MB over the process and what it waited for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    with open(cwd / "stderr.txt", "w+b") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd)
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return proc.returncode, out, err.read().decode(errors="replace"), usage.ru_maxrss // 1024


@needs_ns
@pytest.mark.slow
def test_the_judge_stays_small_under_a_compile_bomb(tmp_path):
    if not TESTHELIX.exists():
        pytest.skip("the testhelix command is not installed beside this interpreter")
    suite = _bomb(tmp_path)
    rc, out, _, peak_mb = _peak_of([str(TESTHELIX), "evaluate", "--task", str(TASK), "--suite", str(suite), "--json",
                                 "--workers", "2"], tmp_path)
    assert rc == 0
    result = json.loads(out)
    assert all(o["outcome"] == "pass" for o in result["outcomes"].values()), result["outcomes"]
    print(f"judge peak RSS (with helpers and servers) under the compile bomb: {peak_mb} MB")
    assert peak_mb < JUDGE_PEAK_MB
    sparse = tmp_path / "sparse"
    sparse.mkdir()
    (sparse / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    with open(sparse / "data.bin", "wb") as f:
        f.truncate(1 << 30)
    rc, _, err, sparse_peak_mb = _peak_of([str(TESTHELIX), "evaluate", "--task", str(TASK), "--suite", str(sparse),
                                        "--json", "--workers", "2"], tmp_path)
    assert rc == 2 and "suite refused" in err and "limit per file" in err  # bad input, named; nothing ran
    print(f"judge peak RSS with a sparse 1 GiB file: {sparse_peak_mb} MB")
    assert sparse_peak_mb < JUDGE_PEAK_MB


def test_the_compile_helper_runs_under_memory_and_cpu_limits(tmp_path, monkeypatch):
    """The helper's rlimits as the kernel holds them (read from /proc while it runs), and a memory
    limit too small for an interpreter stops it: nothing is compiled."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "big.py").write_text("x = [\n" + "1,\n" * 340_000 + "]\n")
    seen: list[str] = []
    real_popen = subprocess.Popen

    class Watched(real_popen):  # type: ignore[misc,valid-type]
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            try:  # exec has succeeded when Popen returns; the helper is not waited for yet
                seen.append(Path(f"/proc/{self.pid}/limits").read_text())
            except OSError:
                pass

    monkeypatch.setattr(subprocess, "Popen", Watched)
    precompile.compile_in_helper([(tree, "/workspace")])
    assert (tree / "__pycache__").is_dir()
    limits = {line[:26].strip(): line[26:].split() for line in seen[0].splitlines()[1:]}
    assert limits["Max address space"][:2] == [str(precompile.HELPER_MEMORY_MB << 20)] * 2
    assert limits["Max cpu time"][:2] == [str(precompile.HELPER_CPU_S), str(precompile.HELPER_CPU_S + 1)]
    small = tmp_path / "small"
    small.mkdir()
    (small / "mod.py").write_text("x = 1\n")
    monkeypatch.setattr(precompile, "HELPER_MEMORY_MB", 8)  # too little to start Python at all
    precompile.compile_in_helper([(small, "/workspace")])
    assert not (small / "__pycache__").exists()

"""A copy that a full disk stops half-way, then the same command again (issue #35): the work folder
is never reused as it was left, the program copy the agents read matches the initial program's
digest, and the results and the accounting of the finished attempt equal an uninterrupted run's
(the calls of the attempt the disk stopped stay recorded, marked abandoned)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import duckdb
import pytest

from testhelix.agent import tools
from testhelix.commands.cli import main
from testhelix.core.digest import tree_sha256

pytestmark = pytest.mark.slow
ARGS = ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model", "sim:strong", "--limit", "1",
        "--workers", "1"]


def _run(run_dir: Path) -> int:
    try:
        main([*ARGS, "--run", str(run_dir)])
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def _results(run_dir: Path) -> tuple[list, list]:
    conn = duckdb.connect(str(run_dir / "run.duckdb"), read_only=True)
    try:
        results = conn.execute("SELECT * EXCLUDE (wall_s, attempt_id, detail) FROM task_results ORDER BY ALL").fetchall()
        calls = conn.execute("SELECT attempt_status, count(*), sum(input_tokens), sum(output_tokens) "
                             "FROM model_call_accounting GROUP BY 1 ORDER BY 1").fetchall()
        return results, calls
    finally:
        conn.close()


def test_a_copy_cut_short_by_a_full_disk_is_not_reused(tmp_path, monkeypatch, capsys):
    straight = tmp_path / "straight"
    assert _run(straight) == 0
    want_results, want_calls = _results(straight)

    copies = {"n": 0}
    real_copytree = shutil.copytree

    def full_after_one_file(src, dst, *args, **kwargs):
        if Path(dst).name not in ("program", ".program.partial"):  # only the agents' program copies
            return real_copytree(src, dst, *args, **kwargs)
        copies["n"] += 1
        first = sorted(p for p in Path(src).rglob("*.py"))[0]
        target = Path(dst) / first.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")  # what a full disk leaves: the file exists, its content does not
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(tools.shutil, "copytree", full_after_one_file)
    cut = tmp_path / "cut"
    assert _run(cut) == 2
    err = capsys.readouterr().err
    assert "no space left on device" in err and "Traceback" not in err
    assert copies["n"] == 1
    monkeypatch.setattr(tools.shutil, "copytree", real_copytree)

    assert _run(cut) == 0  # the same command again, space freed
    got_results, got_calls = _results(cut)
    assert got_results == want_results
    finished = [row for row in got_calls if row[0] != "abandoned"]
    assert finished == want_calls  # the finished attempt's accounting is the uninterrupted run's
    initial = sorted((straight / "work").rglob("program"))[0]
    programs = sorted((cut / "work").rglob("program"))
    assert programs and not list((cut / "work").rglob(".*.partial"))
    for program in programs:
        assert tree_sha256(program) == tree_sha256(initial)  # every program copy is whole

"""Small things a newcomer meets: output files follow the umask, `testhelix sql` keeps whole column
names without a terminal, `--limit` samples across katas, `run --help` shows no internal line."""

from __future__ import annotations

import os
import stat
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from testhelix.commands.cli import cli
from testhelix.core import atomic
from testhelix.store.runstore import RunStore
from testhelix.tasks.splits import sample_across_groups


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_atomic_output_follows_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        atomic.write_text(tmp_path / "frozen.json", "{}")
        atomic.write_bytes(tmp_path / "report.md", b"# r\n")
    finally:
        os.umask(old)
    for name in ("frozen.json", "report.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~mask


def test_sql_without_a_terminal_prints_whole_column_names(tmp_path):
    RunStore(tmp_path / "run").close()
    query = "SELECT 'n001' AS node_identifier_of_the_search, 'diagnosis' AS optimizer_session_name"
    result = CliRunner().invoke(cli, ["sql", str(tmp_path / "run"), query])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["node_identifier_of_the_search\toptimizer_session_name", "n001\tdiagnosis"]


def _tasks():
    return [SimpleNamespace(id=f"{kata}-m{i:02d}", kata=kata) for kata in ("a", "b", "c", "d") for i in range(5)]


def test_limit_samples_across_katas_seeded():
    tasks = _tasks()
    five = sample_across_groups(tasks, 5, 42, lambda t: t.kata)
    assert len(five) == 5 and {t.kata for t in five} == {"a", "b", "c", "d"}
    assert five == sample_across_groups(tasks, 5, 42, lambda t: t.kata)          # same seed, same sample
    assert [tasks.index(t) for t in five] == sorted(tasks.index(t) for t in five)  # split order kept
    samples = {tuple(t.id for t in sample_across_groups(tasks, 3, seed, lambda t: t.kata)) for seed in range(6)}
    assert len(samples) > 1                                                        # the seed matters
    assert sample_across_groups(tasks, 50, 1, lambda t: t.kata) == tasks


def test_run_help_shows_the_limit_rule_and_no_internal_line():
    text = CliRunner().invoke(cli, ["run", "--help"], terminal_width=100).output
    assert "Returns the exit status" not in text and "plumbing" not in text
    assert "--first" in text and "sample" in text

"""The closing summaries of `autosaddler search` and `autosaddler gate` fit 80 columns in a log
(output not a terminal), with prose wrapped at spaces only and table rows clipped."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from autosaddler.commands.search import print_summary
from autosaddler.gate import decide, explain, read_outcomes_csv
from testhelix.core.plaintext import ELLIPSIS, clip, output_width, wrap
from tests.autosaddler.test_release_ledger import challenger_file, gate, offline_gate  # noqa: F401 - offline_gate is a fixture


def words(text: str) -> list[str]:
    return text.split()


def test_wrap_breaks_at_spaces_only_and_clip_marks_a_cut_row() -> None:
    text = "next: `autosaddler freeze runs/a-very-long/run-folder --out runs/a-very-long/run-folder/frozen.json` ok"
    wrapped = wrap(text, 40)
    assert words(wrapped) == words(text)  # nothing lost, no word split
    assert "runs/a-very-long/run-folder/frozen.json`" in wrapped.split()
    assert all(len(line) <= 40 or " " not in line.strip() for line in wrapped.splitlines())
    assert all(line.startswith("  ") for line in wrapped.splitlines()[1:])  # continuation lines hang
    assert wrap("  - item one two three", 12).splitlines()[1].startswith("    ")  # keeps the item's indent
    assert clip("x" * 100, 80) == "x" * 79 + ELLIPSIS and clip("short", 80) == "short"
    assert output_width(io.StringIO()) == 80  # not a terminal


def test_search_summary_fits_80_columns_without_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200)  # a wide console: the log width still wins off a terminal
    run = Path("runs/demo")
    summary = {"wall_s": 69.4, "nodes": 5, "status": {"root": 1, "screened_out": 4},
               "best": {"node": "n000", "dev_score": 0.8125}, "simulated": True}
    print_summary(console, summary, run)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "runs/demo/frozen.json`" in text.split() and "runs/demo/search-report.html`" in text.split()
    assert "simulated test doubles" in " ".join(words(text)) and "best: n000 with development 81.2%" in text


def test_gate_from_outcomes_piped_fits_80_columns(tmp_path: Path) -> None:
    csv = tmp_path / "outcomes.csv"
    csv.write_text("task,challenger,baseline\n" + "".join(f"t{i},{int(i % 3 > 0)},{int(i % 4 > 0)}\n"
                                                          for i in range(30)))
    done = subprocess.run([str(Path(sys.executable).parent / "autosaddler"), "gate", "--outcomes", str(csv)],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    why = explain(decide(read_outcomes_csv(csv)))
    assert words(why) == words(done.stdout[done.stdout.index("Why:"):done.stdout.index("diagnostics (")])  # wrapped, nothing lost


def test_gate_run_summary_fits_80_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          offline_gate: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.chdir(tmp_path)  # a short run folder: a path is one word and is never split
    code, out, _ = gate(Path("."), capsys, "g1", challenger_file(tmp_path))
    assert code == 0 and "PROMOTED" in out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "g1/gate_report.md:" in out.split() and "`autosaddler" in out.split()

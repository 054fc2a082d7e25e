"""One vocabulary for the metrics: the Markdown report, the HTML page, MLflow's metric names,
`testhelix evaluate` and the README's glossary all use the names of the metric table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.prism.metric_table import COUNTS, INDICATORS, METRICS, PAIRED, by_indicator
from testhelix.prism.report import PAIRED_METRICS
from testhelix.store.runstore import RunStore
from testhelix.view import render_run_report
from tests.prism.test_report import PERFECT, record

ROOT = Path(__file__).resolve().parents[2]
OLD_LABELS = ("Valid Acceptance |", "Invalid Rejection |", "Joint Success |", "Reference Acceptance |",
              "Reference Acceptance (F)", "Joint Success (S)")


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    store = RunStore(tmp_path / "run")
    record(store, "sim:m/A", "t1", {**PERFECT, "alt2": "fail"}, delta_c=0.5, entry_coverage=0.25, tokens=100, calls=2)
    record(store, "sim:m/C", "t1", PERFECT, delta_c=1.0, entry_coverage=1.0, tokens=10, calls=1)
    store.close()
    return tmp_path / "run"


def test_the_table_names_each_metric_once() -> None:
    keys = [m.key for m in (*METRICS, *COUNTS)]
    assert len(keys) == len(set(keys))
    assert len({m.abbreviation for m in METRICS}) == len(METRICS)
    assert PAIRED_METRICS == tuple(m.indicator for m in PAIRED)
    assert {m.indicator for m in PAIRED} == set(INDICATORS)
    assert by_indicator("F").key == "reference_acceptance" and by_indicator("S").key == "joint_success"


def test_markdown_and_html_reports_use_the_table_labels(run_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(run_dir)])
    assert exit_info.value.code == 0
    markdown = capsys.readouterr().out
    header = next(line for line in markdown.splitlines() if line.startswith("| run |"))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == \
        [m.label for m in (COUNTS[0], *METRICS, *COUNTS[1:])]
    for metric in METRICS:
        assert f"- {metric.label}: {metric.meaning}." in markdown
    assert "| F (RAR) |" in markdown and "| S (JSF) |" in markdown  # the paired rows name the split metric
    render_run_report(run_dir, tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    for metric in METRICS:
        assert f"<th>{metric.label}</th>" in html
    for old in OLD_LABELS:
        assert old not in markdown and old not in html


def test_evaluate_prints_a_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from testhelix.commands.evaluate import _print_task

    _print_task({"task": "t1", "outcomes": {}, "F": 1, "A": 0.75, "R": 0.6, "S": 0})
    printed = capsys.readouterr().out
    assert "F=1  A=0.75  R=0.60  S=0" in printed
    for symbol in INDICATORS:
        assert f"{symbol} = " in printed


def test_the_readme_glossary_names_every_metric() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    glossary = readme[readme.index("## Glossary"):]
    glossary = glossary[:glossary.index("\n## ", 4)]
    for metric in METRICS:
        assert re.search(rf"\*\*{re.escape(metric.name)}\*\*", glossary), metric.name
        assert metric.abbreviation in glossary
    for symbol in INDICATORS:
        assert f"**{symbol}**" in glossary
    for config in "ABCDE":
        assert re.search(rf"^- \*\*{config}\*\*", glossary, re.M), config

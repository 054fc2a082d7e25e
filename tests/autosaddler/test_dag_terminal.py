"""`autosaddler dag` reads at 80 columns: every node's edit and reason whole (wrapped or stacked,
never cut with an ellipsis), and every file it writes is named where it went."""

from __future__ import annotations

from click.testing import CliRunner

from autosaddler.cli import cli
from autosaddler.edits import in_words
from testhelix.strategy.model import Strategy
from tests.autosaddler.autosaddler_fakes import CountingEvaluator
from tests.autosaddler.test_search import make_search


def test_the_dag_at_80_columns_shows_every_edit_whole(tmp_path, monkeypatch):
    dag = make_search(tmp_path, CountingEvaluator()).run(Strategy())
    monkeypatch.setenv("COLUMNS", "80")
    r = CliRunner().invoke(cli, ["dag", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines and max(len(line) for line in lines) <= 80
    assert "…" not in r.output                                   # nothing cut with a truncation mark
    flat = " ".join(r.output.split())
    for n in dag.nodes():
        parent = dag.parent(n.node_id)
        edit = in_words(n.edit, dag.node(parent).strategy if parent else None, width=1_000_000)
        assert " ".join(edit.split()) in flat, edit
        assert " ".join(n.reason.split()) in flat
    assert "screened out" in flat and "Test eviction order." in flat


def test_the_dag_is_a_table_on_a_wide_terminal_and_names_what_it_wrote(tmp_path, monkeypatch):
    make_search(tmp_path, CountingEvaluator()).run(Strategy())
    monkeypatch.setenv("COLUMNS", "200")
    png, graph = tmp_path / "d.png", tmp_path / "d.graphml"
    r = CliRunner().invoke(cli, ["dag", str(tmp_path / "run"), "--png", str(png), "--graphml", str(graph)])
    assert r.exit_code == 0, r.output
    assert "minibatch parent→child" in r.output and "…" not in r.output
    assert f"wrote the DAG and the scores by iteration as PNG: {png}" in r.output and png.stat().st_size > 1000
    assert f"wrote the DAG as GraphML: {graph}" in r.output

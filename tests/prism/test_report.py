"""`testhelix report` on a small hand-built run store."""

from __future__ import annotations

import json

import pytest

from testhelix.commands.cli import main
from testhelix.commands.report import render_markdown
from testhelix.prism.report import collect
from testhelix.store.runstore import RunStore

PANEL = {"initial": "initial", "reference": "reference", "alt1": "alternative", "alt2": "alternative",
         "inv1": "invalid", "inv2": "invalid"}
PERFECT = {"initial": "fail", "reference": "pass", "alt1": "pass", "alt2": "pass", "inv1": "fail", "inv2": "fail"}


def record(store, label, task, statuses, **result):
    rows = [{"program_id": p, "role": PANEL[p], "label": "invalid" if PANEL[p] == "invalid" else "valid",
             "status": s, "reason": None} for p, s in statuses.items()]
    store.record_task_outcomes(label, task, rows)
    store.record_task_result({"run_label": label, "task_id": task, "submitted": True, **result})


@pytest.fixture()
def run_dir(tmp_path):
    store = RunStore(tmp_path)
    # A: t1 F=1 A=.5 R=1 S=0; t2 no suite
    record(store, "sim:m/A", "t1", {**PERFECT, "alt2": "fail"}, delta_c=0.5, entry_coverage=0.25, tokens=100, calls=2)
    store.record_task_result({"run_label": "sim:m/A", "task_id": "t2", "submitted": False, "tokens": 50, "calls": 1})
    # B: t1 perfect; t2 F=1 A=1 R=.5 S=0
    record(store, "sim:m/B", "t1", PERFECT, delta_c=1.0, entry_coverage=0.5, tokens=10, calls=1)
    record(store, "sim:m/B", "t2", {**PERFECT, "inv2": "pass"}, delta_c=0.5, entry_coverage=None, tokens=20, calls=1)
    # C: both perfect; no per-task token totals, so the ledger is used
    record(store, "sim:m/C", "t1", PERFECT, delta_c=1.0, entry_coverage=1.0)
    record(store, "sim:m/C", "t2", PERFECT)
    for tokens in (7, 8):
        store.record_model_call({"run_label": "sim:m/C", "task_id": "t1", "role": "gen", "input_tokens": tokens,
                                 "output_tokens": 1})
    store.close()
    return tmp_path


def by_label(data):
    return {r["run_label"]: r for r in data["runs"]}


def test_metrics_by_hand(run_dir):
    store = RunStore(run_dir, read_only=True)
    data = collect(store)
    store.close()
    runs = by_label(data)
    a, b, c = runs["sim:m/A"], runs["sim:m/B"], runs["sim:m/C"]
    assert (a["n"], a["reference_acceptance"], a["joint_success"]) == (2, 0.5, 0.0)
    assert (a["valid_acceptance"], a["invalid_rejection"], a["missing_tasks"]) == (0.5, 1.0, 1)
    assert a["h"] == pytest.approx(0.6667)  # 2*50*100/150 = 66.666.. -> 66.67 %
    assert (b["reference_acceptance"], b["joint_success"], b["invalid_rejection"]) == (1.0, 0.5, 0.75)
    assert b["h"] == pytest.approx(0.8571)  # 2*100*75/175 = 85.714.. -> 85.71 %
    assert c["h"] == 1.0 and c["joint_success"] == 1.0
    # coverage: mean of measured values, missing counted, never zero-filled
    assert (a["delta_c"], a["delta_c_missing"], a["entry_coverage_missing"]) == (0.5, 1, 1)
    assert (b["delta_c"], b["entry_coverage"], b["entry_coverage_missing"]) == (0.75, 0.5, 1)
    assert (a["tokens"], a["calls"], b["tokens"], b["calls"]) == (150, 3, 30, 2)
    assert (c["tokens"], c["calls"]) == (17, 2)  # from the model-call ledger


def test_paired_differences_and_curves(run_dir):
    store = RunStore(run_dir, read_only=True)
    data = collect(store)
    store.close()
    paired = {(p["from"], p["to"], p["metric"]): p for p in data["paired"]}
    assert set(k[:2] for k in paired) == {("A", "B"), ("A", "C"), ("B", "C")}  # every pair the run holds
    s_ab = paired[("A", "B", "S")]
    assert (s_ab["n"], s_ab["delta"], s_ab["improved"], s_ab["worsened"]) == (2, 0.5, 1, 0)
    assert paired[("A", "B", "F")]["delta"] == 0.5  # the missing t2 scores F=0 for A
    assert paired[("A", "B", "A")]["n"] == 1  # A is undefined for A's missing t2
    assert paired[("B", "C", "R")]["delta"] == pytest.approx(0.25)
    curve_a = [p for p in data["curves"]["sim:m/A"] if p["schedule"] == "valid"]
    # k=1: mean F = .5; one alternative of two correct on t1 -> (1/2)/2; both -> 0
    assert [p["expected_joint"] for p in curve_a] == pytest.approx([0.5, 0.25, 0.0])
    curve_c = data["curves"]["sim:m/C"]
    assert all(p["expected_joint"] == 1.0 for p in curve_c)
    assert max(p["k"] for p in curve_c if p["schedule"] == "alternating") == 5
    assert len(data["correlations"]) == 6


def test_command_writes_report_and_figures(run_dir, tmp_path, capsys):
    out_png = tmp_path / "figs" / "curves.png"
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(run_dir), "--curves", str(out_png)])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "| sim:m/B | 2 | 100.00% | 100.00% | 75.00% | 85.71% | 50.00% | 75.00% | 50.00% (1 missing) | 30 | 2 |" in printed
    assert "A→B" in printed
    assert (run_dir / "report.md").read_text().startswith("# TestPrism report")
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run_dir / "panel_curves.png").exists()


def test_command_json(run_dir, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(run_dir), "--json"])
    assert exit_info.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert by_label(data)["sim:m/A"]["h"] == pytest.approx(0.6667)


def test_missing_store_is_a_user_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path / "nowhere")])
    assert exit_info.value.code == 2
    assert "no run store" in capsys.readouterr().err


def test_empty_store_is_a_user_error(tmp_path, capsys):
    RunStore(tmp_path).close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "no evaluated tasks" in capsys.readouterr().err


def test_bad_status_in_store_is_named(tmp_path, capsys):
    store = RunStore(tmp_path)
    record(store, "x", "t1", {**PERFECT, "alt1": "passed"})
    store.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "alt1" in capsys.readouterr().err


def test_markdown_marks_undefined_values():
    data = {"runs": [{"run_label": "x", "n": 1, "reference_acceptance": 0.0, "valid_acceptance": None,
                      "invalid_rejection": None, "h": None, "joint_success": 0.0, "delta_c": None,
                      "delta_c_missing": 1, "entry_coverage": None, "entry_coverage_missing": 1,
                      "tokens": None, "calls": None}], "paired": [], "correlations": []}
    text = render_markdown(data)
    assert "| x | 1 | 0.00% | — | — | — | 0.00% | — (1 missing) | — (1 missing) | — | — |" in text


def test_panel_diversity_from_the_pack(tmp_path, capsys):
    from pathlib import Path

    from testhelix.prism import panel as P
    from testhelix.tasks.task import load_task

    pack = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack"
    store = RunStore(tmp_path)
    record(store, "sim:m/A", "fx-clamp-m01", PERFECT)
    record(store, "sim:m/A", "not-in-the-pack", PERFECT)
    store.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--pack", str(pack), "--json"])
    assert exit_info.value.code == 0
    div = json.loads(capsys.readouterr().out)["panel_diversity"]
    task = load_task(pack / "fx-clamp-m01")
    expected = P.panel_diversity(P.program_features(c.artifact for c in task.candidates))
    assert (div["n"], div["not_in_pack"]) == (1, 1) and 0 < div["mean"] <= 1
    assert div["per_task"] == {"fx-clamp-m01": round(expected, 4)} and len(task.candidates) >= 3
    assert "## Panel diversity" in (tmp_path / "report.md").read_text()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--pack", str(tmp_path / "nope")])
    assert exit_info.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_incomplete_run_divides_by_the_planned_split(tmp_path):
    store = RunStore(tmp_path)
    store.record_run("sim:m/D", "helix", {"tasks": 4})
    record(store, "sim:m/D", "t1", PERFECT)
    record(store, "sim:m/D", "t2", {**PERFECT, "initial": "pass"})  # F=0
    no_suite = [{"program_id": p, "role": r, "label": "x", "status": "error", "reason": "missing entry"}
                for p, r in PANEL.items()]
    store.record_task_outcomes("sim:m/D", "t3", no_suite)
    store.record_task_result({"run_label": "sim:m/D", "task_id": "t3", "submitted": False})
    data = collect(store)
    store.close()
    d = by_label(data)["sim:m/D"]
    # planned 4, finished 3: RAR = 1/4 (t1), JSF = 1/4; VAR = (1 + 1 + 0)/3, IRR = (1 + 1 + 0)/3
    assert (d["finished"], d["planned"], d["n"]) == (3, 4, 4)
    assert (d["reference_acceptance"], d["joint_success"]) == (0.25, 0.25)
    assert d["valid_acceptance"] == pytest.approx(2 / 3) and d["invalid_rejection"] == pytest.approx(2 / 3)
    assert "| sim:m/D | 3/4 |" in render_markdown(data)


def test_prefix_diversity_follows_the_seed_formula(tmp_path, capsys):
    """Fig. 3(a): nested prefixes of a seeded random addition order, reference always kept, the
    mean pairwise AST Jaccard distance of each prefix (0 for the reference alone), per schedule."""
    from itertools import combinations
    from pathlib import Path

    from testhelix.prism import panel as P
    from testhelix.prism.astfeatures import ast_features, jaccard_distance
    from testhelix.tasks.task import load_task

    pack = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack"
    store = RunStore(tmp_path)
    record(store, "sim:m/A", "fx-clamp-m01", PERFECT)
    store.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--pack", str(pack), "--json"])
    assert exit_info.value.code == 0
    prefix = json.loads(capsys.readouterr().out)["panel_diversity"]["prefix"]
    task = load_task(pack / "fx-clamp-m01")
    feats = {c.id: ast_features(c.artifact) for c in task.candidates}
    valid = [c.id for c in task.candidates if c.role == "alternative"]
    invalid = [c.id for c in task.candidates if c.role == "invalid"]
    for schedule in P.SCHEDULES:
        order = P.addition_order(valid, invalid, schedule, seed=42)
        expected = []
        for j in range(len(order) + 1):  # computed here from the definition, not with the library helper
            members = [feats[task.reference.id]] + [feats[c] for c in order[:j]]
            pairs = list(combinations(members, 2))
            expected.append(round(sum(jaccard_distance(p, q) for p, q in pairs) / len(pairs), 4) if pairs else 0.0)
        assert [p["diversity"] for p in prefix[schedule]] == expected
        assert [p["k"] for p in prefix[schedule]] == list(range(1, len(order) + 2))
        assert all((p["tasks"], p["all_tasks"]) == (1, 1) for p in prefix[schedule])
    assert len(prefix["alternating"]) == 1 + len(P.addition_order(valid, invalid, "alternating", seed=42))
    assert "Prefix diversity by addition schedule (Fig. 3(a))" in (tmp_path / "report.md").read_text()


def test_curves_reach_the_largest_panel_and_say_how_many_tasks_each_point_averages(tmp_path, capsys):
    store = RunStore(tmp_path)
    record(store, "sim:m/A", "t1", PERFECT)
    bigger = {**PERFECT, "alt3": "pass"}  # t2's panel has a third alternative
    rows = [{"program_id": p, "role": PANEL.get(p, "alternative"), "label": "valid" if p != "inv1" and p != "inv2"
             else "invalid", "status": s, "reason": None} for p, s in bigger.items()]
    store.record_task_outcomes("sim:m/A", "t2", rows)
    store.record_task_result({"run_label": "sim:m/A", "task_id": "t2", "submitted": True})
    store.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--json"])
    assert exit_info.value.code == 0
    data = json.loads(capsys.readouterr().out)
    valid = [p for p in data["curves"]["sim:m/A"] if p["schedule"] == "valid"]
    assert [(p["k"], p["tasks"], p["all_tasks"]) for p in valid] == [(1, 2, 2), (2, 2, 2), (3, 2, 2), (4, 1, 2)]
    text = (tmp_path / "report.md").read_text()
    assert "## Panel-size curves" in text
    assert "- sim:m/A, valid: k=1 100.00%, k=2 100.00%, k=3 100.00%, k=4 100.00% (1 of 2 tasks); ends at k = 4" in text
    assert (tmp_path / "panel_curves.png").exists()

import json

import pytest
from click.testing import CliRunner

from autosaddler.cli import cli
from autosaddler.gate import PairedOutcome, decide, mcnemar_one_sided, read_outcomes_csv
from testhelix.core.errors import UserError


def outcomes(both, neither, wins, losses):
    rows = [(1, 1)] * both + [(0, 0)] * neither + [(1, 0)] * wins + [(0, 1)] * losses
    return [PairedOutcome(f"t{i}", c, b) for i, (c, b) in enumerate(rows)]


def write_csv(path, rows):
    path.write_text("task,challenger,baseline\n" + "".join(f"{o.task},{o.challenger},{o.baseline}\n" for o in rows))
    return path


def test_seed_worked_example():
    r = decide(outcomes(46, 40, 12, 2))
    assert (r.challenger_successes, r.baseline_successes, r.wins, r.losses, r.n) == (58, 48, 12, 2, 100)
    assert f"{r.p_value:.6f}" == "0.006470"
    assert r.promoted and r.difference == pytest.approx(0.10)
    assert r.ci99[0] <= r.ci95[0] <= 0.10 <= r.ci95[1] <= r.ci99[1]


def test_exact_tail_by_hand():
    # P(X >= 12 | n = 14, 1/2) = (C(14,12) + C(14,13) + C(14,14)) / 2^14
    assert mcnemar_one_sided(12, 2) == pytest.approx((91 + 14 + 1) / 2**14, rel=1e-12)
    assert mcnemar_one_sided(0, 0) is None
    assert mcnemar_one_sided(0, 3) == 1.0


def test_no_discordant_pairs_no_promotion():
    r = decide(outcomes(50, 50, 0, 0))
    assert r.p_value is None and not r.promoted


def test_negative_difference_never_promotes():
    assert not decide(outcomes(10, 10, 2, 12)).promoted


def test_borderline_not_significant():
    r = decide(outcomes(40, 40, 6, 2))  # p = 37/256 > 0.05
    assert r.p_value == pytest.approx(37 / 256) and not r.promoted


def test_bootstrap_is_seeded():
    assert decide(outcomes(46, 40, 12, 2)).ci95 == decide(outcomes(46, 40, 12, 2)).ci95


def test_cli_json_from_csv(tmp_path):
    f = write_csv(tmp_path / "o.csv", outcomes(46, 40, 12, 2))
    r = CliRunner().invoke(cli, ["gate", "--outcomes", str(f), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data) == {"promoted", "p_value", "wins", "losses", "challenger_successes", "baseline_successes",
                         "n", "difference", "ci95", "ci99", "why", "diagnostics"}
    assert data["promoted"] is True and round(data["p_value"], 6) == 0.00647
    text = CliRunner().invoke(cli, ["gate", "--outcomes", str(f)]).output
    assert "p = 0.006470" in text and "PROMOTED" in text


def test_bad_csv_cells_named(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("task,challenger,baseline\na,1,2\n,0,0\na,1,1\n")
    with pytest.raises(UserError) as err:
        read_outcomes_csv(f)
    paths = [p for p, _ in err.value.problems]
    assert "line 2, column baseline" in paths and "line 3, column task" in paths and "line 4, column task" in paths
    g = tmp_path / "cols.csv"
    g.write_text("task,x\n")
    with pytest.raises(UserError, match="missing column"):
        read_outcomes_csv(g)


def test_cli_bad_input_exit_2(tmp_path):
    from autosaddler.cli import main
    f = tmp_path / "bad.csv"
    f.write_text("task,challenger,baseline\na,yes,0\n")
    with pytest.raises(SystemExit) as exc:
        main(["gate", "--outcomes", str(f)])
    assert exc.value.code == 2


def test_the_gate_says_why_it_decided():
    from autosaddler.gate import explain, wins_needed
    none = explain(decide(outcomes(42, 27, 0, 0)))
    assert "not one task tells them apart" in none and "no evidence" in none
    assert "p = 0.006470" in explain(decide(outcomes(46, 40, 12, 2))) and "promoted" in explain(decide(outcomes(46, 40, 12, 2)))
    assert wins_needed(6) == 6 and wins_needed(10) == 9 and wins_needed(4) is None
    short = explain(decide(outcomes(40, 40, 4, 2)))
    assert "needs at least 6 of them" in short and "initial strategy stays" in short
    assert "did not do better" in explain(decide(outcomes(40, 40, 2, 3)))
    assert "froze its root" in explain(decide(outcomes(42, 27, 0, 0)), same_strategy=True)

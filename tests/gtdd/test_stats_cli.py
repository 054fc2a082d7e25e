"""The `gtdd` statistics commands: JSON output and exit code 2 on bad parameters."""

from __future__ import annotations

import json

import pytest

from gtdd.cli import main
from gtdd.stats.tables import render, seed_tables


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def run_json(argv, capsys):
    code, out, err = run(argv + ["--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_audit_size(capsys):
    got = run_json(["audit-size", "--population", "500", "--tolerance", "0.05", "--alpha", "0.05",
                    "--opportunities", "160"], capsys)
    assert set(got) == {"exact_n", "exponential_n", "q"}
    assert (got["exact_n"], got["exponential_n"]) == (131, 158)
    assert f"{got['q']:.6g}" == "0.000291773"


def test_audit_size_with_failures_allowed(capsys):
    got = run_json(["audit-size", "--population", "500", "--tolerance", "0.05", "--alpha", "0.05",
                    "--opportunities", "32", "--failures-allowed", "4"], capsys)
    assert got["exact_n"] == 221 and got["exponential_n"] is None


def test_audit_size_large_population(capsys):
    got = run_json(["audit-size", "--population", "10000000", "--tolerance", "0.05",
                    "--alpha", "0.05"], capsys)
    assert got["exact_n"] == 59 and got["q"] <= 0.05


def test_accept_prob(capsys):
    got = run_json(["accept-prob", "--population", "500", "--failures", "5", "--sample", "131"],
                   capsys)
    assert f"{got['probability']:.6f}" == "0.217358"


def test_history_bound(capsys):
    base = ["history-bound", "--population", "500", "--tolerance", "0.05", "--alpha", "0.05",
            "--rounds", "4", "--report-limit", "6"]
    assert run_json(base, capsys) == {"exact_n": 474, "exponential_n": 2308}
    assert run_json(base + ["--no-accept-bit"], capsys) == {"exact_n": 473, "exponential_n": 2267}


def test_probe(capsys):
    got = run_json(["probe", "--population", "500", "--sample", "200", "--region", "15",
                    "--report-limit", "6", "--rounds", "4", "--tolerance", "0.05"], capsys)
    assert got["union_lower_bound"] == 0.0 and f"{got['exact_success']:.4f}" == "0.2195"


def test_tables(capsys):
    code, out, _ = run(["tables"], capsys)
    assert code == 0 and out.strip() == render(seed_tables())
    tables = run_json(["tables"], capsys)
    assert [t["title"][:7] for t in tables] == ["Table 1", "Table 2", "Table 3", "Table 4"]


def test_recorded_audit(tmp_path, capsys):
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"trajectories": [[1500, 900, 40], [1200, 100]]}))
    got = run_json(["recorded-audit", "--counts", str(counts), "--population", "2000",
                    "--tolerance", "0.05", "--alpha", "0.05", "--opportunities", "4"], capsys)
    assert got["sample"] == 83
    assert 0 < got["expected_tolerable_acceptances"] <= 1
    assert 0 <= got["mean_no_acceptance"] <= 1


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["audit-size", "-N", "500", "--tolerance", "1.5", "--alpha", "0.05"], "tolerance"),
        (["audit-size", "-N", "500", "--tolerance", "0", "--alpha", "0.05"], "tolerance"),
        (["audit-size", "-N", "500", "--tolerance", "0.05", "--alpha", "1"], "alpha"),
        (["audit-size", "-N", "500", "--tolerance", "0.05", "--alpha", "x"], "alpha"),
        (["audit-size", "-N", "0", "--tolerance", "0.05", "--alpha", "0.05"], "population"),
        (["audit-size", "-N", "500", "--tolerance", "0.05", "--alpha", "0.05", "-M", "0"],
         "opportunities"),
        (["accept-prob", "-N", "500", "-K", "5", "-n", "501"], "sample"),
        (["accept-prob", "-N", "500", "-K", "-1", "-n", "5"], "failures"),
        (["accept-prob", "-N", "500", "-K", "1", "-n", "5", "--failures-allowed", "-1"],
         "failures-allowed"),
        (["history-bound", "-N", "500", "--tolerance", "0.05", "--alpha", "0.05", "-T", "4",
          "-k", "-6"], "report-limit"),
        (["probe", "-N", "500", "-n", "100", "-m", "400", "-k", "6", "-T", "4",
          "--tolerance", "0.05"], "region"),
    ],
)
def test_invalid_parameters_exit_2_naming_the_parameter(argv, named, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2
    assert named in err and "Traceback" not in err

"""`gtdd compare`: runs that differ in a setting, paired by block and policy, with the statistics of
`gtdd report`; runs that cannot be paired are refused with the difference named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest
from scipy import stats

from gtdd.cli import main
from gtdd.compare import Run, compare
from gtdd.report import paired_contrast
from tests.gtdd.test_loop_experiment import run_fake

POLICIES = ("static-property", "dynamic-informed")

pytestmark = pytest.mark.slow  # three small experiments on the fake domain


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    run_fake(root / "hidden", policies=POLICIES, blocks=2, rounds=2)
    run_fake(root / "visible", policies=POLICIES, blocks=2, rounds=2, fixed_tests="visible")
    run_fake(root / "weak", policies=POLICIES, blocks=2, rounds=2, coder="sim:weak")
    return root


def edit(run_dir: Path, sql: str, *params: object) -> None:
    conn = duckdb.connect(str(run_dir / "run.duckdb"))
    try:
        conn.execute(sql, list(params))
    finally:
        conn.close()


def test_runs_are_paired_by_block_and_policy_and_the_setting_that_differs_is_named(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = compare([runs / "hidden", runs / "visible", runs / "weak"])
    first, second, third = report["comparisons"]  # every pair of runs
    assert first["differences"] == {"fixed_tests": ["hidden", "visible"]}
    # another coder writes other first modules: still paired by block (the coder is what differs)
    assert third["differences"] == {"coder": ["sim:strong", "sim:weak"], "fixed_tests": ["visible", "hidden"]}
    assert second["pairs"] == 4
    assert (first["pairs"], first["blocks"], first["policies"]) == (4, 2, list(POLICIES))
    with pytest.raises(SystemExit) as done:
        main(["compare", str(runs / "hidden"), str(runs / "visible")])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "Settings that differ: fixed_tests: hidden (first) vs visible (second)" in out
    assert "simulated test doubles" in out and "exact two-sided McNemar" in out
    for rule in ("audit", "sequential", "regression-only", "public-screening"):
        assert f"{rule}: accepted" in out


def test_the_statistics_are_the_reports_on_the_paired_differences(runs: Path) -> None:
    a, b = Run(runs / "hidden"), Run(runs / "weak")
    section = compare([runs / "hidden", runs / "weak"])["comparisons"][0]
    keys = sorted(a.trajectories)
    # failure rate after the last round, computed here from the stored rows
    last = {run: {key: rs[-1]["failure_rate"] for key, rs in run.trajectories.items()} for run in (a, b)}
    diffs = np.array([last[a][key] - last[b][key] for key in keys])
    assert np.any(diffs != 0)  # the weak simulated coder leaves more defects: real differences to pair
    pooled = next(c for c in section["failure_rate"] if c["first"].startswith("all policies"))
    assert pooled["blocks"] == 4 and pooled["mean"] == pytest.approx(diffs.mean())
    assert pooled == paired_contrast(pooled["first"], "", diffs).__dict__
    # accepted (0/1): lower,higher are the discordant pairs, and the sign test is the exact McNemar test
    for rule, r in section["acceptance"].items():
        acc = {run: {key: run.acceptance(key, rule)["accepted"] for key in keys} for run in (a, b)}
        only_first = sum(acc[a][k] and not acc[b][k] for k in keys)
        only_second = sum(acc[b][k] and not acc[a][k] for k in keys)
        c = next(c for c in r["accepted_contrasts"] if c["first"].startswith("all policies"))
        assert (c["higher"], c["lower"]) == (only_first, only_second)
        expected = stats.binomtest(only_second, only_first + only_second, 0.5).pvalue if only_first + only_second \
            else None
        assert c["p_sign_test"] == (None if expected is None else pytest.approx(expected))
        assert r["accepted"] == {"first": sum(acc[a].values()), "second": sum(acc[b].values())}


def test_runs_that_cannot_be_paired_are_refused_naming_the_difference(
        runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def refused(*dirs: Path) -> str:
        with pytest.raises(SystemExit) as done:
            main(["compare", *map(str, dirs)])
        assert done.value.code == 2
        return capsys.readouterr().err

    other_seed = tmp_path / "seed"
    shutil.copytree(runs / "hidden", other_seed)
    row = duckdb.connect(str(other_seed / "run.duckdb"), read_only=True).execute(
        "SELECT config FROM gtdd_config WHERE key = 'experiment'").fetchone()
    assert row is not None
    config = json.loads(row[0])
    edit(other_seed, "UPDATE gtdd_config SET config = ? WHERE key = 'experiment'", json.dumps(config | {"seed": 7}))
    assert "seed 0 vs 7" in refused(runs / "hidden", other_seed)

    other_start = tmp_path / "start"
    shutil.copytree(runs / "hidden", other_start)
    edit(other_start, "UPDATE gtdd_blocks SET module = module || '\n# changed' WHERE block = 1")
    assert "block 1 starts from a different first module" in refused(runs / "visible", other_start)

    unfinished = tmp_path / "unfinished"
    shutil.copytree(runs / "hidden", unfinished)
    edit(unfinished, "DELETE FROM gtdd_rounds WHERE round = 2")
    assert "no (block, policy) trajectory is complete in both" in refused(runs / "visible", unfinished)

    assert "the same run folder twice" in refused(runs / "hidden", runs / "hidden")
    assert "at least two" in refused(runs / "hidden")

"""Differential challenges need at least two rounds: the rule holds in validation, in runs and in
the search space (one round would silently drop feedback and the challenge from C, D and E)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from autosaddler.edits import FieldEdit, RejectedEdit, apply_edit
from autosaddler.evaluator import HelixStrategyEvaluator
from testhelix.commands.cli import cli, main
from testhelix.core.errors import UserError
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.llm.registry import model_ref
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import SEARCH_MINIMUM, Strategy, check_run_compatibility, initial_strategy

KATAS = "katas"  # the bundled pack, by name


def one_round_file(tmp_path):
    path = tmp_path / "one-round.json"
    path.write_text(json.dumps(initial_strategy().model_dump(mode="json") | {"rounds": 1}))
    return path


def test_validate_refuses_one_round_and_explains_the_rule(tmp_path):
    path = one_round_file(tmp_path)
    r = CliRunner().invoke(cli, ["strategy", "validate", str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "rounds: is 1, must be >= 2 when differential challenges are on" in r.output
    assert "challenge is issued after round 1" in r.output
    as_json = CliRunner().invoke(cli, ["strategy", "validate", str(path), "--json"])
    doc = json.loads(as_json.output)
    assert as_json.exit_code == 2 and doc["valid"] is False and doc["errors"][0]["path"] == "rounds"
    # configurations without challenges accept one round
    for name in ("A", "B"):
        ok = CliRunner().invoke(cli, ["strategy", "validate", str(path), "--config", name])
        assert ok.exit_code == 0 and ok.output.startswith("valid  "), ok.output


@pytest.mark.parametrize("name,refused", [("A", False), ("B", False), ("C", True), ("D", True), ("E", True)])
def test_run_compatibility_per_configuration(name, refused):
    one = Strategy(rounds=1)
    if refused:
        with pytest.raises(UserError) as err:
            check_run_compatibility(one, get_config(name).challenge_steps)
        assert err.value.problems[0][0] == "rounds"
    else:
        check_run_compatibility(one, get_config(name).challenge_steps)


def test_an_evaluation_refuses_one_round_before_any_work(tmp_path):
    """Where a strategy meets a configuration (an evaluator's evaluation, `testhelix run`'s plans:
    config.strategy_run_config) it is refused before any job exists: the model factory is never
    called and nothing is stored. The runner trusts the configuration it is given."""
    def factory(*_):
        raise AssertionError("the pipeline must not start")

    runner = HelixRunner(RunStore(tmp_path / "run"), executor=None, work_root=tmp_path / "work",  # type: ignore[arg-type]
                         model_factory=factory, coverage=False)
    evaluator = HelixStrategyEvaluator(runner, {}, model_ref("sim:strong"), get_config("C"), "search")
    with pytest.raises(UserError, match="does not fit this run configuration"):
        evaluator.evaluate(Strategy(rounds=1), ["any-task"])


def test_testhelix_run_refuses_a_one_round_strategy_for_e(tmp_path, capsys):
    frozen = one_round_file(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["run", "--pack", str(KATAS), "--split", "test", "--config", "E", "--model", "sim:strong",
              "--strategy", str(frozen), "--run", str(tmp_path / "r")])
    assert exited.value.code == 2 and "rounds: is 1" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_search_space_lower_bound_is_two():
    assert SEARCH_MINIMUM == {"rounds": 2}
    assert Strategy.model_json_schema()["properties"]["rounds"]["x-search-minimum"] == 2
    with pytest.raises(RejectedEdit, match="below the search space's lower bound 2"):
        apply_edit(Strategy(rounds=3), FieldEdit(field="rounds", value=1))
    assert apply_edit(Strategy(rounds=3), FieldEdit(field="rounds", value=2)).rounds == 2

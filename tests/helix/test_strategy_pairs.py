"""The strategy's initialCandidates / maxCandidates govern K for configurations C and E."""

from __future__ import annotations

import json

import pytest

from testhelix.commands.cli import main
from testhelix.core.errors import UserError
from testhelix.helix.config import get_config, with_strategy_pairs
from testhelix.strategy.model import initial_strategy


def strategy(initial, most):
    return initial_strategy().model_copy(update={"initialCandidates": initial, "maxCandidates": most})


def test_c_and_e_take_k_from_the_strategy_and_a_b_d_keep_their_own():
    for name in ("C", "E"):
        assert with_strategy_pairs(get_config(name), strategy(2, 2)).pairs == 2
        assert with_strategy_pairs(get_config(name), initial_strategy()).pairs == 3  # the seed's value
    assert [with_strategy_pairs(get_config(n), strategy(2, 2)).pairs for n in "ABD"] == [1, 3, 5]


def test_unequal_candidate_counts_are_refused_naming_both():
    with pytest.raises(UserError, match="initialCandidates=2 and maxCandidates=4"):
        with_strategy_pairs(get_config("E"), strategy(2, 4))


def test_run_refuses_such_a_strategy_before_any_work(tmp_path, capsys):
    doc = json.loads(strategy(2, 4).model_dump_json())
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", "katas", "--split", "all", "--config", "E", "--model", "sim:strong",
              "--strategy", str(path), "--run", str(tmp_path / "r"), "--limit", "1"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "maxCandidates=4" in err and "Traceback" not in err

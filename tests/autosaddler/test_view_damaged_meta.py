"""`autosaddler view` on a store whose search metadata is damaged: a clear error, not a traceback."""

from __future__ import annotations

import pytest

from autosaddler.cli import main as saddler_cli
from autosaddler.dag import EvolutionDAG, Node
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy


@pytest.mark.parametrize("meta", [["pack", "model"], "sim:strong", 7])
def test_meta_that_is_not_an_object_is_a_clear_error(tmp_path, capsys, meta):
    run = tmp_path / "search"
    strategy = Strategy()
    store = RunStore(run)
    store.put_state("meta", meta)
    EvolutionDAG().record(store, Node(node_id="n000", iteration=0, strategy_hash=strategy.content_hash(),
                                      strategy=strategy.model_dump(mode="json"), edit=None, status="root",
                                      dev_score=0.5), None)
    store.close()
    with pytest.raises(SystemExit) as info:
        saddler_cli(["view", str(run), "--out", str(tmp_path / "report.html")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "search_state row 'meta' is not an object" in err and "Traceback" not in err
    assert not (tmp_path / "report.html").exists()

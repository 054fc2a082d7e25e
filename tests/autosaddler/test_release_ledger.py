"""The release ledger: a second gate on a spent release split is refused machine-wide (any run
directory) unless --allow-reuse, which marks the decision as no longer a fresh test."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

import autosaddler.commands.gate as gate_cmd
from autosaddler.cli import main
from autosaddler.ledger import DATA_DIR_ENV, ReleaseLedger, data_dir, ledger_key, new_entry, refuse_spent_tasks
from autosaddler.traces import TaskEval
from testhelix.core.errors import UserError
from testhelix.strategy.model import Strategy

ROOT = Path(__file__).resolve().parents[2]
RELEASE = [f"r{i:02d}" for i in range(12)]


class Evaluator:
    """Challenger solves every task, the baseline none: a clear promotion (no models run)."""

    runner = SimpleNamespace(progress=None)     # the gate hands its progress display to the runner

    def label(self, strategy, arm=""):
        return f"gate/{arm}/{strategy.content_hash()[:12]}"

    def evaluate(self, strategy, ids, label=None):
        return {t: TaskEval(success=int(strategy.agentSteps != 12)) for t in ids}


@pytest.fixture
def offline_gate(monkeypatch):
    split = SimpleNamespace(pack="katas", pack_digest="digest-of-the-pack", ids=lambda name: list(RELEASE))
    monkeypatch.setattr(gate_cmd, "load_pack_splits", lambda pack, split_file=None: SimpleNamespace(
        tasks={}, split=split, ids=split.ids))

    @contextmanager
    def fake_evaluator(*args, **kwargs):
        yield Evaluator()

    monkeypatch.setattr(gate_cmd, "helix_evaluator", fake_evaluator)


def gate(tmp_path, capsys, run, challenger, *extra):
    with pytest.raises(SystemExit) as done:
        main(["gate", "--challenger", str(challenger), "--baseline", str(ROOT / "strategies" / "initial.json"),
              "--pack", "katas", "--model", "sim:strong", "--run", str(tmp_path / run), *extra])
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def challenger_file(tmp_path, steps=20):
    path = tmp_path / f"challenger{steps}.json"
    data = json.loads((ROOT / "strategies" / "initial.json").read_text()) | {"agentSteps": steps}
    digest = Strategy.model_validate(data).content_hash()  # the gate takes frozen challengers only
    path.write_text(json.dumps({"strategy": data, "provenance": {"node": "test"}, "hash": digest}))
    return path


def test_the_ledger_lives_in_the_overridable_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    assert ReleaseLedger().root == tmp_path / "data" / "release-ledger"
    monkeypatch.delenv(DATA_DIR_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "autosaddler"


def test_the_ledger_is_by_task_same_test_replays_other_overlap_is_refused(tmp_path, capsys, offline_gate):
    challenger = challenger_file(tmp_path)
    code, out, err = gate(tmp_path, capsys, "gate1", challenger)
    assert code == 0 and "PROMOTED" in out and "fresh test" not in out and "Why:" in out
    assert "autosaddler view" in out and "gate_report.md" in out
    entries = ReleaseLedger().entries()
    assert len(entries) == 1
    e = entries[0]
    assert (e.pack_digest, e.split, e.reused, e.task_ids) == ("digest-of-the-pack", "release", False, tuple(RELEASE))
    assert e.result is not None and e.result["wins"] == 12
    assert e.key == ledger_key(RELEASE, e.challenger_hash, e.baseline_hash, "sim:strong")
    assert (ReleaseLedger().root / f"{e.key}.json").is_file()
    # the same challenger, baseline and model on the same tasks is the same test: its decision, replayed
    code, out2, err = gate(tmp_path, capsys, "gate2", challenger)
    assert code == 0 and "replay" in out2 and e.gate_id in out2 and "nothing was run" in out2
    assert out2.split("note:")[0] == out.split("\n\n")[0] + "\n"           # the same printed decision
    assert not (tmp_path / "gate2" / "run.duckdb").exists()
    # another challenger on overlapping tasks is refused, naming the overlap
    code, out, err = gate(tmp_path, capsys, "gate3", challenger_file(tmp_path, 24))
    assert code == 2 and "already spent by release gate" in err and "12 of these 12 tasks" in err and "r00" in err
    assert not (tmp_path / "gate3" / "gate_report.md").exists()
    assert len(ReleaseLedger().entries()) == 1
    # --allow-reuse runs it, and says the decision is no longer a fresh test
    code, out, err = gate(tmp_path, capsys, "gate4", challenger, "--allow-reuse")
    assert code == 0 and "no longer a fresh test" in out and "no longer a fresh test" in err
    assert "Not a fresh test" in (tmp_path / "gate4" / "gate_report.md").read_text()
    entries = ReleaseLedger().entries()
    assert [x.reused for x in entries] == [False, True] and len({x.key for x in entries}) == 1
    code, out, _ = gate(tmp_path, capsys, "gate5", challenger, "--allow-reuse", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["fresh_test"] is False and "no longer a fresh test" in doc["note"]


def test_spent_tasks_are_caught_under_any_split_name(tmp_path):
    ledger = ReleaseLedger(tmp_path / "ledger")
    ledger.record(new_entry(pack="katas", pack_digest="d", split="release", task_ids=["a", "b", "c"],
                            challenger_hash="c" * 64, baseline_hash="b" * 64, model="sim:weak", run_dir=tmp_path,
                            gate_id="gate-1", result={"promoted": False}, reused=False))
    refuse_spent_tasks(ledger, "katas", "d", "proposal", ["x", "y"], "a search")     # no overlap: fine
    with pytest.raises(UserError) as err:     # a new split file moved a spent task into the proposal split
        refuse_spent_tasks(ledger, "katas", "d", "proposal", ["x", "b"], "a search")
    assert "1 of these 2 tasks" in str(err.value) and "b" in str(err.value) and "gate-1" in str(err.value)
    # an entry from before task ids were recorded spends its whole split name
    legacy = tmp_path / "ledger" / "old.json"
    legacy.write_text(json.dumps({"pack": "katas", "pack_digest": "d", "split": "development", "challenger_hash": "c",
                                  "baseline_hash": "b", "model": "m", "run_dir": "r", "gate_id": "gate-0",
                                  "promoted": False, "reused": False, "recorded_at": 0.0}))
    with pytest.raises(UserError, match="gate-0"):
        refuse_spent_tasks(ledger, "katas", "d", "development", ["q"], "a search")

import pytest

from autosaddler.config import load_config
from autosaddler.dag import EvolutionDAG
from autosaddler.edits import FieldEdit, LessonEdit, RejectedEdit, UnparsedEdit, apply_edit, describe, parse_edit
from autosaddler.screen import StrictImprovementNoRegression
from autosaddler.search import Search
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy
from tests.autosaddler.autosaddler_fakes import CountingEvaluator, ScriptedOptimizer

SCRIPT = [
    {"kind": "field", "field": "agentSteps", "value": 20},
    {"kind": "field", "field": "maxCandidates", "value": 5},            # fixed: rejected
    {"kind": "lesson", "op": "add", "lesson": {"id": "l1", "triggers": ["cache"], "text": "Test eviction order."}},
    {"kind": "field", "field": "agentSteps", "value": 6},               # worse: screened out
    {"kind": "field", "field": "evaluator", "value": "lenient"},        # not a field: rejected
    {"kind": "field", "field": "guidance", "value": "Read the bug report twice."},
]
PROPOSAL = [f"p{i:03d}" for i in range(60)]
DEV = [f"d{i:03d}" for i in range(20)]


def make_search(tmp_path, evaluator, name="run"):
    cfg = load_config("demo", overrides={"train_minibatch_size": 10, "completed_train_iterations": 4,
                                         "max_candidate_proposals": 8, "development_limit": None})
    return Search(cfg, RunStore(tmp_path / name), evaluator, ScriptedOptimizer(SCRIPT), PROPOSAL, DEV)


def test_search_records_every_proposal(tmp_path):
    dag = make_search(tmp_path, CountingEvaluator()).run(Strategy())
    statuses = [n.status for n in dag.nodes()]
    assert statuses[0] == "root" and "rejected" in statuses and "developed" in statuses
    rejected = [n for n in dag.nodes() if n.status == "rejected"]
    assert any("fixed during search" in n.reason for n in rejected)
    assert any("not a strategy field" in n.reason for n in rejected)
    assert dag.graph.number_of_edges() == len(statuses) - 1
    for n in dag.nodes():
        if n.status in ("developed", "screened_out"):
            assert set(n.parent_outcomes) == set(n.child_outcomes) and len(n.child_outcomes) == 10
    # stored DAG equals the in-memory one
    again = EvolutionDAG.load(RunStore(tmp_path / "run", read_only=True))
    assert again.to_json() == dag.to_json()


def test_screen_rule():
    rule = StrictImprovementNoRegression()
    assert rule.passes({"a": 0, "b": 0}, {"a": 1, "b": 0})[0]
    assert not rule.passes({"a": 1, "b": 0}, {"a": 0, "b": 1})[0]     # a regression
    assert not rule.passes({"a": 1, "b": 0}, {"a": 1, "b": 0})[0]     # no strict increase


def _without_timing(dag):
    return [{k: v for k, v in n.items() if k not in ("elapsed_s", "optimizer_usage")} for n in dag.to_json()["nodes"]]


def test_resume_after_crash_gives_same_dag(tmp_path):
    full = make_search(tmp_path, CountingEvaluator(), "full").run(Strategy())
    for crash_after in (5, 37, 81):
        with pytest.raises(KeyboardInterrupt):
            make_search(tmp_path, CountingEvaluator(crash_after=crash_after), f"c{crash_after}").run(Strategy())
        resumed = make_search(tmp_path, CountingEvaluator(), f"c{crash_after}").run(Strategy())
        assert _without_timing(resumed) == _without_timing(full)


def test_resume_when_epochs_leave_tasks_out_gives_same_dag(tmp_path):
    """63 proposal tasks in minibatches of 10 over two epochs: each epoch drops 3 tasks, so the
    stored order is no permutation of the split, and resuming must still accept it."""
    proposal = [f"p{i:03d}" for i in range(63)]

    def uneven(name, evaluator):
        cfg = load_config("demo", overrides={"train_minibatch_size": 10, "train_epochs": 2,
                                             "completed_train_iterations": 4, "max_candidate_proposals": 8,
                                             "development_limit": None})
        return Search(cfg, RunStore(tmp_path / name), evaluator, ScriptedOptimizer(SCRIPT), proposal, DEV)

    full = uneven("full", CountingEvaluator()).run(Strategy())
    with pytest.raises(KeyboardInterrupt):
        uneven("crashed", CountingEvaluator(crash_after=37)).run(Strategy())
    resumed = uneven("crashed", CountingEvaluator()).run(Strategy())
    assert _without_timing(resumed) == _without_timing(full)


def test_a_stored_order_that_repeats_a_task_within_an_epoch_is_refused(tmp_path):
    from testhelix.core.errors import UserError

    with pytest.raises(KeyboardInterrupt):
        make_search(tmp_path, CountingEvaluator(crash_after=37), "bad").run(Strategy())
    store = RunStore(tmp_path / "bad")
    state = store.get_state("search")
    assert isinstance(state, dict)
    state["order"][1] = state["order"][0]
    store.put_state("search", state)
    store.close()
    with pytest.raises(UserError, match="epoch 1 of 'order' repeats a task"):
        make_search(tmp_path, CountingEvaluator(), "bad").run(Strategy())


def test_edits_one_at_a_time():
    s = Strategy()
    child = apply_edit(s, LessonEdit(op="add", lesson={"id": "a", "triggers": ["x"], "text": "t"}))
    child2 = apply_edit(child, LessonEdit(op="add", lesson={"id": "b", "triggers": ["y"], "text": "u"}))
    replaced = apply_edit(child2, LessonEdit(op="replace", lesson={"id": "a", "triggers": ["z"], "text": "v"}))
    assert [lesson.id for lesson in replaced.lessons] == ["a", "b"] and replaced.lessons[1] == child2.lessons[1]
    with pytest.raises(RejectedEdit, match="already has"):
        apply_edit(s, FieldEdit(field="rounds", value=2))
    with pytest.raises(RejectedEdit, match="lessons change one at a time"):
        apply_edit(s, FieldEdit(field="lessons", value=[]))
    with pytest.raises(RejectedEdit, match="code block"):
        apply_edit(s, FieldEdit(field="guidance", value="```\nx\n```"))
    with pytest.raises(RejectedEdit, match="rounds"):
        apply_edit(s, FieldEdit(field="rounds", value=7))


def test_freeze_choice_ties(tmp_path):
    """Equal development scores: fewer edits from the root wins, then the earliest; freeze agrees."""
    from autosaddler.dag import Node
    from autosaddler.freeze import frozen_document

    def node(node_id, iteration, dev, steps):
        strategy = Strategy(agentSteps=steps)
        edit = None if iteration == 0 else FieldEdit(field="agentSteps", value=steps)
        return Node(node_id=node_id, iteration=iteration, strategy_hash=strategy.content_hash(),
                    strategy=strategy.model_dump(mode="json"), edit=edit,
                    status="root" if iteration == 0 else "developed", dev_score=dev)

    store = RunStore(tmp_path / "ties")
    dag = EvolutionDAG()
    for n, parent in ((node("n000", 0, 0.5, 12), None), (node("n001", 1, 0.75, 14), "n000"),
                      (node("n002", 2, 0.75, 16), "n001"), (node("n003", 3, 0.75, 18), "n000"),
                      (node("n004", 4, 0.25, 20), "n003")):
        dag.record(store, n, parent)
    store.close()
    assert dag.best().node_id == "n001"        # depth 1, earlier than n003 (depth 1), beats n002 (depth 2)
    deeper_first = EvolutionDAG()
    for n, parent in ((node("n000", 0, 0.5, 12), None), (node("n001", 1, 0.75, 14), "n000"),
                      (node("n002", 2, 0.75, 16), "n001"), (node("n003", 3, 0.75, 18), "n000")):
        deeper_first.add(n, parent)
    deeper_first.graph.remove_edge("n000", "n001")
    deeper_first.graph.add_edge("n003", "n001")  # now n001 sits at depth 2: the shallow n003 wins
    assert deeper_first.best().node_id == "n003"
    doc = frozen_document(tmp_path / "ties")
    assert doc["provenance"]["node"] == "n001" and doc["strategy"]["agentSteps"] == 14


def test_freeze_export_and_dag_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from autosaddler.cli import cli
    from testhelix.core.errors import UserError
    from testhelix.strategy.model import load_strategy

    make_search(tmp_path, CountingEvaluator()).run(Strategy())
    run = tmp_path / "run"
    out = tmp_path / "frozen" / "best.json"
    r = CliRunner().invoke(cli, ["freeze", str(run), "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["provenance"]["lineage"][0] == "n000" and load_strategy(out).content_hash() == doc["hash"]
    again = CliRunner().invoke(cli, ["freeze", str(run), "--out", str(out)])   # the same node again: a repeat
    assert again.exit_code == 0 and "a repeat, nothing written" in " ".join(again.output.split())  # wrapped to 80
    other = json.loads(out.read_text())
    other["provenance"]["node"] = "n999"
    out.write_text(json.dumps(other))
    refused = CliRunner().invoke(cli, ["freeze", str(run), "--out", str(out)])  # anything else: never overwritten
    assert refused.exit_code != 0 and "never overwritten" in str(refused.exception) + refused.output
    out.write_text(json.dumps(doc))
    y = CliRunner().invoke(cli, ["export", str(out), "--format", "yaml"])
    assert y.exit_code == 0 and "strategy:" in y.output
    doc["strategy"]["agentSteps"] = 29
    out.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="hash mismatch"):
        load_strategy(out)
    r = CliRunner().invoke(cli, ["dag", str(run), "--json-out", str(tmp_path / "d.json"), "--graphml",
                                 str(tmp_path / "d.graphml"), "--png", str(tmp_path / "d.png")])
    assert r.exit_code == 0, r.output
    assert "n000" in r.output and (tmp_path / "d.png").stat().st_size > 1000
    assert len(json.loads((tmp_path / "d.json").read_text())["nodes"]) >= 5
    printed = CliRunner().invoke(cli, ["dag", str(run), "--json"])        # --json prints, as everywhere
    assert printed.exit_code == 0 and json.loads(printed.output) == json.loads((tmp_path / "d.json").read_text())


def test_edits_with_every_key_spelled_out_parse_and_stored_edits_round_trip():
    """An answer may give every key (unused ones null); a stored edit reads back as it was."""
    flat = {"kind": "field", "field": "agentSteps", "value": 20, "op": None, "lesson": None, "lesson_id": None,
            "rationale": "more steps"}
    assert parse_edit(flat) == FieldEdit(field="agentSteps", value=20, rationale="more steps")
    lesson = {"kind": "lesson", "field": None, "value": None, "op": "replace", "lesson": {"id": "a"},
              "lesson_id": "a", "rationale": ""}
    assert parse_edit(lesson) == LessonEdit(op="replace", lesson={"id": "a"}, lesson_id="a")
    protocol = {"kind": "lesson", "lesson": {"id": "b"}, "replace": None, "rationale": "r"}
    assert parse_edit(protocol) == LessonEdit(op="add", lesson={"id": "b"}, rationale="r")
    assert parse_edit("no json") == UnparsedEdit(raw="no json", problem="unparsed proposal: the answer holds no JSON object")
    odd = parse_edit({"kind": "field", "value": 3})
    assert isinstance(odd, UnparsedEdit) and "field" in odd.problem and odd.raw == {"kind": "field", "value": 3}
    for edit in (FieldEdit(field="rounds", value=3), LessonEdit(op="remove", lesson_id="a"), odd):
        assert parse_edit(edit.model_dump(mode="json")) == edit            # the stored shape round-trips
    assert describe(parse_edit(flat)) == "set agentSteps = 20" and describe(None) == "initial strategy"

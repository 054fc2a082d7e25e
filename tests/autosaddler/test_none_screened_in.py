"""The search's closing line when no proposal passed the screen: each proposal's minibatch counts
and the parents' failures, the most any child could gain."""

from __future__ import annotations

from autosaddler.commands.search import why_none_screened_in
from autosaddler.dag import EvolutionDAG, Node
from testhelix.strategy.model import initial_strategy


def _dag(*children: tuple[str, dict[str, int], dict[str, int]]) -> EvolutionDAG:
    s = initial_strategy()
    dag = EvolutionDAG()
    dag.add(Node("n000", 0, s.content_hash(), s.model_dump(mode="json"), None, "root"), None)
    for i, (status, parent, child) in enumerate(children, 1):
        dag.add(Node(f"n{i:03d}", i, s.content_hash(), s.model_dump(mode="json"), None, status,
                     parent_outcomes=parent, child_outcomes=child, dev_score=0.5 if status == "developed" else None),
                "n000")
    return dag


def test_counts_each_proposal_and_the_parents_failures() -> None:
    why = why_none_screened_in(_dag(("screened_out", {"a": 1, "b": 1, "c": 0}, {"a": 1, "b": 0, "c": 0}),
                                    ("screened_out", {"d": 1, "e": 0, "f": 0}, {"d": 1, "e": 0, "f": 0}),
                                    ("rejected", {"g": 0}, {})))
    assert why is not None
    assert "none of the 2 evaluated proposals was screened in" in why
    assert "parent->child 2->1 (1 regression), 1->1;" in why
    assert "the parents failed 3 of 6 minibatch tasks" in why


def test_silent_when_a_proposal_was_screened_in_or_none_was_evaluated() -> None:
    assert why_none_screened_in(_dag(("developed", {"a": 0}, {"a": 1}), ("screened_out", {"b": 1}, {"b": 1}))) is None
    assert why_none_screened_in(_dag()) is None
    assert why_none_screened_in(_dag(("rejected", {"a": 0}, {}))) is None

"""The judged-loss seam (gtdd/domains/judged.py) and its example domain, the rubric-judged text normaliser."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gtdd.cli import main
from gtdd.domains import get_domain
from gtdd.domains.base import TraceResult, first_divergence
from gtdd.domains.judged import ModelJudge, RubricJudge, judged_first_divergence
from gtdd.domains.textnorm import JUDGE
from gtdd.domains.textnorm.defects import DEFECTS, apply_defects
from testhelix.llm.base import Completion, ModelRequest, Usage


def run_in_process(source: str, ops) -> TraceResult:
    namespace: dict[str, Any] = {}
    exec(compile(source, "normalizer.py", "exec"), namespace)
    return TraceResult(tuple(namespace["Normalizer"]().execute(op["cmd"], list(op["args"])) for op in ops), None)


def test_the_rubric_forgives_exactly_the_immaterial_defects():
    """Over the population, the two defects the rubric calls immaterial fail exact equality but never
    the judged loss; every other defect fails the judged loss on some case."""
    domain = get_domain("textnorm")               # through the gtdd.domains entry point
    population = domain.population()
    expected = domain.reference_results(population)
    reference = domain.reference_source()
    for defect in DEFECTS:
        got = [run_in_process(apply_defects(reference, [defect.id]), t.ops) for t in population]
        exact = sum(first_divergence(e, g) is not None for e, g in zip(expected, got))
        judged = sum(domain.first_divergence(e, g) is not None for e, g in zip(expected, got))
        assert exact > 0, defect.id
        if defect.id in ("spaces-no-strip", "title-small-capitalised"):
            assert judged == 0, defect.id
        else:
            assert 0 < judged <= exact, defect.id
    assert all(domain.first_divergence(e, e) is None for e in expected)


def test_judged_divergence_still_counts_failed_executions_and_reply_counts():
    judge = RubricJudge("any", "anything goes", lambda e, o: True)
    ok = TraceResult(("a", "b"), None)
    assert judged_first_divergence(judge, ok, TraceResult(("x", "y"), None)) is None
    assert judged_first_divergence(judge, ok, TraceResult(("x",), "ValueError")) == 1
    assert judged_first_divergence(judge, ok, TraceResult(("x", "y", "z"), None)) == 2
    assert JUDGE.acceptable("The River of Song", "The River Of Song ")
    assert not JUDGE.acceptable("The River of Song", "the river of song")
    assert not JUDGE.acceptable("old song", "old\tsong")


def test_a_model_judge_asks_once_per_pair_and_rejects_anything_but_accept():
    asked: list[ModelRequest] = []

    def complete(request: ModelRequest) -> Completion:
        asked.append(request)
        reply = "ACCEPT" if '"a"' in request.messages[1].content.split("Program reply:")[1] else "maybe"
        return Completion(reply, (), "end_turn", Usage(10, 1), "scripted")

    judge = ModelJudge("model", "same letter", complete)
    assert judge.acceptable("a", "a") and judge.acceptable("a", "a")
    assert not judge.acceptable("a", "b")
    assert len(asked) == 2 and "Rubric: same letter" in asked[0].messages[1].content


@pytest.mark.slow
def test_an_experiment_and_its_report_run_offline(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["experiment", "--domain", "textnorm", "--policies", "public-only,dynamic-informed", "--blocks", "1",
              "--rounds", "2", "--acceptance-rule", "none", "--run", str(tmp_path), "--quiet", "--json"])
    assert done.value.code == 0
    assert json.loads(capsys.readouterr().out)["simulated"]
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path), "--json"])
    assert done.value.code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["domain"] == "textnorm"
    assert set(report["development_discrepancy"]["by_policy"]) == {"public-only", "dynamic-informed"}

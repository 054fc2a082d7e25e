"""The panel procedure of `pack create` (testhelix/pack/create.py, panelgate.py): admission gate,
labels by the verifier, the shared budget, B.4 criteria and the funnel. The verifier here is an
in-process test double (an oracle over the fixture's functions) so these tests run no sandbox; the
end-to-end tests in test_pack_create_e2e.py use the real one."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from testhelix.pack.bugreport import bug_report, failing_sections, leaked_line
from testhelix.pack.create import STRICT_STAGE, PanelShape, RunResult, TaskOutcome, build_panel
from testhelix.pack.createpack import create_pack, funnel, load_source
from testhelix.pack.generators import GeneratedOutput, GenerationRequest, OfflineGenerator
from testhelix.pack.panelgate import Budget, BudgetExhausted, Diversity, gate, select_group

FIXTURE = Path(__file__).parents[1] / "fixtures" / "create" / "wordstat"
CASES = [("count_words", ("The the THE cat",)), ("count_words", ("don't stop",)), ("count_words", ("a,b.c",)),
         ("count_words", ("one two",)), ("top_words", ("b a b c a b", 2)), ("top_words", ("z y x", 2)),
         ("top_words", ("a", 0)), ("top_words", ("a b", 5))]


def _results(program: Path) -> list[object]:
    space: dict = {}
    exec(compile((program / "wordstat.py").read_text(), "wordstat.py", "exec"), space)  # our own fixture programs
    out = []
    for name, args in CASES:
        try:
            out.append(space[name](*args))
        except Exception as err:  # noqa: BLE001 - a crash is an observed behaviour too
            out.append(f"raised {type(err).__name__}")
    return out


class OracleVerifier:
    """Test double for the sandboxed verifier: pass iff every case equals the reference's result."""

    def __init__(self) -> None:
        self.expected = _results(FIXTURE / "reference")
        self.runs = 0

    def __call__(self, tests: Path, programs, traceback: str) -> list[RunResult]:
        out = []
        for program in programs:
            self.runs += 1
            try:
                got = _results(Path(program))
            except SyntaxError:
                out.append(RunResult("fail", "syntax error", ""))
                continue
            bad = [(case, g, e) for case, g, e in zip(CASES, got, self.expected) if g != e]
            if not bad:
                out.append(RunResult("pass", None, ""))
                continue
            (name, args), g, e = bad[0]
            text = (f"_____ test_case _____\n    assert {name}{args!r} == {e!r}\nE   assert {g!r} == {e!r}\n"
                    "==== short test summary info ====\n")
            out.append(RunResult("fail", f"{len(bad)} failed", text))
        return out


class ListGenerator:
    """Test double: answers from a list of (files or None, provenance) and counts its calls."""

    name = "test:list"

    def __init__(self, answers) -> None:
        self.answers = iter(answers)
        self.calls = 0

    def generate(self, request: GenerationRequest) -> GeneratedOutput:
        self.calls += 1
        files, note = next(self.answers)
        return GeneratedOutput(files, self.name, note)


REFERENCE = (FIXTURE / "reference" / "wordstat.py").read_text()


def _variant(old: str, new: str) -> dict[str, str]:
    assert old in REFERENCE
    return {"wordstat.py": REFERENCE.replace(old, new)}


def _source(tmp_path: Path):
    shutil.copytree(FIXTURE, tmp_path / "src")
    return load_source(tmp_path / "src")


def test_the_gate_removes_empty_duplicate_and_inapplicable_outputs():
    files = {"wordstat.py"}
    assert gate(None, files, None, set()) == "empty submission"
    assert gate({"wordstat.py": "  \n"}, files, "d1", set()) == "empty submission"
    assert gate({"wordstat.py": "x = 1\n"}, files, "d1", {"d1"}) == "exact duplicate"
    assert (gate({"other.py": "x = 1\n"}, files, None, set()) or "").startswith("not applicable: changes files")
    assert (gate({"wordstat.py": "def f(:\n"}, files, "d2", set()) or "").startswith("not applicable: wordstat.py does not parse")
    assert gate({"wordstat.py": "x = 1\n"}, files, "d3", {"d1"}) is None


def test_the_budget_counts_each_output_once_and_runs_out():
    budget = Budget(3)
    assert [budget.charge() for _ in range(3)] == [1, 2, 3]
    with pytest.raises(BudgetExhausted):
        budget.charge()
    assert budget.used == 3 and budget.left == 0


def test_a_task_whose_outputs_are_all_empty_exhausts_the_budget_in_initial_assembly(tmp_path):
    gen = ListGenerator(itertools.repeat((None, "nothing")))
    outcome, panel = build_panel(_source(tmp_path), gen, OracleVerifier(), tmp_path / "w", 30, Diversity(), 42)
    assert panel is None and outcome.stage == "initial assembly"
    assert outcome.outputs == 30 == gen.calls and outcome.gated == {"empty submission": 30}


def test_labels_come_from_the_verifier_not_from_the_intent(tmp_path):
    """An output requested as an alternative that fails a check is an invalid candidate."""
    gen = OfflineGenerator(7)
    wrong = _variant("ch == \"'\"", "ch == '-'")   # apostrophes no longer belong to words

    class MeantCorrect:
        name = "test:meant-correct"

        def __init__(self) -> None:
            self.first = True

        def generate(self, request):
            if request.intent == "alternative" and self.first:
                self.first = False
                return GeneratedOutput(wrong, self.name, "meant as a correct alternative")
            return gen.generate(request)

    outcome, panel = build_panel(_source(tmp_path), MeantCorrect(), OracleVerifier(), tmp_path / "w", 30,
                                 Diversity(), 42)
    assert panel is not None and outcome.stage is None
    assert all(c.provenance != "meant as a correct alternative" for c in panel.valid)
    assert panel.initial is not None
    everything = [*panel.valid, *panel.invalid, *panel.spare, panel.initial]
    (meant,) = [c for c in everything if c.provenance == "meant as a correct alternative"]
    assert meant.label == "invalid" and meant.intent == "alternative" and meant.status == "fail"
    # and the other way round: a mutation meant as faulty that passes every check is valid
    assert all(c.label == ("valid" if c.status == "pass" else "invalid") for c in everything)


def test_refinement_spends_the_same_budget_and_exhaustion_excludes_the_task(tmp_path):
    """Outputs that differ only in a constant's value have identical AST features: the groups can
    never meet B.4, refinement keeps generating until the shared budget is gone."""
    valid = [(_variant('"""Word statistics for short texts."""', f'"""Word statistics {i}."""'), f"alt{i}")
             for i in range(100)]
    invalid = [(_variant("ranked[:n]", f"ranked[:n + {i}]"), f"bad{i}") for i in range(1, 100)]

    class Alternating:
        name = "test:near-copies"

        def __init__(self) -> None:
            self.valid, self.invalid, self.calls = iter(valid), iter(invalid), 0

        def generate(self, request):
            self.calls += 1
            files, note = next(self.valid if request.intent == "alternative" else self.invalid)
            return GeneratedOutput(files, self.name, note)

    gen = Alternating()
    outcome, panel = build_panel(_source(tmp_path), gen, OracleVerifier(), tmp_path / "w", 20, Diversity(), 42)
    assert panel is None and outcome.stage == "diversity refinement"
    assert outcome.outputs == 20 == gen.calls
    assert sum(outcome.labels.values()) + sum(outcome.gated.values()) == 20


def test_the_b4_criterion_needs_every_pair_and_the_mean_apart():
    a, b = frozenset({"x", "y", "z"}), frozenset({"x", "y", "w"})
    far = frozenset({"p", "q"})
    crit = Diversity(min_pair=0.02, min_mean=0.05)
    ok, low, mean = crit.check([a, b, far])
    assert ok and low == pytest.approx(0.5) and mean > 0.5
    ok, low, _ = crit.check([a, a, far])
    assert not ok and low == 0.0                                # one identical pair fails the group
    many = [frozenset({f"f{i}" for i in range(100)} | {f"e{k}"}) for k in range(3)]
    ok, low, mean = crit.check(many)                            # every pair ~0.02 apart: mean too small
    assert low >= 0.019 and mean < 0.05 and not Diversity(min_pair=0.01, min_mean=0.05).check(many)[0]


def test_select_group_prefers_diverse_members_and_reports_failure():
    features = {"ref": frozenset({"a", "b"}), "c1": frozenset({"a", "b"}), "c2": frozenset({"c"}),
                "c3": frozenset({"d"})}
    group, ok = select_group(["ref"], ["c1", "c2", "c3"], 3, features, Diversity(), "s")
    assert ok and set(group) == {"ref", "c2", "c3"}
    group, ok = select_group(["ref"], ["c1"], 2, features, Diversity(), "s")
    assert not ok and group == ["ref", "c1"]
    assert select_group(["ref"], [], 3, features, Diversity(), "s")[1] is False   # too few: never meets it


def test_the_funnel_counts_tasks_left_after_each_stage():
    def out(stage):
        return TaskOutcome("t", stage, "", 30, {}, {})

    outcomes = [out(None), out(None), out("initial assembly"), out("bug report"), out("diversity refinement"),
                out("verifier validation")]
    rows = dict(funnel(8, outcomes, refused=2))
    assert rows == {"source problems": 8, "converted to a task source": 6, "after verifier validation": 5,
                    "after initial assembly": 4, "after bug report": 3, "after diversity refinement": 2,
                    "admitted": 2}


def test_a_bug_report_quotes_the_failing_check_but_never_the_fix():
    output = ("F.\n____ test_top ____\nsuite/test_x.py:4: in test_top\n    assert top_words('z y x', 2) == ['x', 'y']\n"
              "E   AssertionError: assert ['y', 'x'] == ['x', 'y']\n==== short test summary info ====\n")
    assert failing_sections(output)[0][0] == "test_top"
    reference = "    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))\n"
    initial = "    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]), reverse=True)\n"
    text, why = bug_report(output, reference, initial)
    assert why == "ok" and text is not None
    assert "assert top_words('z y x', 2) == ['x', 'y']" in text and "['y', 'x'] == ['x', 'y']" in text
    assert "suite/test_x.py" not in text and "test_top" not in text
    leaky = output.replace("E   AssertionError", "E   hint: ranked = sorted(counts.items(), key=lambda item: "
                                                "(-item[1], item[0]))\nE   AssertionError")
    assert leaked_line(leaky, reference.splitlines(), initial.splitlines())
    assert bug_report(leaky, reference, initial)[0] is None
    assert bug_report("all passed\n", reference, initial) == (None, "no failing check in the verifier's output")


def test_a_bug_report_quotes_neither_position_marks_nor_the_faulty_program():
    # Python 3.11+ tracebacks under pytest --tb=short: the test frame, then the program's frame
    # (the faulty line itself), each with a line of ^ marks under the failing expression.
    output = ("F\n____ test_check_01 ____\nsuite/test_program.py:7: in test_check_01\n"
              "    assert merge_all([[1, 3], [2, 4]]) == [[1, 4]]\n           ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
              "program.py:5: in merge_all\n    merged[-0][1] = max(merged[-0][1], end)\n"
              "    ~~~~~~^^^\nE   IndexError: list index out of range\n==== short test summary info ====\n")
    reference = "def merge_all(xs):\n    merged[-1][1] = max(merged[-1][1], end)\n"
    initial = "def merge_all(xs):\n    merged[-0][1] = max(merged[-0][1], end)\n"
    text, why = bug_report(output, reference, initial)
    assert why == "ok" and text is not None
    assert "assert merge_all([[1, 3], [2, 4]]) == [[1, 4]]" in text and "IndexError" in text
    assert "^" not in text and "~" not in text and "merged[-0]" not in text and "program.py" not in text


class FirstFaultySurvives:
    """Test double: the first output requested as faulty is an equivalent rewrite (it passes every
    check); everything else comes from the offline generator."""

    name = "test:surviving-mutant"

    def __init__(self) -> None:
        self.offline, self.first = OfflineGenerator(7), True

    def generate(self, request):
        if request.intent == "faulty" and self.first:
            self.first = False
            return GeneratedOutput(_variant('"""Word statistics for short texts."""', '"""Word stats."""'), self.name,
                                   "a mutation that changes nothing the tests see")
        return self.offline.generate(request)


def test_a_surviving_faulty_candidate_is_labelled_valid_and_named_and_strict_excludes_its_task(tmp_path):
    src = _source(tmp_path)
    outcome, panel = build_panel(src, FirstFaultySurvives(), OracleVerifier(), tmp_path / "w", 30, Diversity(), 42)
    assert outcome.stage is None and panel is not None
    everything = [*panel.valid, *panel.spare]
    (survivor,) = [c for c in everything if c.provenance == "a mutation that changes nothing the tests see"]
    assert survivor.intent == "faulty" and survivor.label == "valid" and survivor.id in outcome.survivors
    # (the offline generator's own mutants can survive too: every survivor is a faulty-intent valid candidate)
    assert all(c.intent == "faulty" and c.label == "valid" for c in everything if c.id in outcome.survivors)

    index = create_pack([src], tmp_path / "pack", FirstFaultySurvives(), OracleVerifier(), budget=30,
                        criterion=Diversity(), seed=42, with_bank=False, log=lambda s: None)
    assert index["surviving_faulty"] == {src.id: list(outcome.survivors)} and index["tasks"] == [src.id]
    assert dict((r["stage"], r["tasks"]) for r in index["funnel"])[
        "admitted with a surviving faulty candidate (labelled valid; weak tests?)"] == 1

    strict = create_pack([src], tmp_path / "strict", FirstFaultySurvives(), OracleVerifier(), budget=30,
                         criterion=Diversity(), seed=42, with_bank=False, shape=PanelShape(strict=True),
                         log=lambda s: None)
    assert strict["tasks"] == [] and strict["excluded"][0]["stage"] == STRICT_STAGE
    assert outcome.survivors[0] in strict["excluded"][0]["reason"]
    assert dict((r["stage"], r["tasks"]) for r in strict["funnel"])[f"after {STRICT_STAGE}"] == 0


def test_a_diagnostic_pool_of_seven_and_seven_fits_the_same_budget(tmp_path):
    outcome, panel = build_panel(_source(tmp_path), OfflineGenerator(7), OracleVerifier(), tmp_path / "w", 30,
                                 Diversity(), 42, PanelShape(alternatives=7, invalids=7))
    assert outcome.stage is None and panel is not None and outcome.outputs <= 30
    assert len(panel.valid) == 7 and len(panel.invalid) == 7 and panel.initial is not None

"""Unit tests of the pure parts of the pack tools: AST features, diversity selection, bank
splitting and kinds, bug-report leak check."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from testhelix.core.errors import UserError
from testhelix.pack.bank import per_function, public_label, split_bank
from testhelix.pack.diversity import select_diverse
from testhelix.pack.instructions import leaked_fix, task_toml
from testhelix.pack.kata import Mutation, load_kata
from testhelix.pack.runner import SuiteRun, run_suite
from testhelix.prism.astfeatures import ast_features, jaccard_distance, source_features


def _program(tmp_path: Path, name: str, source: str) -> Path:
    root = tmp_path / name
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(source)
    return root


def test_features_name_nodes_calls_operators_and_constant_shapes():
    feats = source_features("def f(xs):\n    return len(xs) >= 2 and xs.count(0) + 1\n")
    for expected in ("node:FunctionDef", "node:Compare", "call:len", "call:count", "op:GtE", "op:And",
                     "op:Add", "const:int:2", "const:int:0", "edge:Return>BoolOp", "in:f:op:GtE", "in:f:call:len"):
        assert expected in feats, expected
    assert not any(f.startswith("node:Load") for f in feats)


def test_scoped_features_separate_an_operator_flip_in_another_function():
    base = "def a(x):\n    return x > 1\n\ndef b(x):\n    return x >= 1\n"
    flipped = "def a(x):\n    return x >= 1\n\ndef b(x):\n    return x >= 1\n"
    fa, fb = source_features(base), source_features(flipped)
    # The unscoped operator sets are identical up to op:Gt; the scoped ones tell a from b apart.
    assert "in:a:op:Gt" in fa and "in:a:op:GtE" in fb
    assert jaccard_distance(fa, fb) > 0


def test_ast_features_of_a_tree_skip_caches_and_flag_syntax_errors(tmp_path):
    root = _program(tmp_path, "p", "def f():\n    return 1\n")
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "junk.py").write_text("while True: pass\n")
    (root / "pkg" / "broken.py").write_text("def (:\n")
    feats = ast_features(root)
    assert "node:While" not in feats
    assert "error:syntax:pkg/broken.py" in feats
    assert "node:FunctionDef" in feats


def test_jaccard_distance_bounds():
    a, b = frozenset({"x", "y"}), frozenset({"y", "z"})
    assert jaccard_distance(a, a) == 0.0
    assert jaccard_distance(a, frozenset({"q"})) == 1.0
    assert jaccard_distance(a, b) == pytest.approx(1 - 1 / 3)
    assert jaccard_distance(frozenset(), frozenset()) == 0.0


def test_select_diverse_keeps_required_first_and_picks_far_items():
    feats = {
        "req": frozenset({"a", "b", "c"}),
        "near": frozenset({"a", "b", "c", "d"}),
        "far": frozenset({"x", "y"}),
        "mid": frozenset({"a", "x"}),
    }
    chosen = select_diverse(["req"], ["near", "far", "mid"], 2, feats, seed="s")
    assert chosen == ["req", "far"]
    assert select_diverse(["req"], ["near", "far", "mid"], 3, feats, seed="s") == ["req", "far", "mid"]


def test_select_diverse_ties_follow_the_seed():
    feats = {name: frozenset({name}) for name in ["req", *"abcdefgh"]}
    picks = {tuple(select_diverse(["req"], list("abcdefgh"), 2, feats, seed=str(s))) for s in range(20)}
    assert all(p[0] == "req" for p in picks)
    assert len(picks) > 1  # equal distances: the seed decides
    assert select_diverse(["req"], list("abcdefgh"), 4, feats, "7") == select_diverse(["req"], list("hgfedcba"), 4, feats, "7")


def test_split_bank_keeps_decorators_comments_and_helpers(tmp_path):
    path = tmp_path / "tests.py"
    path.write_text(
        "import pytest\n\n# shared helper\ndef make():\n    return 1\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_a(n):\n    assert n\n\n\n"
        "HELPER = 3\n\n\ndef test_b():\n    assert make() == 1\n"
    )
    bank = split_bank(path)
    assert [t.name for t in bank.tests] == ["test_a", "test_b"]
    assert bank.tests[0].source.startswith("@pytest.mark.parametrize")
    assert "# shared helper" in bank.header and "HELPER = 3" in bank.header and "def make" in bank.header
    assert "test_a" not in bank.header and "\n\n\n\n" not in bank.header


def test_split_bank_refuses_a_file_that_does_not_parse(tmp_path):
    path = tmp_path / "tests.py"
    path.write_text("def test_(:\n")
    with pytest.raises(UserError, match="does not parse"):
        split_bank(path)


def test_per_function_merges_parametrised_cases_and_counts_missing_as_failed():
    run = SuiteRun("fail", None, {"m::test_a[1]": True, "m::test_a[2]": False, "m::test_b": True})
    assert per_function(run, ["test_a", "test_b", "test_c"]) == {"test_a": False, "test_b": True, "test_c": False}


@pytest.mark.parametrize("fails_initial, passes, label", [
    (True, [True, False], "reproduces"),
    (True, [False, False], "fails-everywhere"),
    (False, [True, True], "guard"),
    (False, [True, False], "separates"),
])
def test_public_label(fails_initial, passes, label):
    assert public_label(fails_initial, passes) == label


def _mutation(**kw: Any) -> Mutation:
    base: dict[str, Any] = dict(id="m1", file="f.py", find="if n > limit:", replace="if n >= limit:", kind="off-by-one",
                description="d", defect=True, report="Calling `f(3)` returned 2, expected 3.",
                fixes=("if limit < n:",), wrong_fixes=())
    base.update(kw)
    return Mutation(**base)


def test_leaked_fix_finds_quoted_repairs_but_not_quoted_initial_code():
    assert leaked_fix(_mutation()) is None
    assert leaked_fix(_mutation(report="Change it to `if limit < n:` please.")) == "if limit < n:"
    assert leaked_fix(_mutation(report="The line `if n > limit:` was right before.")) == "if n > limit:"
    # The buggy line is in the program the agent reads: quoting it gives nothing away.
    assert leaked_fix(_mutation(report="The line `if n >= limit:` looks odd.")) is None


def test_task_toml_round_trips(kata_src):
    kata = load_kata(kata_src / "rangekit")
    data = tomllib.loads(task_toml("katas-rangekit-m1", kata))
    assert data["metadata"] == {"id": "katas-rangekit-m1", "source": "katas", "context": "algorithm",
                                "difficulty": "easy", "kata": "rangekit"}
    assert data["environment"]["packages"] == ["rangekit"]
    assert data["agent"]["timeout_sec"] == 600 and data["verifier"]["timeout_sec"] == 60


def test_runner_times_out_a_hanging_run_and_keeps_going(tmp_path):
    from testhelix.pack.runner import Job, run_jobs

    hang = _program(tmp_path, "hang", "def f():\n    while True:\n        pass\n")
    ok = _program(tmp_path, "ok", "def f():\n    return 1\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_f.py").write_text("from pkg import f\n\ndef test_f():\n    assert f() == 1\n")
    jobs = [Job("hang", suite, hang, timeout=1.5), Job("ok", suite, ok), Job("ok", suite, ok)]
    runs = run_jobs(jobs, workers=1)  # one warm worker: the run after the timeout must still work
    assert set(runs) == {"hang", "ok"}
    assert (runs["hang"].status, runs["hang"].reason) == ("error", "timeout")
    assert runs["ok"].status == "pass" and runs["ok"].results == {"suite.test_f::test_f": True}
    assert run_suite(suite, ok).passed  # the plain-subprocess path agrees


def test_spec_headings_nest_under_the_specification_section(kata_src):
    from testhelix.pack.instructions import instruction

    kata = load_kata(kata_src / "rangekit")
    text = instruction(kata, kata.mutation("m1"))
    assert "\n### rangekit\n" in text and "\n# rangekit" not in text
    assert text.index("## Specification") < text.index("### rangekit") < text.index("## Bug report")
    assert text.rstrip().endswith("but it returned 0.")


def test_prose_that_happens_to_match_a_fix_line_is_no_leak():
    fix = ("if token in subs:\n    del subs[token]\n    return True\nreturn False",)
    honest = _mutation(find="return subs.pop(token, None) is not None", replace="subs.pop(token, None)\nreturn True",
                       fixes=fix, report="`bus.unsubscribe(999)` should return False. It returned True.")
    assert leaked_fix(honest) is None
    assert leaked_fix(_mutation(fixes=fix, report="Add ```\nreturn False\n``` at the end.")) == "return False"

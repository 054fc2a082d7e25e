"""The benchmark's construction front end (testhelix/pack/construct.py) on a small fixture of two
sources: deduplication, per-source lower bounds, quotas and seeded sampling, with exact counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from testhelix.pack import construct as fe


def _rec(source: str, i: int, lines: int, tests: int, *, ref: str | None = None, asserts: str | None = None,
         initial: str = "", group: str | None = None) -> fe.Record:
    task = f"{source}{i:02d}"
    return fe.Record(source, task, task, group or task, "general", ref or f"def f():\n    return {task!r}",
                     asserts or f"assert f() == {task!r}", initial, lines, tests, float(tests))


def _fixture() -> list[fe.Record]:
    a = [_rec("a", i, 10 + i, 3) for i in range(20)]
    a.append(replace(a[19], task="a20", source_id="a20", group="a20"))     # same reference, tests, initial
    b = [_rec("b", i, 2, 1 + i % 3) for i in range(12)]
    b[0] = replace(b[0], reference=a[5].reference)                        # a's reference again
    b[1] = replace(b[1], tests=a[6].tests)                                # a's tests again
    return a + b


def test_duplicates_within_and_across_sources():
    assert fe.deduplicate(_fixture(), ["a", "b"]) == {"a20": "a19", "b00": "a05", "b01": "a06"}
    # the first source in the given order keeps its task
    assert fe.deduplicate(_fixture(), ["b", "a"])["a05"] == "b00"


def test_bounds_screening_quotas_and_seeded_selection_give_exact_counts():
    c = fe.construct(_fixture(), ["a", "b"], seed=42)
    assert c.bounds == {"a": {"solution_lines": 11.0, "test_func_count": 3.0, "test_coverage_ratio": 3.0},
                        "b": {"solution_lines": 2.0, "test_func_count": 1.0, "test_coverage_ratio": 1.0}}
    assert c.screened_out == {"a00"}
    cand = {s: sorted(t for t in c.candidates if t.startswith(s)) for s in "ab"}
    assert (len(cand["a"]), len(cand["b"])) == (5, 3)                     # 25% of 19 and of 10, half up
    assert len(c.training) == 14 + 7 and not c.training & c.candidates
    assert "a00" not in c.training | c.candidates and "b00" not in c.training | c.candidates

    refused = {cand["a"][0]: "diversity refinement", cand["b"][0]: "final admission: ΔC not applicable"}
    c = fe.construct(_fixture(), ["a", "b"], seed=42, admission=refused)
    assert c.quotas == {"a": 3, "b": 1}               # 15% of 29 = 4, split 4:2 over the eligible (2.67, 1.33)
    assert c.test <= c.candidates and not c.test & set(refused)
    assert c.test == fe.construct(_fixture(), ["a", "b"], seed=42, admission=refused).test   # seeded
    rows = dict(fe.funnel_rows(c))
    assert rows["source tasks, normalised"] == {"a": 21, "b": 12}
    assert rows["after cross-source deduplication"] == {"a": 20, "b": 10}
    assert rows["after difficulty screening (lower bounds)"] == {"a": 19, "b": 10}
    assert rows["candidate test pool (source quotas)"] == {"a": 5, "b": 3}
    assert rows["  after diversity refinement"] == {"a": 4, "b": 3}
    assert rows["  after final admission (ΔC + Entry Coverage applicable, digests match)"] == {"a": 4, "b": 2}
    assert rows["  unselected by the test quota (not a failure)"] == {"a": 1, "b": 1}
    assert rows["**final test set**"] == {"a": 3, "b": 1}


def test_a_group_stays_in_one_pool_and_every_source_keeps_a_test_task():
    recs = [_rec("a", i, 10, 3, group=f"kata{i // 4}") for i in range(40)] + [_rec("b", i, 5, 2) for i in range(3)]
    c = fe.construct(recs, ["a", "b"], seed=42)
    for g in {r.group for r in recs}:
        members = {r.task for r in recs if r.group == g}
        assert members <= c.candidates or members <= c.training
    assert c.quotas["b"] >= 1 and any(t.startswith("b") for t in c.test)


def test_normalised_text_ignores_comments_docstrings_and_layout(tmp_path: Path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "m.py").write_text('"""doc"""\ndef f(x):  # note\n    return x+1\n')
    (two / "m.py").write_text("def f(x):\n\n    return (x + 1)\n")
    assert fe.normalised_program(one) == fe.normalised_program(two)
    (one / "test_m.py").write_text("def test_a():\n    assert f(1)==2\n\ndef test_b():\n    assert f(2) == 3\n")
    assert fe.test_func_count(one) == 2 and fe.normalised_tests(one) == "assert f(1) == 2\nassert f(2) == 3"
    assert fe.solution_lines(two) == 2 and fe.changed_files(one, two) == 2

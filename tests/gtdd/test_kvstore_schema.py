"""Operation schema, generator, population and JSON comparison of the kvstore domain."""

from __future__ import annotations

import random

from gtdd.domains.base import Trace, TraceResult, first_divergence, json_equal, population_digest, trace_id
from gtdd.domains.kvstore import DOMAIN
from gtdd.domains.kvstore.population import check_population, draw_population, pinned


def test_valid_trace_has_no_problems():
    assert DOMAIN.validate([{"cmd": "SET", "args": ["k", "v"]}, {"cmd": "GET", "args": ["k"]}]) == []
    assert DOMAIN.validate(({"cmd": "DBSIZE", "args": []},)) == []  # tuples, as in Trace.ops


def test_bad_traces_name_the_op_index_and_field():
    problems = DOMAIN.validate([
        {"cmd": "SET", "args": ["k", "v"]},
        {"cmd": "FROB", "args": ["k"]},
        {"cmd": "GET", "args": [3]},
        {"cmd": "GET"},
        {"cmd": "GET", "args": ["k"], "extra": 1},
        {"cmd": "GET", "args": ["x" * 65]},
        {"cmd": "GET", "args": ["caf\u00e9"]},
        {"cmd": "MGET", "args": ["k"] * 9},
    ])
    text = "\n".join(problems)
    assert "op 1, field cmd: unknown command 'FROB'" in text
    assert "op 2, field args[0]: 3 is not of type 'string'" in text
    assert "op 3: 'args' is a required property" in text
    assert "op 4: Additional properties are not allowed" in text
    assert "op 5, field args[0]: argument longer than 64 characters" in text
    assert "op 6, field args[0]:" in text and "printable ASCII" in text
    assert "op 7, field args:" in text
    assert not any(p.startswith("op 0") for p in problems)


def test_trace_length_limits():
    assert DOMAIN.validate([]) == ["trace: [] should be non-empty"]
    assert DOMAIN.validate([{"cmd": "DBSIZE", "args": []}] * 41)[0].startswith("trace:")
    assert DOMAIN.validate({"cmd": "GET"})[0].startswith("trace:")  # type: ignore[arg-type]  # not a list: refused


def test_generator_lengths_validity_and_families():
    rng = random.Random(5)
    for i in range(400):
        family = DOMAIN.families[i % 8]
        trace = DOMAIN.generate(rng, family)
        assert 10 <= len(trace.ops) <= 40
        assert trace.family == family
        assert DOMAIN.validate(trace.ops) == []
        assert trace.id == trace_id(trace.ops)


def test_generator_is_deterministic_for_a_seed():
    a = [DOMAIN.generate(random.Random(42)) for _ in range(3)]
    b = [DOMAIN.generate(random.Random(42)) for _ in range(3)]
    assert a == b
    assert DOMAIN.generate(random.Random(43)) != a[0]


def test_population_size_families_distinct_and_pinned():
    population = DOMAIN.population()
    assert len(population) == 2000
    for family in DOMAIN.families:
        members = [t for t in population if t.family == family]
        assert len(members) == 250
        assert len({t.id for t in members}) == 250
    assert check_population() == []
    assert population_digest(population) == pinned()["sha256"]
    assert population_digest(draw_population(size=40)) == population_digest(population[:40])


def test_population_is_valid_and_the_reference_runs_it():
    population = DOMAIN.population()
    assert all(DOMAIN.validate(t.ops) == [] for t in population[::7])
    results = DOMAIN.reference_results(population[:200])
    assert all(r.error is None and len(r.replies) == len(t.ops) for r, t in zip(results, population))


def test_json_comparison_keeps_booleans_apart_from_integers():
    assert not json_equal(True, 1) and not json_equal(1, True) and not json_equal(False, 0)
    assert not json_equal([1, 0], [True, False])
    assert not json_equal(None, 0) and not json_equal("1", 1) and not json_equal([], {})
    assert not json_equal({"error": "X"}, {"error": "Y"})
    assert json_equal({"error": "X"}, {"error": "X"}) and json_equal([1, ["a", None]], (1, ("a", None)))
    assert json_equal(2, 2.0)  # JSON has one number type; only booleans are kept apart
    same, other = TraceResult((True,), None), TraceResult((1,), None)  # the domain's loss keeps them apart too
    assert DOMAIN.first_divergence(same, same) is None and DOMAIN.first_divergence(same, other) == 0


def test_first_divergence():
    expected = TraceResult((1, "OK", None), None)
    assert first_divergence(expected, TraceResult((1, "OK", None), None)) is None
    assert first_divergence(expected, TraceResult((True, "OK", None), None)) == 0
    assert first_divergence(expected, TraceResult((1, "OK"), "KeyError")) == 2
    assert first_divergence(expected, TraceResult((), "import")) == 0
    assert first_divergence(expected, TraceResult((1, "OK", None, 4), None)) == 3


def test_trace_is_hashable_and_its_id_ignores_the_family():
    ops = [{"cmd": "GET", "args": ["k"]}]
    a, b = Trace.of(ops, "strings"), Trace.of(ops, "keys")
    assert a.id == b.id and len({a, b}) == 2

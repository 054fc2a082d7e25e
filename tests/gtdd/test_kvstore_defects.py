"""The defect catalogue: exact edits of the reference, each caught by the population."""

from __future__ import annotations

import types

import pytest

from gtdd.domains.base import TraceResult, first_divergence
from gtdd.domains.kvstore import DOMAIN
from gtdd.domains.kvstore.defects import BY_ID, DEFECTS, apply_defects
from gtdd.execution import TraceExecutor


def load_store(source: str):
    # The defective reference is trusted code, so it runs in-process here (the sandboxed path is
    # covered by test_defect_through_the_isolated_runner).
    module = types.ModuleType("kvstore_under_test")
    exec(compile(source, "kvstore_under_test", "exec"), module.__dict__)
    return module.Store


def run_in_process(store_class, ops) -> TraceResult:
    store, replies = store_class(), []
    try:
        for op in ops:
            replies.append(store.execute(op["cmd"], list(op["args"])))
    except Exception as exc:  # noqa: BLE001 - a crash is a result here
        return TraceResult(tuple(replies), type(exc).__name__)
    return TraceResult(tuple(replies), None)


@pytest.fixture(scope="module")
def population_with_expected():
    population = DOMAIN.population()
    return list(zip(population, DOMAIN.reference_results(population)))


def test_catalogue_size_and_family_spread():
    assert len(DEFECTS) >= 24
    assert len(BY_ID) == len(DEFECTS)
    assert {d.family for d in DEFECTS} == set(DOMAIN.families)
    for family in DOMAIN.families:
        assert sum(d.family == family for d in DEFECTS) >= 3, family


def test_every_find_text_occurs_exactly_once_in_the_reference():
    source = DOMAIN.reference_source()
    for defect in DEFECTS:
        assert source.count(defect.find) == 1, defect.id
        assert defect.find != defect.replace, defect.id


def test_reference_without_defects_fails_no_population_trace(population_with_expected):
    store_class = load_store(apply_defects(DOMAIN.reference_source(), []))
    failing = [t.id for t, expected in population_with_expected
               if first_divergence(expected, run_in_process(store_class, t.ops)) is not None]
    assert failing == []


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda d: d.id)
def test_each_defect_fails_some_population_trace(defect, population_with_expected):
    store_class = load_store(apply_defects(DOMAIN.reference_source(), [defect.id]))
    # Own family first: most defects are caught there, so the search usually stops early.
    ordered = sorted(population_with_expected, key=lambda pair: pair[0].family != defect.family)
    assert any(first_divergence(expected, run_in_process(store_class, t.ops)) is not None
               for t, expected in ordered), defect.id


def test_apply_defects_rejects_unknown_and_overlapping_edits():
    source = DOMAIN.reference_source()
    with pytest.raises(KeyError, match="unknown defect"):
        apply_defects(source, ["no-such-defect"])
    with pytest.raises(ValueError, match="occurs 0 times"):
        apply_defects(source, ["tx-watch-empty-list", "tx-abort-precedence"])
    combined = apply_defects(source, ["sets-sadd-size", "zsets-zrank-one-based"])
    assert "return len(members)\n" in combined and ".index(args[1]) + 1" in combined


def test_defect_through_the_isolated_runner():
    sample = [t for t in DOMAIN.population() if t.family == "hashes"][:60]
    source = apply_defects(DOMAIN.reference_source(), ["hashes-hincrby-int"])
    got = TraceExecutor(DOMAIN).run(source, sample)
    expected = DOMAIN.reference_results(sample)
    diverging = [i for i, (e, g) in enumerate(zip(expected, got)) if DOMAIN.first_divergence(e, g) is not None]
    assert diverging
    # an integer where a string was expected is a reply mismatch; using it later crashes the store
    assert any(got[i].error is None for i in diverging)
    assert {got[i].error for i in diverging} <= {None, "AttributeError", "TypeError"}

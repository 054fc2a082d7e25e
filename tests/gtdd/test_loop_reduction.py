"""Reduction and feedback rules of the GTDD loop, on the small fake domain."""

from __future__ import annotations

from gtdd.domains.base import Trace
from gtdd.execution import EXECUTION, MISMATCH
from gtdd.feedback import CompactRule, ObservedFailure, StandardRule
from gtdd.reduction import budget, reduce_failures
from tests.gtdd.loop_fakes import REFERENCE, FakeDomain, apply_defects, fake_executor


def op(cmd, *args):
    return {"cmd": cmd, "args": list(args)}


def setup(defects):
    domain = FakeDomain()
    return domain, fake_executor(domain), apply_defects(REFERENCE, defects)


def test_mismatch_reduces_to_the_divergent_operation_and_keeps_its_identity():
    domain, ex, source = setup(["del-always-one"])
    ops = [op("PUSH", 1), op("SET", "a", "x"), op("PUSH", 2), op("GET", "a"), op("POP"),
           op("DEL", "b"), op("SIZE"), op("PUSH", 3)]
    trace = Trace.of(ops, "map")
    [failure] = ex.failures(source, [trace])
    assert failure.kind == MISMATCH and failure.op_index == 5
    [r] = reduce_failures(ex, source, [(trace, failure)], domain.validate, domain.max_ops)
    assert [o["cmd"] for o in r.reduced.ops] == ["DEL"]  # nothing else is needed
    assert r.kept == (5,)  # the same operation of the original trace
    assert r.failure.kind == MISMATCH and r.reduced.family == "map"
    assert 0 < r.executions <= budget(domain.max_ops)
    # the reduction really fails on the candidate and passes on the reference
    assert ex.failures(source, [r.reduced])[0] is not None
    assert ex.failures(REFERENCE, [r.reduced])[0] is None


def test_designated_mismatch_is_not_swapped_for_another_one():
    # Two defects: the first divergence is GET (op 1). Without GET the trace still fails -- at DEL --
    # but that is another failure, so the reduction must keep GET and may drop DEL.
    domain, ex, source = setup(["get-missing-empty", "del-always-one"])
    trace = Trace.of([op("SIZE"), op("GET", "zz"), op("PUSH", 4), op("DEL", "q")], "map")
    [failure] = ex.failures(source, [trace])
    assert failure.op_index == 1
    [r] = reduce_failures(ex, source, [(trace, failure)], domain.validate, domain.max_ops)
    assert r.kept == (1,)
    assert r.reduced.ops[0]["cmd"] == "GET"


def test_execution_failure_keeps_its_error_class():
    domain, ex, source = setup(["size-crash"])
    trace = Trace.of([op("SET", "a", "b"), op("PUSH", 1), op("POP"), op("GET", "a"), op("SIZE"),
                      op("PUSH", 2)], "stack")
    [failure] = ex.failures(source, [trace])
    assert failure.kind == EXECUTION and failure.error == "ZeroDivisionError"
    [r] = reduce_failures(ex, source, [(trace, failure)], domain.validate, domain.max_ops)
    assert r.failure.error == "ZeroDivisionError"
    assert [o["cmd"] for o in r.reduced.ops] == ["SIZE"]


def test_a_reduction_never_grows_and_respects_the_budget_on_many_traces():
    domain, ex, source = setup(["pop-empty-none", "push-bool", "del-always-one"])
    import random

    rng = random.Random(3)
    traces = [domain.generate(rng) for _ in range(60)]
    pool = [(t, f) for t, f in zip(traces, ex.failures(source, traces)) if f is not None]
    assert len(pool) > 10
    for r in reduce_failures(ex, source, pool, domain.validate, domain.max_ops):
        assert len(r.reduced.ops) <= len(r.original.ops)
        assert r.executions <= budget(domain.max_ops)
        assert not domain.validate(list(r.reduced.ops))
        again = ex.failures(source, [r.reduced])[0]
        assert again is not None and again.kind == r.original_failure.kind


def _candidate(ex, source, ops, family):
    trace = Trace.of(ops, family)
    return ObservedFailure(trace, ex.failures(source, [trace])[0])


def test_standard_rule_spreads_over_families_then_mechanisms():
    domain, ex, source = setup(["pop-empty-none", "push-bool", "del-always-one"])
    short_stack = _candidate(ex, source, [op("POP")], "stack")
    short_stack2 = _candidate(ex, source, [op("PUSH", 1)], "stack")
    longer_map = _candidate(ex, source, [op("SIZE"), op("SIZE"), op("DEL", "a")], "map")
    picked = StandardRule().select([short_stack, short_stack2, longer_map], 2)
    # the second pick is the map failure (a new family) although it is the longest
    assert {c.family for c in picked} == {"stack", "map"}
    compact = CompactRule().select([short_stack, short_stack2, longer_map], 2)
    assert all(c.length == 1 for c in compact)


def test_compact_rule_prefers_families_already_reported():
    domain, ex, source = setup(["pop-empty-none", "del-always-one"])
    stack = _candidate(ex, source, [op("POP")], "stack")
    map_ = _candidate(ex, source, [op("DEL", "a")], "map")
    assert CompactRule().select([stack, map_], 1, frozenset({"map"}))[0].family == "map"
    assert CompactRule().select([stack, map_], 1, frozenset({"stack"}))[0].family == "stack"

"""Policies, the sandboxed generator runner, the LLM agents (scripted models) and the simulated ones."""

from __future__ import annotations

import random

import pytest

from gtdd.agents import CodingRequest, LLMCoder, LLMTester, TestingRequest, extract_code
from gtdd.domains.base import TraceResult
from gtdd.execution import TraceExecutor
from gtdd.policies import POLICIES, parse_policies, proposals_from_raw, run_generator, staged_chunk
from gtdd.sim import CODER_MARK, TESTER_MARK, SimCoder, SimTester
from testhelix.core.errors import UserError
from testhelix.llm.base import ModelUnavailable, Usage
from testhelix.llm.registry import model_ref
from testhelix.llm.testing import Reply, ScriptedModel
from tests.gtdd.loop_fakes import REFERENCE, FakeDomain, apply_defects, fake_executor


def test_the_nine_policies_and_their_schedules():
    assert list(POLICIES) == ["public-only", "static-property", "static-llm", "dynamic-blind",
                              "dynamic-informed", "static-llm-600", "staged-600",
                              "regenerated-no-history", "blind-rerun"]
    rounds = 4
    tests = {name: [t for t in range(1, rounds + 1) if p.tests_in(t, rounds)] for name, p in POLICIES.items()}
    assert tests["public-only"] == []
    assert tests["static-property"] == tests["static-llm"] == tests["static-llm-600"] == [1]
    assert tests["dynamic-blind"] == tests["staged-600"] == tests["regenerated-no-history"] == [1, 2, 3]
    assert POLICIES["dynamic-informed"].sees_module and not POLICIES["dynamic-blind"].sees_module
    assert not POLICIES["regenerated-no-history"].sees_history
    assert POLICIES["blind-rerun"].stream != POLICIES["dynamic-blind"].stream
    assert POLICIES["staged-600"].static_key == POLICIES["static-llm-600"].static_key
    raw = list(range(600))
    assert [len(staged_chunk(raw, t, 4)) for t in (1, 2, 3)] == [200, 200, 200]
    assert staged_chunk(raw, 2, 4)[0] == 200
    with pytest.raises(UserError, match="unknown policy nope"):
        parse_policies("public-only,nope")


def test_invalid_proposals_are_counted_but_not_kept():
    domain = FakeDomain()
    raw = [[{"cmd": "PUSH", "args": [1]}], [{"cmd": "PUSH", "args": ["x"]}], "junk", [],
           {"ops": [{"cmd": "GET", "args": ["a"]}, {"cmd": "SET", "args": ["a", "b"]}]}]
    p = proposals_from_raw(domain, raw, 10)
    assert len(p.valid) == 2 and p.invalid == 3 and p.proposed == 5 and p.requested == 10
    assert [t.family for t in p.valid] == ["stack", "map"]
    assert any("trace 1" in msg for msg in p.problems)


@pytest.mark.parametrize("body, expect", [
    ("def generate(rng, n):\n    return [[{'cmd': 'PUSH', 'args': [rng.randint(0, 9)]}] for _ in range(n)]\n", None),
    ("def generate(rng, n):\n    raise KeyError('x')\n", "KeyError"),
    ("import os\ndef generate(rng, n):\n    return [[{'cmd': 'SECRET', 'args': [os.environ.get('ANTHROPIC_API_KEY')]}]]\n", None),
    ("import socket\ndef generate(rng, n):\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    return []\n", "*"),
    ("def generate(rng, n):\n    while True:\n        pass\n", "timeout"),
    ("def generate(rng, n):\n    return [object()]\n", "malformed"),
])
def test_generators_run_isolated(body, expect, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-must-not-leak")
    raw, error = run_generator(body, 5, seed=7, cpu_s=1.0)
    if expect is None:
        assert error is None and len(raw) in (1, 5)
        assert "sk-must-not-leak" not in repr(raw)
    elif expect == "*":
        assert error is not None and raw == []  # no network: the connection attempt fails
    else:
        assert error == expect and raw == []


def test_generator_runs_are_deterministic_for_a_seed():
    body = "def generate(rng, n):\n    return [[{'cmd': 'PUSH', 'args': [rng.randint(0, 99)]}] for _ in range(n)]\n"
    assert run_generator(body, 4, seed=3) == run_generator(body, 4, seed=3)
    assert run_generator(body, 4, seed=3) != run_generator(body, 4, seed=4)


def scripted(replies) -> ScriptedModel:
    """Answers from a list of (text, stop reason) pairs or exceptions; remembers the requests."""
    return ScriptedModel([r if isinstance(r, Exception) else Reply(r[0], stop_reason=r[1]) for r in replies],
                         usage=Usage(10, 20))


def test_llm_coder_sends_spec_module_and_feedback_through_the_metered_door():
    """No second retry layer (the SDKs retry): a failed request leaves the module unchanged, and
    every call, the failed one too, is a ledger row with what was charged."""
    model = scripted([ModelUnavailable("busy"), ("Here:\n```python\nclass Store: pass\n```\n", "end_turn")])
    coder = LLMCoder(model)
    cex = {"family": "map", "ops": [{"cmd": "DEL", "args": ["a"]}], "expected": [0], "observed": [1],
           "status": "ok"}
    request = CodingRequest(0, 2, 1, "SPEC TEXT", "store.py", "OLD MODULE", (cex,),
                            ({"ops": [], "passed": True},), accepted=False)
    failed = coder.write_module(request)
    assert failed.module == "OLD MODULE" and "busy" in failed.note
    assert [(c["status"], c["charged_tokens"]) for c in failed.calls] == [("error", 0)]   # refused: not billed
    result = coder.write_module(request)
    assert result.module == "class Store: pass\n" and result.simulated     # a test double says so
    assert [(c["status"], c["input_tokens"], c["output_tokens"]) for c in result.calls] == [("ok", 10, 20)]
    prompt = model.requests[-1].messages[1].content
    assert "SPEC TEXT" in prompt and "OLD MODULE" in prompt and '"DEL"' in prompt
    assert "not accepted" in prompt


def test_a_request_beyond_the_round_token_cap_is_not_sent():
    model = scripted([("```python\nclass Store: pass\n```", "end_turn")])
    result = LLMCoder(model, round_token_cap=300).write_module(CodingRequest(0, 1, 1, "SPEC " * 200, "store.py", None))
    assert model.requests == [] and result.calls == () and result.note.startswith("token cap")


def test_llm_tester_sees_the_module_only_when_informed_and_cut_off_replies_yield_nothing():
    model = scripted([("```python\ndef generate(rng, n):\n    return []\n```", "end_turn"),
                           ("```python\ndef generate(rng, n):", "max_tokens")])
    tester = LLMTester(model)
    blind = TestingRequest(0, 1, 1, "SPEC", ("stack", "map"), 200)
    assert (tester.write_generator(blind).source or "").startswith("def generate")
    assert "current module" not in model.requests[-1].messages[1].content
    informed = TestingRequest(0, 1, 1, "SPEC", ("stack", "map"), 200, module="SOURCE OF MODULE")
    assert tester.write_generator(informed).source is None
    assert "SOURCE OF MODULE" in model.requests[-1].messages[1].content
    assert extract_code("no code") is None


def test_sim_coder_repairs_exposed_defects_and_says_it_is_simulated():
    domain = FakeDomain()
    ex = fake_executor(domain)
    coder = SimCoder("sim:strong", domain, ex)
    first = coder.write_module(CodingRequest(0, 1, 5, domain.spec(), "store.py", None))
    assert first.simulated and first.module.startswith(CODER_MARK)
    active = coder.active_defects(first.module)
    assert len(active) >= 2
    assert first.module.endswith(apply_defects(REFERENCE, sorted(active)))
    # a counterexample for one of them: over many seeds it is repaired in most, the others rarely
    target = active[0]
    trace = next(t for t in domain.population()
                 if ex.failures(apply_defects(REFERENCE, [target]), [t])[0] is not None)
    cex = {"family": trace.family, "ops": [dict(o) for o in trace.ops],  # as the loop reports it
           "expected": list(ex.reference([trace])[0].replies)}
    repaired = sum(target not in coder.active_defects(coder.write_module(CodingRequest(
        0, 2, seed, domain.spec(), "store.py", first.module, (cex,))).module) for seed in range(200))
    assert 0.65 < repaired / 200 < 0.95  # sim:strong repairs an exposed defect with probability 0.8


def test_sim_tester_aims_at_visible_defects_when_informed():
    domain = FakeDomain()
    tester = SimTester("sim:strong", domain)
    module = apply_defects(REFERENCE, ["del-always-one"])
    request = TestingRequest(0, 1, 11, domain.spec(), domain.families, 50)
    informed = TestingRequest(0, 1, 11, domain.spec(), domain.families, 50, module=module)
    assert [d.id for d in tester.visible_defects(module)] == ["del-always-one"]
    rng = random.Random(0)
    weights = [tester.family_weights(informed, rng)["map"] for _ in range(50)]
    assert max(weights) == 5.0 and tester.family_weights(request, rng)["map"] == 1.0
    program = tester.write_generator(request)
    assert program.simulated and (program.source or "").startswith(TESTER_MARK)


def test_rejected_credentials_stop_the_run_with_a_user_error():
    from testhelix.llm.base import ModelAuthError

    coder = LLMCoder(scripted([ModelAuthError("invalid x-api-key")]))
    with pytest.raises(UserError, match="invalid x-api-key"):
        coder.write_module(CodingRequest(0, 1, 1, "SPEC", "store.py", None))


def test_the_commands_sandbox_choice_reaches_the_isolation_explicitly(monkeypatch):
    """`gtdd experiment --sandbox S` travels to every sandboxed run as an argument (never through the
    environment), with the domain's module file and entry class: the executor, not the domain, runs a
    candidate, so a domain that declares no runner of its own is isolated all the same."""
    import gtdd.isolation

    seen = []

    def run_traces(source, traces, limits, module_file, entry, sandbox_kind):
        seen.append((module_file, entry, sandbox_kind, limits.cpu_s))
        return [TraceResult((), None) for _ in traces]

    monkeypatch.setattr(gtdd.isolation, "run_traces", run_traces)
    domain = FakeDomain()
    chosen, default = TraceExecutor(domain, 0.5, "plain"), TraceExecutor(domain)
    chosen.candidate(REFERENCE, domain.population()[:2])
    default.candidate(REFERENCE + "\n", domain.population()[:2])
    assert seen == [("store.py", "Store", "plain", 0.5), ("store.py", "Store", None, 1.0)]
    assert chosen.execution_config()["sandbox"] == "plain"


def test_the_seeds_three_retries_are_the_sdks_own(monkeypatch):
    """A model-driven coder's model is built with max_retries=3 (seed Section 6), the one retry layer."""
    import testhelix.llm.registry as registry
    from gtdd.role_players import make_coder

    built = {}

    def create_model(name, **kw):
        built.update(kw)
        return scripted([])

    monkeypatch.setattr(registry, "create_model", create_model)
    coder = make_coder(model_ref("anthropic:claude-haiku-4-5"), FakeDomain(), fake_executor())
    assert isinstance(coder, LLMCoder) and built["max_retries"] == 3

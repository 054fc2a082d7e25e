"""The coder and tester roles, and their LLM implementations over the ChatModel protocol.

Both roles answer single requests without tools: the coder gets
the spec, its current module and every counterexample reported so far (plus the public tests'
outcome and the last aggregate acceptance decision) and returns a complete module; the tester gets
the spec, the public examples, and -- depending on the policy -- the reported counterexamples and
the committed module, and returns a trace-generator program that the harness runs in a sandbox.

The simulated test doubles that play the same roles live in gtdd/sim.py; `gtdd/role_players.py` picks
one or the other from a model name (`sim:strong`, `anthropic:...`, ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from testhelix.agent.budget import Budget, BudgetExhausted, MemoryLedger
from testhelix.core.errors import UserError
from testhelix.llm.base import CallTags, ChatModel, Completion, Message, ModelAuthError, ModelError, ModelRequest

CODER_MAX_OUTPUT_TOKENS = 16000
TESTER_MAX_OUTPUT_TOKENS = 8000  # the generator's output limit
# Tokens one model-driven role may spend in one round (its one request: prompt bound + output), the
# `--round-token-cap` option. Above a coder's 16000 output tokens plus a prompt of spec, module and
# every counterexample so far; a request that does not fit is refused (or its output allowance cut).
ROUND_TOKEN_CAP = 250_000
# A failed request is retried up to three times (seed Section 6), by the SDK: its retries are the
# only retry layer (gtdd/role_players.py builds the models with them).
SDK_RETRIES = 3
VISIBLE_FAILURES_SHOWN = 20  # failing visible tests quoted in a coding prompt (the count is always given)


@dataclass(frozen=True)
class CodingRequest:
    block: int
    round: int
    seed: int
    spec: str
    module_name: str
    current_module: str | None  # None: write the first module from the spec alone
    counterexamples: tuple[dict, ...] = ()  # every one reported so far
    public_results: tuple[dict, ...] = ()  # public tests: ops, expected, observed, passed
    accepted: bool | None = None  # the last aggregate acceptance decision (None: no gate)
    visible_failures: tuple[dict, ...] = ()  # visible fixed tests: saved tests the module fails


@dataclass(frozen=True)
class CodingResult:
    module: str
    simulated: bool
    model: str
    edits: dict = field(default_factory=dict)  # files besides the module the session touched
    note: str = ""
    calls: tuple[dict, ...] = ()


@dataclass(frozen=True)
class TestingRequest:
    __test__ = False  # not a pytest test class, despite the name

    block: int
    round: int
    seed: int
    spec: str
    families: tuple[str, ...]
    traces: int  # how many traces the generator is asked for
    public_examples: tuple[tuple[dict, ...], ...] = ()
    counterexamples: tuple[dict, ...] = ()  # empty unless the policy shows the history
    module: str | None = None  # the committed module, for a source-informed tester only


@dataclass(frozen=True)
class GeneratorProgram:
    source: str | None  # None: the response held no runnable generator
    simulated: bool
    model: str
    note: str = ""
    calls: tuple[dict, ...] = ()


class Coder(Protocol):
    name: str
    simulated: bool

    def write_module(self, request: CodingRequest) -> CodingResult: ...


class Tester(Protocol):
    name: str
    simulated: bool

    def write_generator(self, request: TestingRequest) -> GeneratorProgram: ...


# --- prompts ---------------------------------------------------------------------------------

def _counterexample_lines(items: Sequence[dict]) -> str:
    if not items:
        return "(none)"
    return "\n".join(json.dumps({k: c[k] for k in ("family", "ops", "expected", "observed", "status")
                                 if k in c}) for c in items)


def coder_prompt(request: CodingRequest) -> tuple[str, str]:
    system = ("You implement a software module from its written specification. Reply with the complete "
              "module in one ```python code block and nothing the module does not need.")
    parts = [f"# Specification\n\n{request.spec}", f"Write the module `{request.module_name}`."]
    if request.current_module is not None:
        parts.append(f"# Your current module\n\n```python\n{request.current_module}\n```")
        failing = [p for p in request.public_results if not p.get("passed")]
        parts.append(f"# Public tests\n\n{len(request.public_results) - len(failing)} of "
                     f"{len(request.public_results)} pass." + ("\nFailing:\n" + _counterexample_lines(failing)
                                                              if failing else ""))
        parts.append("# Counterexamples reported so far (each: operations on a fresh instance, the "
                     "expected replies, what your module returned, its execution status)\n\n"
                     + _counterexample_lines(request.counterexamples))
        if request.visible_failures:
            shown = request.visible_failures[:VISIBLE_FAILURES_SHOWN]
            parts.append(f"# Saved tests in the repository (visible; protected) that your module fails: "
                         f"{len(request.visible_failures)}" + (f", the first {len(shown)} shown"
                                                               if len(shown) < len(request.visible_failures)
                                                               else "") + "\n\n" + _counterexample_lines(shown))
        if request.accepted is not None:
            parts.append(f"# Last acceptance decision\n\n{'accepted' if request.accepted else 'not accepted'}")
        parts.append("Fix the module so that it follows the specification on every input, not just "
                     "on the examples above, and return the whole module.")
    return system, "\n\n".join(parts)


def tester_prompt(request: TestingRequest) -> tuple[str, str]:
    system = ("You are an adversarial tester. You write a Python program that generates test inputs "
              "likely to expose violations of a specification. Reply with one ```python code block.")
    parts = [f"# Specification\n\n{request.spec}",
             f"Requirement families: {', '.join(request.families)}.",
             "# Examples of valid traces\n\n" + "\n".join(json.dumps(list(t)) for t in request.public_examples)]
    if request.counterexamples:
        parts.append("# Counterexamples already reported to the developer\n\n"
                     + _counterexample_lines(request.counterexamples))
    if request.module is not None:
        parts.append(f"# The developer's current module (read-only)\n\n```python\n{request.module}\n```")
    parts.append(
        f"Write a module defining `generate(rng, n)` that returns a list of n traces. A trace is a list "
        f"of operations applied to a fresh instance, each a JSON object {{\"cmd\": NAME, \"args\": [...]}}; "
        f"do not include expected replies (a reference implementation computes them). Use only `rng` "
        f"(a random.Random) for randomness and only the standard library. Invalid traces are discarded. "
        f"It will be called with n = {request.traces}. Aim at interactions between rules and at edge cases "
        f"the specification fixes, so that an incorrect implementation disagrees with the reference.")
    return system, "\n\n".join(parts)


_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


def extract_code(text: str) -> str | None:
    """The longest fenced code block of a reply, or None when there is none."""
    blocks = _CODE_BLOCK.findall(text)
    return max(blocks, key=len) if blocks else None


def complete(model: ChatModel, system: str, user: str, max_output_tokens: int, tags: CallTags,
             cap_tokens: int = ROUND_TOKEN_CAP) -> tuple[Completion | None, list[dict], str]:
    """One request through the metered door (`Budget.complete`: a reservation within `cap_tokens`, the
    answer checked, what was charged written as one ledger row). Returns the answer (None when there
    is none), the ledger rows for the driver thread to store, and why there is no answer. No retry
    here: the provider SDKs already retry what a retry can fix (408/409/429/5xx)."""
    request = ModelRequest(messages=(Message("system", system), Message("user", user)),
                           max_output_tokens=max_output_tokens, tags=tags)
    ledger = MemoryLedger()
    budget = Budget(cap_tokens, label=f"gtdd {tags.role} round {tags.round}", run_label="gtdd",
                    task_id=f"block{tags.pair}", sink=ledger)
    try:
        return budget.complete(model, request), ledger.rows, ""
    except ModelAuthError as err:  # no retry can help, and a run of empty modules is worthless
        raise UserError(f"{model.name}: {err}") from None
    except BudgetExhausted as err:
        return None, ledger.rows, f"token cap: {err}"[:300]
    except ModelError as err:
        return None, ledger.rows, f"request failed: {err}"[:300]


class _ModelAgent:
    """A coder or tester played by a chat model (its name is the model's)."""

    simulated = False

    def __init__(self, model: ChatModel, round_token_cap: int = ROUND_TOKEN_CAP):
        self.model = model
        self.name = model.name
        self.round_token_cap = round_token_cap


class LLMCoder(_ModelAgent):
    def write_module(self, request: CodingRequest) -> CodingResult:
        system, user = coder_prompt(request)
        tags = CallTags(role="generation" if request.current_module is None else "repair",
                        pair=request.block, round=request.round)
        completion, calls, failure = complete(self.model, system, user, CODER_MAX_OUTPUT_TOKENS, tags,
                                              self.round_token_cap)
        if completion is None:  # no answer: the session ends with the module unchanged
            return CodingResult(request.current_module or "", False, self.name, note=failure, calls=tuple(calls))
        code = extract_code(completion.text)
        return CodingResult(code if code is not None else completion.text, completion.simulated,
                            self.name, note="" if code is not None else "no code block",
                            calls=tuple(calls))


class LLMTester(_ModelAgent):
    def write_generator(self, request: TestingRequest) -> GeneratorProgram:
        system, user = tester_prompt(request)
        completion, calls, failure = complete(self.model, system, user, TESTER_MAX_OUTPUT_TOKENS,
                                              CallTags(role="challenge", pair=request.block, round=request.round),
                                              self.round_token_cap)
        if completion is None:
            return GeneratorProgram(None, False, self.name, failure, tuple(calls))
        if completion.stop_reason == "max_tokens":  # a cut-off reply yields no runnable generator
            return GeneratorProgram(None, completion.simulated, self.name, "cut off", tuple(calls))
        return GeneratorProgram(extract_code(completion.text), completion.simulated, self.name, "",
                                tuple(calls))

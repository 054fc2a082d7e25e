"""`SimulatedModel`: an offline ChatModel for `sim:NAME`, a test double at the provider boundary.

The host constructs it with the Task it plays (it reads the task's hidden simulation bank) and a
seed. It answers every role through the same protocol as a real model:

- generation / repair: tool calls, chosen by `SimAgentPolicy` (testhelix/llm/sim/agent.py);
- planning: `{"directions": [...]}`; review: `{"verdict", "reasons", "suspect_tests"}`;
- feedback and challenge: short plain text;
- a request no agent role's system prompt names: the simulated role a package contributes for
  it, if one recognises it (contributed.py; AutoSaddler's optimizer sessions).

It receives exactly what a provider receives -- the messages (with tool results) and the tools: the
role is read from the system message (`infer_role`), and the request's CallTags are not read.
Decisions use common random numbers (draws.py): each is keyed by the model's `seed=N`, the task,
the role, the pair's direction, the round's feedback, the step and the decision's name -- never by
the strategy's text -- so an edit without a cue (cues.py) leaves every decision as it was, and a cue
changes only what it acts on. `noise=P` re-draws a share P of the decisions from a stream of the
evaluation's own (the `seed` the host passes per evaluation). Usage is deterministic too:
characters / 4 of the request and of the reply, cost None. Every completion says it is simulated:
the model id starts with `sim:` and `metadata["simulated"]` is True.

Its private knowledge is the task's bank, whose labels come from running bank tests on the initial
program and on the bank's own repairs only (bank.py). What it writes into messages is limited to
bank test functions and bank repairs, never the reference, the panel or the trusted tests. The
reviewer judges from the suite text, the symptoms it is shown and its own runs, with a seeded
error rate (`review_accuracy`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import TYPE_CHECKING

from testhelix.core.agent_roles import CANDIDATE_PHASES
from testhelix.llm.base import Completion, Message, ModelRequest, Usage
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.role_prompts import FEEDBACK_HEADER, system_role
from testhelix.llm.sim.agent import SimAgentPolicy
from testhelix.llm.sim.bank import bank_for, incidental_reasons
from testhelix.llm.sim.contributed import SimulatedRole, role_for
from testhelix.llm.sim.cues import REVIEW_BOOST, read_cues
from testhelix.llm.sim.draws import Draws
from testhelix.llm.sim.options import SimOptions
from testhelix.llm.sim.profiles import get_profile

if TYPE_CHECKING:
    from testhelix.tasks.task import Task

DIRECTIONS = ("reproduce the exact call sequence of the bug report", "check the boundary next to the reported case",
              "drive the program through the state change the report involves", "check the value returned right "
              "after the failing call", "combine the reported call with a neighbouring valid call")
_DIRECTION = re.compile(r"^Your direction for this attempt: (.*)$", re.M)


def infer_role(messages: tuple[Message, ...]) -> str:
    """The role a request plays, read from its system message as a real model would."""
    return _read_role(messages)[0]


def _read_role(messages: tuple[Message, ...]) -> tuple[str, SimulatedRole | None]:
    """The role and, for a request no agent role's system prompt names, the contributed role that
    recognises it (its name is the role)."""
    role = system_role(next((m.content for m in messages if m.role == "system"), ""))
    contributed = role_for(messages) if role == "other" else None
    return (contributed.name if contributed is not None else role), contributed


def _seed(*parts: object) -> int:
    return int(hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16], 16)


def request_seed(seed: int, messages: tuple[Message, ...]) -> int:
    """For contributed roles only (not an execution decision): the prompt text and the model's own
    earlier replies. Tool results are left out: they carry run times."""
    own = [(m.role, m.content, [(c.name, c.raw_arguments) for c in m.tool_calls])
           for m in messages if m.role in ("system", "user", "assistant")]
    return _seed(seed, own)


def estimated_input_tokens(request: ModelRequest) -> int:
    """Input tokens by the simulation's rule (characters / 4 + 1 over messages, tool calls and tool
    specs); `testhelix serve` answers Anthropic count_tokens with the same estimate."""
    chars = sum(len(m.content) + sum(len(c.raw_arguments) for c in m.tool_calls) for m in request.messages)
    return (chars + sum(len(json.dumps(t.to_dict())) for t in request.tools)) // 4 + 1


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def session_key(messages: tuple[Message, ...]) -> tuple[str, str, int]:
    """Where a session's step stands, from what the model receives but never from strategy text:
    the pair (the direction the planner gave it), the round (the feedback the session answers,
    empty in generation) and the step (how many replies the model has given in it)."""
    users = [m.content for m in messages if m.role == "user"]
    direction = next(iter(_DIRECTION.findall(users[0] if users else "")), "")
    feedback = next((u for u in users if u.startswith(FEEDBACK_HEADER)), "")
    return direction, _digest(feedback) if feedback else "", sum(1 for m in messages if m.role == "assistant")


class SimulatedModel:
    simulated = True   # base.TestDouble

    def __init__(self, info: ModelInfo, *, task: Task, seed: int = 0, options: SimOptions | None = None) -> None:
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.profile = get_profile(info.model)
        self.task = task
        self.seed = seed               # the evaluation's sampling seed: read only when options.noise > 0
        self.options = options or SimOptions()
        self.bank = bank_for(task)
        files = tuple(sorted(str(p.relative_to(task.initial_dir)) for p in task.initial_dir.rglob("*.py")
                             if "__pycache__" not in p.parts))
        self.policy = SimAgentPolicy(self.profile, self.bank, task.context, files)

    def complete(self, request: ModelRequest) -> Completion:
        # Only what a provider receives decides: the messages and the tools. The request's tags
        # (role, pair, round, step) are bookkeeping for the host and are not read here.
        role, contributed = _read_role(request.messages)
        calls: list = []
        if role in CANDIDATE_PHASES:
            text, calls = self.policy.decide(request, role, self.draws(role, *session_key(request.messages)))
        elif role == "planning":
            text = self._plan(request)
        elif role == "review":
            text = self._review(request)
        elif role == "feedback":
            text = self._feedback(request)
        elif contributed is not None:
            text = contributed.answer(request.messages, random.Random(request_seed(self.seed, request.messages)))
        else:
            text = ("Pin down the behaviour of the reported case at its boundary: one more input just past it, "
                    "with the value the specification requires.")
        reply_chars = len(text) + sum(len(c.raw_arguments) for c in calls)
        out_tokens = min(request.max_output_tokens, reply_chars // 4 + 1)
        usage = Usage(input_tokens=estimated_input_tokens(request), output_tokens=out_tokens, cost_usd=None)
        return Completion(text=text, tool_calls=tuple(calls), stop_reason="tool_use" if calls else "end_turn",
                          usage=usage, model=self.name,
                          metadata={"simulated": True, "profile": self.profile.name, "seed": self.options.seed,
                                    "noise": self.options.noise})

    def draws(self, role: str, *where: object) -> Draws:
        """The keyed draws of one decision point (draws.py)."""
        return Draws((self.options.seed, self.task.id, role, *where), self.options.noise, self.seed)

    # --- single-call roles -----------------------------------------------------------------
    def _plan(self, request: ModelRequest) -> str:
        m = re.search(r"Give (\d+) directions", "\n".join(x.content for x in request.messages))
        k = int(m.group(1)) if m else 3
        order = self.draws("planning", k).shuffled(DIRECTIONS, "order")
        return json.dumps({"directions": (order * (k // len(order) + 1))[:k] if k > len(order) else order[:k]})

    def _review(self, request: ModelRequest) -> str:
        """Judges each test from its text and from what the reviewer can run itself (the bank's
        tests on the original program and on its own candidate repairs), plus the execution
        symptoms it is shown; it errs at its own seeded rate."""
        body = "\n".join(m.content for m in request.messages if m.role == "user")
        suite = body.split("## Suite", 1)[1].split("## Execution symptoms", 1)[0] if "## Suite" in body else ""
        symptoms = body.split("## Execution symptoms", 1)[1] if "## Execution symptoms" in body else ""
        failing_on_peers = set(re.findall(r"test_\w+", " ".join(re.findall(r"failing tests: ([^)]*)\)", symptoms))))
        names = list(dict.fromkeys(re.findall(r"^def (test_\w+)\(", suite, re.M)))
        cues = read_cues(request.messages, self.task.context)
        accuracy = min(0.98, self.profile.review_accuracy + (REVIEW_BOOST if cues["narrow"] else 0.0))
        draws = self.draws("review", _digest(suite, symptoms))   # the suite and what it showed, not the prompt
        suspects, reasons = [], []
        for name in names:
            why = self._doubts(name, suite, failing_on_peers)
            strong = [w for w, weight in why if weight == "strong"]
            chance = accuracy if strong else (accuracy / 2 if why else (1 - accuracy) / 4)
            if draws.below(chance, "flag", name):
                suspects.append(name)
                reasons.append(f"{name}: " + ("; ".join(w for w, _ in why) if why else
                                              "asserts behaviour the specification does not clearly fix"))
        return json.dumps({"verdict": "revise" if suspects else "approve",
                           "reasons": reasons or ["every test checks behaviour the specification requires"],
                           "suspect_tests": suspects})

    def _doubts(self, name: str, suite: str, failing_on_peers: set[str]) -> list[tuple[str, str]]:
        m = re.search(rf"^def {name}\(.*?(?=^def |^# file:|\Z)", suite, re.S | re.M)
        why = [(r, "strong") for r in incidental_reasons(m.group(0) if m else "")]
        role = self.bank.role(name)
        if role == "suspect":
            why.append(("fails on the repair I would write", "strong"))
        if name in failing_on_peers and role != "reproduces":
            why.append(("fails on a peer program although it does not reproduce the report", "weak"))
        return why

    def _feedback(self, request: ModelRequest) -> str:
        body = "\n".join(m.content for m in request.messages if m.role == "user")
        names = list(dict.fromkeys(re.findall(r"test_\w+", body.split("## Reviewed counterexamples", 1)[-1])))
        if not names:
            return "No reviewed counterexample implicates a test; keep the suite and re-check the repair."
        return "\n".join(f"{n} failed on a peer repair that reviewers judged correct: check whether it asserts "
                         "behaviour the specification leaves open." for n in names[:8])

"""`SimulatedModel`: an offline ChatModel for `sim:NAME`, a test double at the provider boundary.

The host constructs it with the Task it plays (it reads the task's hidden simulation bank) and a
seed. It answers every role through the same protocol as a real model:

- generation / repair: tool calls, chosen by `SimAgentPolicy` (testhelix/llm/sim/agent.py);
- planning: `{"directions": [...]}`; review: `{"verdict", "reasons", "suspect_tests"}`;
- feedback and challenge: short plain text; optimizer: a JSON edit (testhelix/llm/sim/optimizer.py).

The role comes from the request's CallTags (a real model reads it from the prompt). Decisions are
deterministic for (seed, task id, role, pair, round, step, prompt). Usage is deterministic too:
characters / 4 of the request and of the reply, cost None. Every completion says it is simulated:
the model id starts with `sim:` and `metadata["simulated"]` is True.

What it writes into messages is limited to bank test functions and bank repairs, never the
reference, the panel or the trusted tests.
"""

from __future__ import annotations

import hashlib
import json
import random
import re

from testhelix.llm.base import Completion, ModelRequest, Usage
from testhelix.llm.registry import ModelInfo
from testhelix.llm.sim.agent import SimAgentPolicy, strategy_effect
from testhelix.llm.sim.bank import bank_for
from testhelix.llm.sim.optimizer import propose
from testhelix.llm.sim.profiles import get_profile

DIRECTIONS = ("reproduce the exact call sequence of the bug report", "check the boundary next to the reported case",
              "drive the program through the state change the report involves", "check the value returned right "
              "after the failing call", "combine the reported call with a neighbouring valid call")


def _seed(*parts) -> int:
    return int(hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16], 16)


class SimulatedModel:
    def __init__(self, info: ModelInfo, *, task, seed: int = 0):
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.profile = get_profile(info.model)
        self.task = task
        self.seed = seed
        self.bank = bank_for(task)
        files = tuple(sorted(str(p.relative_to(task.initial_dir)) for p in task.initial_dir.rglob("*.py")
                             if "__pycache__" not in p.parts))
        self.policy = SimAgentPolicy(self.profile, self.bank, task.context, files)

    def complete(self, request: ModelRequest) -> Completion:
        tags = request.tags
        prompt_digest = hashlib.sha256("".join(m.content for m in request.messages[:2]).encode()).hexdigest()[:12]
        rng = random.Random(_seed(self.seed, self.task.id, tags.role, tags.pair, tags.round, tags.step, prompt_digest))
        calls: list = []
        if tags.role in ("generation", "repair"):
            text, calls = self.policy.decide(request, tags.role, rng)
        elif tags.role == "planning":
            text = self._plan(request, rng)
        elif tags.role == "review":
            text = self._review(request, rng)
        elif tags.role == "feedback":
            text = self._feedback(request)
        elif tags.role == "optimizer":
            text = propose(request.messages, rng)
        else:
            text = ("Pin down the behaviour of the reported case at its boundary: one more input just past it, "
                    "with the value the specification requires.")
        request_chars = sum(len(m.content) + sum(len(c.raw_arguments) for c in m.tool_calls)
                            for m in request.messages) + sum(len(json.dumps(t.to_dict())) for t in request.tools)
        reply_chars = len(text) + sum(len(c.raw_arguments) for c in calls)
        out_tokens = min(request.max_output_tokens, reply_chars // 4 + 1)
        usage = Usage(input_tokens=request_chars // 4 + 1, output_tokens=out_tokens, cost_usd=None)
        return Completion(text=text, tool_calls=tuple(calls), stop_reason="tool_use" if calls else "end_turn",
                          usage=usage, model=self.name,
                          metadata={"simulated": True, "profile": self.profile.name, "seed": self.seed})

    # --- single-call roles -----------------------------------------------------------------
    def _plan(self, request: ModelRequest, rng: random.Random) -> str:
        m = re.search(r"Give (\d+) directions", "\n".join(x.content for x in request.messages))
        k = int(m.group(1)) if m else 3
        order = list(DIRECTIONS)
        rng.shuffle(order)
        return json.dumps({"directions": (order * (k // len(order) + 1))[:k] if k > len(order) else order[:k]})

    def _review(self, request: ModelRequest, rng: random.Random) -> str:
        body = "\n".join(m.content for m in request.messages if m.role == "user")
        suite = body.split("## Suite", 1)[1].split("## Execution symptoms", 1)[0] if "## Suite" in body else ""
        names = list(dict.fromkeys(re.findall(r"^def (test_\w+)\(", suite, re.M)))
        accuracy = min(0.98, self.profile.review_accuracy + max(0.0, strategy_effect(
            request.messages, self.task.context, self.profile)))
        suspects = []
        for name in names:
            test = self.bank.test(name)
            bad = test is not None and test.kind in ("broken", "overfit")
            if rng.random() < (accuracy if bad else (1 - accuracy) / 3):
                suspects.append(name)
        reasons = [f"{n} asserts behaviour the specification does not fix or gets the expectation wrong"
                   for n in suspects] or ["every test checks behaviour the specification requires"]
        return json.dumps({"verdict": "revise" if suspects else "approve", "reasons": reasons,
                           "suspect_tests": suspects})

    def _feedback(self, request: ModelRequest) -> str:
        body = "\n".join(m.content for m in request.messages if m.role == "user")
        names = list(dict.fromkeys(re.findall(r"test_\w+", body.split("## Reviewed counterexamples", 1)[-1])))
        if not names:
            return "No reviewed counterexample implicates a test; keep the suite and re-check the repair."
        return "\n".join(f"{n} failed on a peer repair that reviewers judged correct: check whether it asserts "
                         "behaviour the specification leaves open." for n in names[:8])

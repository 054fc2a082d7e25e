"""The optimizer's three sessions over any chat model: parent selection, diagnosis and revision,
and reflection that writes a reusable lesson. Each is an agent session with read-only tools and its
own step limit (autosaddler/optimizer_session.py).

Each session has its own prompt, its own deadline and its own usage line; all of them draw on the
optimizer's budget, which is separate from the generator's per-task cap. A session's deadline is
enforced here (the call runs in a worker thread and the session gives up when its limit passes,
recording a timeout) and also handed to the provider as its request timeout when the search builds
one model per session. `usage()` returns, per session, the calls, tokens, cost, failures, timeouts
and elapsed seconds since the previous `usage()`, so every DAG node records the sessions of its own
round. Sessions are stateless: they see only what the search passes in (aggregate scores, anonymised
minibatch traces, the history of earlier proposals). The prompts and the edit protocol are in
autosaddler/prompts.py; answers become `Edit`s through autosaddler/edits.py.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypedDict

from autosaddler.edits import Edit, LessonEdit, UnparsedEdit, parse_edit
from autosaddler.optimizer_session import SESSION_STEPS, CandidateRow, SessionMaterial, observe, tools_for
from autosaddler.prompts import history_message, optimizer_messages, reflection_messages, selection_messages
from autosaddler.protocols import Diagnosis, Exchange, OptimizerUsage, ParentView
from autosaddler.traces import OptimizerTrace
from testhelix.agent.budget import Budget, BudgetExhausted
from testhelix.agent.calls import parse_json_object
from testhelix.llm.base import CallTags, ChatModel, Completion, Message, ModelError, ModelRequest
from testhelix.skills import library_index, load_library
from testhelix.strategy.model import Strategy

SESSIONS = ("selection", "diagnosis", "reflection")
DEFAULT_TIMEOUT_S = 300.0


class _Line(TypedDict):
    """A session's running usage line: `SessionUsage` while it runs, with the cost summed so far and
    whether every call's cost was known."""

    calls: int
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float
    cost_known: bool
    failures: int
    timeouts: int
    tool_calls: int
    step_limits: int
    elapsed_s: float
    timeout_s: float


def _fresh_line(timeout_s: float) -> _Line:
    return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "tokens": 0, "cost_usd": 0.0, "cost_known": True,
            "failures": 0, "timeouts": 0, "tool_calls": 0, "step_limits": 0, "elapsed_s": 0.0, "timeout_s": timeout_s}


class ModelOptimizer:
    """`model` is one chat model for every session or a mapping session -> model (each built with
    its session's request timeout); `timeouts` maps a session to its deadline in seconds."""

    def __init__(self, model: ChatModel | Mapping[str, ChatModel], budget: Budget, history_limit: int = 12,
                 timeouts: Mapping[str, float] | None = None) -> None:
        self.models = dict(model) if isinstance(model, Mapping) else {s: model for s in SESSIONS}
        self.model = self.models["diagnosis"]
        self.budget = budget
        self.history_limit = history_limit
        self.timeouts = {s: float((timeouts or {}).get(s, DEFAULT_TIMEOUT_S)) for s in SESSIONS}
        self._usage = {s: _fresh_line(self.timeouts[s]) for s in SESSIONS}
        self._exchanges: list[Exchange] = []
        self._pool = ThreadPoolExecutor(max_workers=len(SESSIONS), thread_name_prefix="optimizer-session")
        self.skills_index = library_index(load_library())

    # --- session 1 ---------------------------------------------------------------------------
    def select_parent(self, candidates: Sequence[ParentView]) -> str:
        if len(candidates) == 1:
            return candidates[0].node_id
        rows: list[CandidateRow] = [{"node": c.node_id, "dev_score": c.dev_score, "depth": c.depth, "edit": c.edit,
                                     "minibatch_successes": c.minibatch_successes} for c in candidates]
        text = self._call("selection", selection_messages(rows), 256, material=SessionMaterial(candidates=rows))
        data = parse_json_object(text or "") or {}
        return str(data.get("parent", ""))

    # --- session 2 ---------------------------------------------------------------------------
    def diagnose(self, parent: Strategy, traces: Sequence[OptimizerTrace], history: Sequence[str]) -> Diagnosis:
        messages = optimizer_messages(parent.canonical_json(), [t.prompt_json() for t in traces], self.skills_index)
        if history:
            messages.append(history_message(list(history[-self.history_limit:])))
        material = SessionMaterial(traces=list(traces), strategy_json=parent.canonical_json(),
                                   history=list(history[-self.history_limit:]))
        text = self._call("diagnosis", messages, 2048, role="optimizer", material=material) or ""
        edit = parse_edit(text)
        said = text if isinstance(edit, UnparsedEdit) else edit.rationale
        return Diagnosis(text=said[:500], edit=edit, wants_lesson=isinstance(edit, LessonEdit))

    # --- session 3 ---------------------------------------------------------------------------
    def reflect(self, parent: Strategy, traces: Sequence[OptimizerTrace], diagnosis: Diagnosis) -> Edit:
        """The diagnosis's lesson edit with the lesson this session writes (the draft when the
        answer holds none)."""
        edit = diagnosis.edit
        if not isinstance(edit, LessonEdit):
            return edit
        draft = edit.lesson or {}
        failures = [row for row in (t.prompt_json() for t in traces) if not row.get("success")][:8]
        messages = reflection_messages(diagnosis.text, failures, [lesson.id for lesson in parent.lessons], draft)
        material = SessionMaterial(traces=list(traces), strategy_json=parent.canonical_json())
        text = self._call("reflection", messages, 1024, material=material) or ""
        lesson = parse_json_object(text) or draft
        return edit.model_copy(update={"lesson": lesson})

    def usage(self) -> OptimizerUsage:
        """Per session: what it used since the previous call of `usage()` (cost None when unknown)."""
        out: OptimizerUsage = {}
        for session, line in self._usage.items():
            out[session] = {"calls": line["calls"], "input_tokens": line["input_tokens"],
                            "output_tokens": line["output_tokens"], "tokens": line["tokens"],
                            "cost_usd": round(line["cost_usd"], 6) if line["cost_known"] else None,
                            "failures": line["failures"], "timeouts": line["timeouts"],
                            "tool_calls": line["tool_calls"], "step_limits": line["step_limits"],
                            "elapsed_s": round(line["elapsed_s"], 3), "timeout_s": line["timeout_s"]}
        self._usage = {s: _fresh_line(self.timeouts[s]) for s in SESSIONS}
        return out

    def exchanges(self) -> list[Exchange]:
        """Every call since the previous `exchanges()`: session, the prompt as sent (role and content
        per message) and the reply text, or the failure (the search page shows them per node)."""
        out, self._exchanges = self._exchanges, []
        return out

    def restore_usage(self, recorded: list[dict[str, Any]]) -> None:
        """Continue a resumed search's optimizer budget from what the recorded nodes used. Each node
        records what its own step used (`usage()` starts afresh per step), so the per-session lines
        start empty: the step a kill interrupted is redone whole and recorded once, as in an
        uninterrupted run."""
        self.budget.used = sum(int(line.get("tokens") or 0) for usage in recorded
                               for line in (usage or {}).values() if isinstance(line, dict))

    def _call(self, session: str, messages: list[Message], max_tokens: int, role: str | None = None,
              material: SessionMaterial | None = None) -> str | None:
        """One agent session: up to SESSION_STEPS[session] model calls, each may call the session's
        read-only tools; the first reply without tool calls is the answer. The session's deadline
        covers all its steps. None when it fails, runs out of time or reaches its step limit."""
        material = material or SessionMaterial()
        tools = tools_for(material)
        line = self._usage[session]
        started = time.monotonic()
        history = list(messages)
        try:
            for step in range(1, SESSION_STEPS[session] + 1):
                remaining = self.timeouts[session] - (time.monotonic() - started)
                request = ModelRequest(tuple(history), tools, max_tokens,
                                       tags=CallTags(role=role or session, step=step))
                answer = self._step(session, request, max(0.0, remaining))
                if answer is None:
                    return None
                if not answer.tool_calls:
                    return answer.text
                history.append(answer.as_message())
                for call in answer.tool_calls:
                    line["tool_calls"] += 1
                    history.append(Message("tool", observe(call, material), tool_call_id=call.id))
            line["step_limits"] += 1
            line["failures"] += 1
            return None
        finally:
            line["elapsed_s"] += time.monotonic() - started

    def _step(self, session: str, request: ModelRequest, timeout_s: float) -> Completion | None:
        """One model call of `session`, charged to its own usage line and recorded as one exchange
        (the prompt as sent at this step, and the reply or the failure)."""
        line = self._usage[session]
        exchange: Exchange = {"session": session, "step": request.tags.step,
                              "prompt": [{"role": m.role, "content": m.content} for m in request.messages],
                              "reply": None, "failure": None}
        self._exchanges.append(exchange)
        future = self._pool.submit(self.budget.complete, self.models[session], request)
        try:
            answer = future.result(timeout=timeout_s)
        except FutureTimeout:
            line["timeouts"] += 1
            line["failures"] += 1
            exchange["failure"] = f"no answer within {self.timeouts[session]:g} s"
            return None
        except BudgetExhausted:
            line["failures"] += 1
            exchange["failure"] = "the optimizer's token budget is spent"
            return None
        except ModelError as err:
            line["failures"] += 1
            exchange["failure"] = str(err)[:500]
            # A revoked key or unknown model stops the search (exit 2). Otherwise parent selection
            # degrades to the best development score; diagnosis and reflection cannot, and an
            # outage must never become a rejected proposal in the DAG, so the search stops the round.
            if err.fatal or session != "selection":
                raise
            return None
        usage = answer.usage
        exchange["reply"] = answer.text
        line["calls"] += 1
        line["input_tokens"] += usage.input_tokens
        line["output_tokens"] += usage.output_tokens
        line["tokens"] += usage.input_tokens + usage.output_tokens
        if usage.cost_usd is None or not usage.reported:
            line["cost_known"] = False
        else:
            line["cost_usd"] += usage.cost_usd
        return answer

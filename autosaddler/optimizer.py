"""The optimizer's three sessions over any chat model: parent selection, diagnosis and revision,
and reflection that writes a reusable lesson. Each is an agent session with read-only tools and its
own step limit (autosaddler/optimizer_session.py).

Each session has its own prompt, its own deadline and its own usage line; all of them draw on the
optimizer's budget, which is separate from the generator's per-task cap. Every call goes through
that budget's metered door (`Budget.complete`), which writes it to the ledger (model_calls) under
the session's role (`SESSION_ROLES`). A session's deadline is enforced here (the call runs in a
worker thread and the session gives up when its limit passes, recording a timeout) and also handed
to the provider as its request timeout when the search builds one model per session. `usage()`
returns, per session since the previous `usage()`: the calls, tokens and cost summed from the
ledger rows the door wrote (so a node's usage is the sum of its calls, as charged), and the
session outcomes only the loop knows (failures, timeouts, tool calls, step limits, elapsed
seconds), so every DAG node records the sessions of its own round. A call abandoned at its
deadline is charged when it ends, in the usage of the step that is current then.

Sessions are stateless: they see only what the search passes in (aggregate scores, anonymised
minibatch traces, the history of earlier proposals). The prompts and the edit protocol are in
autosaddler/prompts.py; answers become `Edit`s through autosaddler/edits.py.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from autosaddler.edits import Edit, LessonEdit, UnparsedEdit, parse_edit
from autosaddler.optimizer_session import CandidateRow, OptimizerSession, SessionMaterial, SessionRun, fresh_line
from autosaddler.prompts import history_message, optimizer_messages, reflection_messages, selection_messages
from autosaddler.protocols import Diagnosis, Exchange, OptimizerUsage, ParentView
from autosaddler.traces import OptimizerTrace
from testhelix.agent.budget import Budget, LedgerSink
from testhelix.agent.calls import parse_json_object
from testhelix.llm.base import ChatModel, Message
from testhelix.strategy.model import Strategy
from testhelix.strategy.skills import library_index, load_library

SESSIONS = ("selection", "diagnosis", "reflection")
# The role each session's calls carry in the ledger (`optimizer` is the diagnosis call's role, the
# name the simulated optimizer roles answer to).
SESSION_ROLES = {"selection": "selection", "diagnosis": "optimizer", "reflection": "reflection"}
DEFAULT_TIMEOUT_S = 300.0


class _SessionLedger:
    """The budget's ledger sink, passed through, keeping the rows since the last `take()`: the one
    record a session's usage is summed from."""

    def __init__(self, inner: LedgerSink | None) -> None:
        self.inner = inner
        self._rows: list[dict] = []
        self._lock = threading.Lock()

    def record_model_call(self, row: dict) -> None:
        if self.inner is not None:
            self.inner.record_model_call(row)
        with self._lock:
            self._rows.append(dict(row))

    def take(self) -> list[dict]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows


def ledger_usage(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Calls, tokens and cost summed from ledger rows (cost None when some call's price is unknown)."""
    costs = [r.get("cost_usd") for r in rows]
    known = [float(c) for c in costs if c is not None]
    return {"calls": len(rows), "input_tokens": sum(int(r.get("input_tokens") or 0) for r in rows),
            "output_tokens": sum(int(r.get("output_tokens") or 0) for r in rows),
            "tokens": sum(int(r.get("charged_tokens") or 0) for r in rows),
            "cost_usd": round(sum(known), 6) if len(known) == len(costs) else None}


class ModelOptimizer:
    """`model` is one chat model for every session or a mapping session -> model (each built with
    its session's request timeout); `timeouts` maps a session to its deadline in seconds."""

    def __init__(self, model: ChatModel | Mapping[str, ChatModel], budget: Budget, history_limit: int = 12,
                 timeouts: Mapping[str, float] | None = None) -> None:
        self.models = dict(model) if isinstance(model, Mapping) else {s: model for s in SESSIONS}
        self.model = self.models["diagnosis"]
        self.budget = budget
        self.ledger = _SessionLedger(budget.sink)
        budget.sink = self.ledger        # every call's row passes here on its way to the run's ledger
        self.history_limit = history_limit
        self.timeouts = {s: float((timeouts or {}).get(s, DEFAULT_TIMEOUT_S)) for s in SESSIONS}
        self._usage = {s: fresh_line(self.timeouts[s]) for s in SESSIONS}
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
        text = self._call("diagnosis", messages, 2048, material=material) or ""
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
        rows = self.ledger.take()
        out: OptimizerUsage = {}
        for session, line in self._usage.items():
            own = [r for r in rows if r.get("role") == SESSION_ROLES[session]]
            out[session] = {**ledger_usage(own),  # type: ignore[typeddict-item]
                            "failures": line["failures"], "timeouts": line["timeouts"],
                            "tool_calls": line["tool_calls"], "step_limits": line["step_limits"],
                            "elapsed_s": round(line["elapsed_s"], 3), "timeout_s": line["timeout_s"]}
        self._usage = {s: fresh_line(self.timeouts[s]) for s in SESSIONS}
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

    def _call(self, session: str, messages: list[Message], max_tokens: int,
              material: SessionMaterial | None = None) -> str | None:
        """One optimizer session (autosaddler/optimizer_session.py): its answer, or None."""
        run = SessionRun(session, SESSION_ROLES[session], self.timeouts[session], self._pool, self._usage[session],
                         self._exchanges)
        return OptimizerSession(self.models[session], self.budget, messages, max_tokens,
                                material or SessionMaterial(), run).run()

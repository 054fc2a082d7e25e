"""The agent loop: one session of one pair, tools in a workspace, control flow by exceptions.

    result = run_agent_session(model, budget, task=task, strategy=strategy,
                               workspace_root=run_dir / "pair0", executor=executor,
                               phase="generation", pair=0, round=0, direction="...")

Each step: check the deadline, fit the history into the strategy's `contextTokens`, make one
metered call (`Budget.complete`), execute the tool calls, append the observations, save the
trajectory. The session ends when the model submits, or by an exception that names the reason:
the step cap (`agentSteps` for generation, `repairSteps` for repair), `BudgetExhausted`,
`DeadlineExceeded` or too many consecutive malformed replies. A provider failure that outlasted the
SDK's retries (`ModelError`) is not a way for a session to end: it propagates, with the trajectory
saved and its exit set to `model_error:<cause>`, and the host marks the evaluation incomplete
(authentication and configuration errors stop the job). There is no second retry layer here; the
one exception is a context-length refusal, answered by trimming the history harder (twice at most).

Context: the limit is the strategy's `contextTokens`, clamped to the model's context window (a
clamp is noted in the trajectory). Tokens are estimated as characters / 4 (a deliberate
approximation; the budget uses a true upper bound instead). When the history does not fit, the opening messages are kept, the
oldest observations and written file contents are replaced by short placeholders, and if that is
not enough the oldest steps are dropped. The saved trajectory always keeps the full history.

The agent sees only the public task: the instruction, its context and packages, and a copy of the
initial program; never reference, panel, trusted tests or bank.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from testhelix.agent.budget import BudgetExhausted, Deadline, DeadlineExceeded, execution_time_limit_s
from testhelix.agent.prompts import PublicTask, session_messages
from testhelix.agent.tools import AgentWorkspace, Submitted, ToolBox, ToolError, loadable_skills
from testhelix.agent.trajectory import Trajectory
from testhelix.llm.base import CallTags, ChatModel, ContextOverflowError, Message, ModelError, ModelRequest, ToolCall

CHARS_PER_TOKEN = 4
ELIDED = "[elided to fit the context window]"


def estimate_tokens(msg: Message) -> int:
    size = len(msg.content) + sum(len(c.raw_arguments) + len(str(c.arguments)) for c in msg.tool_calls)
    return size // CHARS_PER_TOKEN + 4


def _elide(msg: Message) -> Message:
    if msg.role == "tool":
        return replace(msg, content=f"{ELIDED} ({len(msg.content)} characters)")
    calls = tuple(replace(c, arguments={k: (ELIDED if k == "content" else v) for k, v in c.arguments.items()},
                          raw_arguments="") if c.arguments else replace(c, raw_arguments="")
                  for c in msg.tool_calls)
    return replace(msg, tool_calls=calls)


def fit_context(messages: list[Message], n_prefix: int, limit_tokens: int) -> tuple[list[Message], int]:
    """The view sent to the model and how many history messages were elided or dropped."""
    prefix, history = messages[:n_prefix], list(messages[n_prefix:])
    budget = limit_tokens - sum(estimate_tokens(m) for m in prefix)
    total = sum(estimate_tokens(m) for m in history)
    changed = 0
    for i, msg in enumerate(history[:-1]):        # the newest message stays intact
        if total <= budget:
            break
        if msg.role in ("tool", "assistant"):
            shorter = _elide(msg)
            total -= estimate_tokens(msg) - estimate_tokens(shorter)
            history[i] = shorter
            changed += 1
    dropped = 0
    while total > budget and len(history) > 1:
        # drop the oldest step: an assistant message and the observations that answer it
        group = 1
        while group < len(history) and history[group].role == "tool":
            group += 1
        if group >= len(history):
            break
        total -= sum(estimate_tokens(m) for m in history[:group])
        del history[:group]
        dropped += group
    if dropped:
        history.insert(0, Message("user", f"[{dropped} earlier messages were dropped to fit the context window]"))
    return prefix + history, changed + dropped


@dataclass(frozen=True)
class SessionResult:
    exit: str                 # submitted | step_limit | budget | deadline | format_errors
    steps: int
    workspace: AgentWorkspace
    trajectory_path: Path
    refusals: tuple[dict, ...]
    runs: tuple[dict, ...]
    summary: str = ""

    @property
    def submitted(self) -> bool:
        return self.exit == "submitted"


class _FormatError(Exception):
    pass


def run_agent_session(model: ChatModel, budget, *, task: Any, strategy: Any, workspace_root: Path,
                      executor: Any, phase: str = "generation", pair: int = 0, round: int = 0,
                      direction: str = "", feedback: str = "", checkpoint: str = "",
                      library: dict | None = None, deadline: Deadline | None = None,
                      trajectory_path: Path | None = None, writable: tuple[str, ...] = ("suite", "repair"),
                      max_output_tokens: int = 4096, max_consecutive_errors: int = 3) -> SessionResult:
    """Run one generation or repair session; see the module docstring."""
    from testhelix.execution.executor import Limits

    public = PublicTask.of(task)
    ws = AgentWorkspace.create(workspace_root, task.initial_dir)
    limits = Limits(wall_s=execution_time_limit_s(task.verifier_timeout_s))
    role = "repair" if phase == "repair" else "generation"
    # Routed skills arrive preloaded; without a route for the context the agent loads what it picks.
    routed = bool(strategy.skillRoutes.get(public.context))
    box = ToolBox(ws, executor, limits, output_chars=strategy.toolOutputChars, writable=writable,
                  skills={} if routed else loadable_skills(library, role))
    deadline = deadline or Deadline.for_agent_limit(task.agent_timeout_s)
    path = Path(trajectory_path or ws.root / f"trajectory-{phase}-r{round}.json")
    messages = session_messages(strategy, public, phase=phase, direction=direction, feedback=feedback,
                                checkpoint=checkpoint, library=library)
    n_prefix = len(messages)
    traj = Trajectory(meta={"model": model.name, "simulated": model.name.startswith("sim:"), "task_id": public.id,
                            "phase": phase, "pair": pair, "round": round, "writable": list(writable),
                            "strategy_hash": strategy.content_hash()}, messages=messages)
    cap = strategy.repairSteps if phase == "repair" else strategy.agentSteps
    context_tokens, note = context_limit(strategy.contextTokens, getattr(model, "context_window", None))
    if note:
        traj.meta["context_note"] = note
    limit_tokens = max(1000, context_tokens - max_output_tokens)
    overflows = 0
    role = "repair" if phase == "repair" else "generation"
    exit_reason, summary, errors, step = "step_limit", "", 0, 0
    try:
        for step in range(1, cap + 1):
            deadline.check()
            view, elided = fit_context(messages, n_prefix, limit_tokens)
            request = ModelRequest(tuple(view), box.tool_specs(), max_output_tokens,
                                   tags=CallTags(role=role, pair=pair, round=round, step=step))
            try:
                answer = budget.complete(model, request)
            except ContextOverflowError as err:
                traj.steps.append({"step": step, "error": str(err)[:500]})
                overflows += 1
                if overflows > 2:
                    raise
                limit_tokens = max(1000, limit_tokens // 2)   # the estimate was too generous: trim harder
                view, elided = fit_context(messages, n_prefix, limit_tokens)
                request = replace(request, messages=tuple(view))
                answer = budget.complete(model, request)
            messages.append(answer.as_message())
            traj.steps.append({"step": step, "stop_reason": answer.stop_reason, "usage": answer.usage.to_dict(),
                               "cache_hit": answer.cache_hit, "simulated": answer.simulated, "elided": elided})
            try:
                _act(answer.tool_calls, box, messages, deadline)
                errors = 0
            except _FormatError:
                errors += 1
                if errors >= max_consecutive_errors:
                    exit_reason = "format_errors"
                    break
            finally:
                traj.save(path)
    except Submitted as done:
        exit_reason, summary = "submitted", done.summary
    except BudgetExhausted:
        exit_reason = "budget"
    except DeadlineExceeded:
        exit_reason = "deadline"
    except ModelError as err:
        exit_reason = f"model_error:{err.cause}"
        traj.steps.append({"step": step, "error": str(err)[:500], "cause": err.cause})
        raise
    finally:
        traj.exit = exit_reason
        traj.save(path)
    return SessionResult(exit=exit_reason, steps=step, workspace=ws, trajectory_path=path,
                         refusals=tuple(box.refusals), runs=tuple(box.runs), summary=summary)


def context_limit(context_tokens: int, window: int | None) -> tuple[int, str]:
    """The strategy's context budget, clamped to the model's window (with a note saying so)."""
    if window and context_tokens > window:
        return window, (f"strategy contextTokens {context_tokens} exceeds the model's context window {window}: "
                        f"clamped to {window}")
    return context_tokens, ""


def _act(calls: tuple[ToolCall, ...], box: ToolBox, messages: list[Message], deadline: Deadline) -> None:
    """Execute the calls of one reply; every call gets exactly one observation message."""
    if not calls:
        messages.append(Message("user", "error: your reply called no tool. Call exactly one of the tools."))
        raise _FormatError()
    failed, submitted = False, None
    for call in calls:
        if submitted is not None:
            messages.append(Message("tool", "skipped: the session was already submitted", tool_call_id=call.id))
            continue
        try:
            deadline.check()
            observation = box.execute(call)
        except ToolError as err:
            observation, failed = f"error: {err}", True
        except Submitted as done:
            observation, submitted = "submitted", done
        messages.append(Message("tool", observation, tool_call_id=call.id))
    if submitted is not None:
        raise submitted
    if failed:
        raise _FormatError()

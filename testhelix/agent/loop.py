"""The agent loop: one session of one pair, tools in a workspace, control flow by exceptions.

    config = SessionConfig(task=task, strategy=strategy, workspace_root=run_dir / "pair0",
                           executor=executor, phase="generation", pair=0, round=0, direction="...")
    result = run_agent_session(model, budget, config)      # = AgentSession(model, budget, config).run()

`AgentSession` is the loop as a small class whose named steps a subclass may override (the loop
itself, shared with every tool-using session, is testhelix/agent/toolsession.py):

    trim()            the history as sent to the model, fitted into the context budget
    query(view, n)    one metered call (`Budget.complete`) with the session's tools
    act(call)         execute one tool call; its observation text (ToolError/Submitted as exceptions)
    observe(message)  append what the agent sees next (an observation, an error note) to the history

Each step (`step`): check the deadline, `trim`, `query`, append the reply, `act` on each of its
tool calls and `observe` each result, save the trajectory. The session ends when the model
submits, or by an exception that names the reason: the step cap (`agentSteps` for generation,
`repairSteps` for repair), `BudgetExhausted`, `DeadlineExceeded` or too many consecutive malformed
replies. A provider failure that outlasted the
SDK's retries (`ModelError`) is not a way for a session to end: it propagates, with the trajectory
saved and its exit set to `model_error:<cause>`, and the host marks the evaluation incomplete
(authentication and configuration errors stop the job). There is no second retry layer here; the
one exception is a context-length refusal, answered by trimming the history harder (twice at most).

Context: the limit is the strategy's `contextTokens`, clamped to the model's context window (a
clamp is noted in the trajectory). Tokens are estimated as characters / 4 (a deliberate
approximation; the budget uses a true upper bound instead). When the history does not fit, the
opening messages are kept, the oldest observations and written file contents are replaced by short
placeholders, and if that is not enough the oldest steps are dropped. The saved trajectory always
keeps the full history.

The agent sees only the public task: the instruction, its context and packages, and a copy of the
initial program; never reference, panel, trusted tests or bank.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from testhelix.agent.budget import Budget, BudgetExhausted, Deadline, DeadlineExceeded, execution_time_limit_s
from testhelix.agent.prompts import PublicTask, preparation_checkpoint, session_messages
from testhelix.agent.tools import AgentWorkspace, Submitted, SuiteRunner, ToolBox, loadable_skills
from testhelix.agent.toolsession import FormatError, ToolSession
from testhelix.agent.trajectory import Trajectory
from testhelix.execution.outcome import Limits
from testhelix.llm.base import (
    CallTags,
    ChatModel,
    Completion,
    ContextOverflowError,
    Message,
    ModelError,
    ToolCall,
    ToolSpec,
    is_test_double,
)

if TYPE_CHECKING:
    from testhelix.strategy.model import Strategy
    from testhelix.strategy.skills import Skill
    from testhelix.tasks.model import Context
    from testhelix.tasks.task import Task

CHARS_PER_TOKEN = 4
ELIDED = "[elided to fit the context window]"
NO_TOOL_CALLED = "error: your reply called no tool. Call exactly one of the tools."


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


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """What one session works on and its limits (everything but the model and the budget).

    `deadline` None: the task's agent time limit, counted from the session's start. `trajectory_path`
    None: `<workspace_root>/trajectory-<phase>-r<round>.json`. `writable`: the workspace folders the
    agent may write. A repair phase caps steps at the strategy's `repairSteps`, any other phase at
    `agentSteps`."""

    task: Task
    strategy: Strategy
    workspace_root: Path
    executor: SuiteRunner
    phase: str = "generation"
    pair: int = 0
    round: int = 0
    direction: str = ""
    feedback: str = ""
    checkpoint: str = ""
    library: dict[str, Skill] | None = None
    deadline: Deadline | None = None
    trajectory_path: Path | None = None
    writable: tuple[str, ...] = ("suite", "repair")
    max_output_tokens: int = 4096
    max_consecutive_errors: int = 3

    @property
    def role(self) -> str:
        """The role its calls are tagged with (and the skills it may load are chosen for)."""
        return "repair" if self.phase == "repair" else "generation"


class _SessionEnded(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class AgentSession(ToolSession):
    """One generation or repair session (see the module docstring for the steps), on the loop every
    tool-using session runs (testhelix/agent/toolsession.py).

    Constructing a session prepares it: the workspace (a copy of the public initial program), the
    tools, the opening messages and the trajectory. `run()` then drives it to its end."""

    def __init__(self, model: ChatModel, budget: Budget, config: SessionConfig) -> None:
        self.config = config
        task, strategy = config.task, config.strategy
        self.public = PublicTask.of(task)
        self.workspace = AgentWorkspace.create(config.workspace_root, task.initial_dir)
        limits = Limits(wall_s=execution_time_limit_s(task.verifier_timeout_s))
        # Routed skills arrive preloaded; without a route for the context the agent loads what it picks.
        routed = bool(strategy.skillRoutes.get(cast("Context", self.public.context)))
        self.tools = ToolBox(self.workspace, config.executor, limits, output_chars=strategy.toolOutputChars,
                             writable=config.writable,
                             skills={} if routed else loadable_skills(config.library, config.role))
        self.deadline = config.deadline or Deadline.for_agent_limit(task.agent_timeout_s)
        self.trajectory_path = Path(config.trajectory_path
                                    or self.workspace.root / f"trajectory-{config.phase}-r{config.round}.json")
        messages = session_messages(strategy, self.public, phase=config.phase, direction=config.direction,
                                    feedback=config.feedback, checkpoint=config.checkpoint, library=config.library,
                                    preparation=self.preparation())
        super().__init__(model, budget, messages, self.tools.tool_specs(),
                         tags=CallTags(role=config.role, pair=config.pair, round=config.round),
                         max_output_tokens=config.max_output_tokens,
                         step_cap=strategy.repairSteps if config.phase == "repair" else strategy.agentSteps)
        self.n_prefix = len(self.messages)          # the opening messages trimming always keeps
        # The trajectory shares the message list: it always holds the full history.
        self.trajectory = Trajectory(meta={"model": model.name, "simulated": is_test_double(model),
                                           "task_id": self.public.id, "phase": config.phase, "pair": config.pair,
                                           "round": config.round, "writable": list(config.writable),
                                           "strategy_hash": strategy.content_hash()}, messages=self.messages)
        context_tokens, note = context_limit(strategy.contextTokens, model.context_window)
        if note:
            self.trajectory.meta["context_note"] = note
        self.limit_tokens = max(1000, context_tokens - config.max_output_tokens)
        self.overflows = 0           # context refusals so far (the session gives up after the third)
        self.format_errors = 0       # consecutive malformed replies

    def preparation(self) -> str | None:
        """The preparation checkpoint, for a pair's first generation session only (round 0: the
        agent has not yet read the task or the workspace); None for every other session."""
        if self.config.phase != "generation" or self.config.round != 0:
            return None
        ws = self.workspace
        return preparation_checkpoint(sorted(p.relative_to(ws.program).as_posix() for p in ws.program.rglob("*.py")),
                                      sorted(p.name for p in ws.suite.glob("test_*.py")))

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> SessionResult:
        exit_reason, summary = "step_limit", ""
        try:
            self.run_steps()
        except _SessionEnded as ended:
            exit_reason = ended.reason
        except Submitted as done:
            exit_reason, summary = "submitted", done.summary
        except BudgetExhausted:
            exit_reason = "budget"
        except DeadlineExceeded:
            exit_reason = "deadline"
        except ModelError as err:
            exit_reason = f"model_error:{err.cause}"
            self.trajectory.steps.append({"step": self.number, "error": str(err)[:500], "cause": err.cause})
            raise
        finally:
            self.trajectory.exit = exit_reason
            self.trajectory.save(self.trajectory_path)
        return SessionResult(exit=exit_reason, steps=self.number, workspace=self.workspace,
                             trajectory_path=self.trajectory_path, refusals=tuple(self.tools.refusals),
                             runs=tuple(self.tools.runs), summary=summary)

    def step(self, number: int) -> None:
        """One step of the shared loop, after the deadline check, counting malformed replies, saved."""
        self.deadline.check()
        try:
            super().step(number)
            self.format_errors = 0
        except FormatError:
            self.format_errors += 1
            if self.format_errors >= self.config.max_consecutive_errors:
                raise _SessionEnded("format_errors") from None
        finally:
            self.trajectory.save(self.trajectory_path)

    # --- named steps ------------------------------------------------------------------------
    def trim(self) -> tuple[list[Message], int]:
        """The view sent to the model and how many history messages were elided or dropped."""
        return fit_context(self.messages, self.n_prefix, self.limit_tokens)

    def offered_tools(self) -> tuple[ToolSpec, ...]:
        return self.tools.tool_specs()       # load_skill only while there is something to load

    def refused_context(self, number: int, err: ContextOverflowError) -> None:
        """Trim harder after a context refusal (the estimate was too generous); the third one ends it."""
        self.trajectory.steps.append({"step": number, "error": str(err)[:500]})
        self.overflows += 1
        if self.overflows > 2:
            raise err
        self.limit_tokens = max(1000, self.limit_tokens // 2)

    def record(self, number: int, answer: Completion, elided: int) -> None:
        self.trajectory.steps.append({"step": number, "stop_reason": answer.stop_reason,
                                      "usage": answer.usage.to_dict(), "cache_hit": answer.cache_hit,
                                      "simulated": answer.simulated, "elided": elided})

    def answered(self, answer: Completion) -> None:  # noqa: ARG002 (the reply is in the history)
        """A reply that called no tool is a format error, said to the agent."""
        self.observe(Message("user", NO_TOOL_CALLED))
        raise FormatError()

    def check_time(self) -> None:
        self.deadline.check()

    def act(self, call: ToolCall) -> str:
        """Execute one tool call. Raises ToolError (a malformed or impossible call) or Submitted."""
        return self.tools.execute(call)


def run_agent_session(model: ChatModel, budget: Budget, config: SessionConfig) -> SessionResult:
    """Run one generation or repair session; see the module docstring."""
    return AgentSession(model, budget, config).run()


def context_limit(context_tokens: int, window: int | None) -> tuple[int, str]:
    """The strategy's context budget, clamped to the model's window (with a note saying so)."""
    if window and context_tokens > window:
        return window, (f"strategy contextTokens {context_tokens} exceeds the model's context window {window}: "
                        f"clamped to {window}")
    return context_tokens, ""

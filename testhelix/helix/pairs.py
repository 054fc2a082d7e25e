"""A test-and-repair pair: its agent sessions and its local qualification.

A suite qualifies locally when, over the run's execution repetitions, it fails on the initial
program every time (a real failure, not an error) and passes on the pair's own repair every time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from testhelix.agent.budget import BudgetExhausted, DeadlineExceeded
from testhelix.agent.loop import SessionConfig
from testhelix.agent.tools import AgentWorkspace
from testhelix.core.digest import tree_sha256
from testhelix.helix.context import HelixContext
from testhelix.helix.detail import PairSummary


@dataclass
class Pair:
    index: int
    direction: str
    workspace: AgentWorkspace | None = None
    sessions: list[str] = field(default_factory=list)      # exit reason of each session
    qualified: bool = False
    initial_statuses: tuple[str, ...] = ()
    repair_statuses: tuple[str, ...] = ()
    suite_digest: str = ""
    repair_digest: str = ""
    approved: bool | None = None                          # None: not reviewed
    review_reasons: tuple[str, ...] = ()
    suspect_tests: tuple[str, ...] = ()
    reviewed_digest: str = ""                             # the suite the current verdict is about

    def require_workspace(self) -> AgentWorkspace:
        """The workspace, for the steps that only see pairs whose session left one (every
        qualified pair, every pair with a suite to run or review)."""
        if self.workspace is None:
            raise RuntimeError(f"pair {self.index} has no workspace: no session of it has run")
        return self.workspace

    def summary(self) -> PairSummary:
        return PairSummary(pair=self.index, direction=self.direction, sessions=list(self.sessions),
                           qualified=self.qualified, initial=list(self.initial_statuses),
                           repair=list(self.repair_statuses), approved=self.approved,
                           suspect_tests=list(self.suspect_tests))


def run_session(ctx: HelixContext, pair: Pair, phase: str, round_index: int, feedback: str = "") -> None:
    """One agent session of the pair (generation or repair); budget and time end it quietly."""
    checkpoint = _checkpoint(pair)
    try:
        config = SessionConfig(
            task=ctx.task, strategy=ctx.strategy, workspace_root=ctx.work_dir / f"pair{pair.index}",
            executor=ctx.executor, phase=phase, pair=pair.index, round=round_index, direction=pair.direction,
            feedback=feedback, checkpoint=checkpoint, library=ctx.library, deadline=ctx.deadline,
            trajectory_path=ctx.work_dir / f"pair{pair.index}" / f"trajectory-{phase}-r{round_index}.json")
        result = ctx.session_class(ctx.model, ctx.budget, config).run()
        pair.workspace = result.workspace
        pair.sessions.append(result.exit)
    except (BudgetExhausted, DeadlineExceeded) as stop:
        pair.sessions.append(type(stop).__name__)
        if pair.workspace is None:
            pair.workspace = AgentWorkspace.create(ctx.work_dir / f"pair{pair.index}", ctx.task.initial_dir)
    ctx.log("session", pair=pair.index, phase=phase, round=round_index, exit=pair.sessions[-1])


def qualify(ctx: HelixContext, pair: Pair) -> bool:
    ws = pair.workspace
    if ws is None or not any(ws.suite.glob("test_*.py")):
        pair.qualified = False
        return False
    reps = max(1, ctx.config.repetitions)
    pair.initial_statuses = tuple(ctx.execute(ws.suite, ws.program, i).status for i in range(reps))
    pair.repair_statuses = tuple(ctx.execute(ws.suite, ws.repair, i).status for i in range(reps))
    pair.suite_digest, pair.repair_digest = tree_sha256(ws.suite), tree_sha256(ws.repair)
    pair.qualified = all(s == "fail" for s in pair.initial_statuses) and all(s == "pass" for s in pair.repair_statuses)
    ctx.log("qualify", pair=pair.index, qualified=pair.qualified, initial=pair.initial_statuses,
            repair=pair.repair_statuses)
    return pair.qualified


def self_correction_note(pair: Pair) -> str:
    """What local checks showed, as feedback for the pair's own repair session."""
    notes = []
    if not pair.initial_statuses or any(s != "fail" for s in pair.initial_statuses):
        notes.append(f"On the initial program the suite gave {', '.join(pair.initial_statuses) or 'no result'}; "
                     "it must fail there, because of the reported bug.")
    if any(s != "pass" for s in pair.repair_statuses):
        notes.append(f"On your repair the suite gave {', '.join(pair.repair_statuses)}; it must pass there.")
    return "\n".join(notes)


def develop(ctx: HelixContext, pair: Pair) -> None:
    """Round 0: a generation session, then one self-correction session if local checks fail."""
    run_session(ctx, pair, "generation", 0)
    if not qualify(ctx, pair) and ctx.budget.remaining > 0 and not ctx.time_is_up():
        run_session(ctx, pair, "repair", 0, self_correction_note(pair))
        qualify(ctx, pair)


def for_each_pair(ctx: HelixContext, pairs: Sequence[Pair], step: Callable[[HelixContext, Pair], None]) -> None:
    """Run `step` once per pair, each on an equal share of what is left of the task budget and with an
    event log of its own (merged in pair order), in threads when the context is concurrent. Because
    a pair sees only its own share and its own log, the outcome does not depend on which pair
    finishes first, nor on whether they ran at the same time."""
    if not pairs:
        return
    with ctx.budget.shares(len(pairs)) as budgets:
        views = [replace(ctx, budget=b, events=[]) for b in budgets]
        if ctx.concurrent and len(pairs) > 1:
            with ThreadPoolExecutor(len(pairs), thread_name_prefix=f"pair-{ctx.task.id}") as pool:
                for future in [pool.submit(step, v, p) for v, p in zip(views, pairs)]:
                    future.result()      # the first failure is raised after every pair has stopped
        else:
            for view, pair in zip(views, pairs):
                step(view, pair)
    for view in views:
        ctx.events.extend(view.events)


def _checkpoint(pair: Pair) -> str:
    if not pair.initial_statuses:
        return ""
    return (f"initial program: {'/'.join(pair.initial_statuses)}; own repair: {'/'.join(pair.repair_statuses)}"
            + ("; reviewer asked for revision" if pair.approved is False else ""))

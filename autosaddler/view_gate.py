"""The release-gate part of a page, read from the store's gate_results (and gate_outcomes.csv
when the gate ran in this run directory): the 2×2 discordance table, the exact p-value, the paired
bootstrap intervals and the decision, with a plain statement of what a promotion means.

`autosaddler view` shows it below a search; `testhelix view` shows it as the section AutoSaddler
contributes (`SECTION`, the `testhelix.view_sections` entry point `gate` in pyproject.toml:
testhelix/view/contributed.py), so TestHelix's view imports no AutoSaddler module."""

from __future__ import annotations

import csv
from pathlib import Path

from testhelix.store.gates import GateDecision, gate_decisions
from testhelix.store.runs import has_rows
from testhelix.store.runstore import RunStore
from testhelix.view.html import Markup, join, section, table, tag

MEANING = ("What a promotion means: on the release split, which the search never saw, the frozen challenger "
           "turned more initial-to-reference failures into reproductions than the initial strategy, with the "
           "same model, and the one-sided exact McNemar test (direction fixed before evaluation) gives p ≤ 0.05 "
           "on the tasks where exactly one of the two succeeded. Only then does the challenger replace the "
           "initial strategy. It is evidence for this model on this split, not a benchmark score. Without "
           "discordant pairs there is no evidence and no promotion; a failed gate keeps the initial strategy, "
           "and a spent release split must not feed further search. A small split can miss small improvements.")


def read_gate_outcomes(run_dir: Path) -> list[tuple[str, int, int]]:
    path = Path(run_dir) / "gate_outcomes.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return [(r["task"], int(r["challenger"]), int(r["baseline"])) for r in csv.DictReader(fh)]


def gate_section(store: RunStore, run_dir: Path) -> Markup:
    gates = gate_decisions(store)
    parts = [tag("p", MEANING, id="gate-meaning")]
    for g in gates:
        parts.append(_one_gate(g))
    outcomes = read_gate_outcomes(run_dir)
    if outcomes:
        rows = [[t, (c, "ok" if c else "bad"), (b, "ok" if b else "bad"),
                 ("challenger only" if c > b else "baseline only" if b > c else "",
                  "gain" if c > b else "regression" if b > c else None)] for t, c, b in outcomes]
        parts += [tag("h3", f"Paired outcomes per task ({Path(run_dir) / 'gate_outcomes.csv'}, latest gate)"),
                  table(["task", "challenger", "baseline", "discordant"], rows, id="gate-outcomes")]
    return section("gate", "Release gate", *parts)


def _successes(strategy_hash: str, wins: int, n: int) -> str:
    """A side's strategy hash and task successes out of `n`."""
    return f"{strategy_hash[:12]}: {wins} successes ({100 * wins / n:.1f}%)"


def _interval(bounds: list[float] | None) -> str:
    return "—" if not bounds else f"[{100 * bounds[0]:+.1f}, {100 * bounds[1]:+.1f}] points"


def _one_gate(g: GateDecision) -> Markup:
    n, wins, losses = g.n, g.wins, g.losses
    both = g.challenger_successes - wins
    neither = n - both - wins - losses
    p = "n/a: no discordant pairs (no evidence for promotion)" if g.p_value is None else f"{g.p_value:.6f}"
    diff = (g.challenger_successes - g.baseline_successes) / n if n else 0.0
    grid = tag("table",
               tag("tr", tag("th", ""), tag("th", "baseline succeeds"), tag("th", "baseline fails")),
               tag("tr", tag("th", "challenger succeeds"), tag("td", both, class_="num", id=f"{g.gate_id}-both"),
                   tag("td", wins, class_="num gain" if wins else "num", id=f"{g.gate_id}-wins")),
               tag("tr", tag("th", "challenger fails"), tag("td", losses, class_="num regression" if losses else "num",
                                                          id=f"{g.gate_id}-losses"),
                   tag("td", neither, class_="num", id=f"{g.gate_id}-neither")),
               class_="discordance")
    decision = tag("div", "PROMOTED: the challenger replaces the initial strategy" if g.promoted else
                   "NOT PROMOTED: the initial strategy stays", class_=f"decision {'yes' if g.promoted else 'no'}",
                   id=f"{g.gate_id}-decision")
    facts = table(None, [
        ["gate", g.gate_id], ["model", g.model], ["split", g.split], ["tasks (N)", n],
        ["challenger", _successes(g.challenger_hash, g.challenger_successes, n)],
        ["baseline", _successes(g.baseline_hash, g.baseline_successes, n)],
        ["difference", f"{100 * diff:+.1f} points"],
        ["one-sided exact McNemar p", tag("span", p, id=f"{g.gate_id}-p")],
        ["95% paired bootstrap interval", _interval(g.ci95)],
        ["99% paired bootstrap interval", _interval(g.ci99)],
    ], class_="kv")
    return join([tag("h3", f"Gate {g.gate_id}"), decision, tag("div", grid, facts, class_="dagwrap"),
                 tag("p", "Intervals: 10,000 paired task resamples (seed 42), each keeping a task's two outcomes "
                          "together.", class_="muted")])


class GateSection:
    """The release gate as a section of `testhelix view` (testhelix/view/contributed.py)."""

    nav = ("gate", "release gate")

    def present(self, store: RunStore) -> bool:
        return has_rows(store, "gate_results")

    def models(self, store: RunStore) -> list[str]:
        return [g.model for g in gate_decisions(store)]

    def render(self, store: RunStore, run_dir: Path) -> Markup:
        return gate_section(store, run_dir)


SECTION = GateSection()

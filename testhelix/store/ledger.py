"""Typed sums over the model-call ledger (`model_calls`) that the reports and views show: per run
label, per task evaluation and per role. Each returns frozen dataclasses, never a cursor."""

from __future__ import annotations

from dataclasses import dataclass

from testhelix.store.runstore import RunStore


@dataclass(frozen=True)
class LabelCalls:
    """A run label's ledger: every call and its tokens (input + output)."""

    run_label: str
    tokens: int
    calls: int


@dataclass(frozen=True)
class LabelTrouble:
    """A run label's provider trouble: calls that failed, SDK retries behind its calls, and calls
    with an anomaly found at the boundary."""

    run_label: str
    errors: int
    retries: int
    anomalies: int


@dataclass(frozen=True)
class Usage:
    """Summed usage of a group of calls (a task evaluation, an optimizer role): cost is None when no
    call had a price; `cost_unknown` says some call had none."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cost_unknown: bool
    simulated: bool
    not_ok: int


_USAGE = ("count(*), sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)), sum(cost_usd), "
          "count(*) FILTER (WHERE cost_usd IS NULL), bool_or(coalesce(simulated, false)), "
          "count(*) FILTER (WHERE status IS NOT NULL AND status <> 'ok')")


def _usage(row: tuple) -> Usage:
    calls, tin, tout, usd, unpriced, sim, not_ok = row
    return Usage(int(calls), int(tin), int(tout), usd, bool(unpriced), bool(sim), int(not_ok))


def calls_by_label(store: RunStore) -> dict[str, LabelCalls]:
    _, rows = store.query("SELECT run_label, sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)), count(*) "
                          "FROM model_calls GROUP BY run_label")
    return {r[0]: LabelCalls(r[0], r[1], r[2]) for r in rows}


def trouble_by_label(store: RunStore) -> list[LabelTrouble]:
    """Every run label's provider errors, retries and anomalies, by label (a store from before these
    columns existed raises UserError)."""
    _, rows = store.query("SELECT run_label, count(*) FILTER (WHERE status = 'error'), sum(coalesce(retries, 0)), "
                          "count(*) FILTER (WHERE anomaly IS NOT NULL) FROM model_calls GROUP BY 1 ORDER BY 1")
    return [LabelTrouble(r[0], int(r[1]), int(r[2] or 0), int(r[3])) for r in rows]


def usage_by_task(store: RunStore) -> dict[tuple[str, str], Usage]:
    """(run label, task id) -> the usage of the calls that served that task evaluation."""
    _, rows = store.query(f"SELECT run_label, task_id, {_USAGE} FROM model_calls WHERE task_id IS NOT NULL "
                          "GROUP BY 1, 2")
    return {(r[0], r[1]): _usage(r[2:]) for r in rows}


def usage_by_role(store: RunStore, run_label: str) -> dict[str, Usage]:
    """role -> the usage of one run label's calls in that role, by role."""
    _, rows = store.query(f"SELECT role, {_USAGE} FROM model_calls WHERE run_label = ? GROUP BY role ORDER BY role",
                          [run_label])
    return {r[0]: _usage(r[1:]) for r in rows}

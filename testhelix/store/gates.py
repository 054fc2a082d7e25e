"""The release ledger's rows (`gate_results`): TestHelix's table, written by a release gate
(`autosaddler gate`) and read by configuration E's promotion check and the gate page of a view."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from datetime import datetime

from testhelix.store.runstore import RunStore


@dataclass(frozen=True)
class GateDecision:
    """One release gate's decision: the paired counts, the exact p-value (None without discordant
    pairs), the paired bootstrap intervals and whether the challenger was promoted."""

    gate_id: str
    challenger_hash: str
    baseline_hash: str
    split: str
    model: str
    n: int
    wins: int
    losses: int
    challenger_successes: int
    baseline_successes: int
    p_value: float | None
    ci95: list[float] | None
    ci99: list[float] | None
    promoted: bool
    created_at: datetime | None = None   # set by the store when recorded


_COLUMNS = ", ".join(f.name for f in fields(GateDecision))


def _bounds(value: object) -> list[float] | None:
    return json.loads(value) if isinstance(value, str) else value  # type: ignore[return-value]


def gate_decisions(store: RunStore, challenger_hash: str | None = None) -> list[GateDecision]:
    """The decisions recorded, oldest first; only those that judged `challenger_hash` when given.
    A store without the release ledger raises UserError."""
    where, params = ("WHERE challenger_hash = ?", [challenger_hash]) if challenger_hash else ("", [])
    cols, rows = store.query(f"SELECT {_COLUMNS} FROM gate_results {where} ORDER BY created_at, gate_id", params)
    out = []
    for row in rows:
        values = dict(zip(cols, row))
        values["ci95"], values["ci99"] = _bounds(values["ci95"]), _bounds(values["ci99"])
        out.append(GateDecision(**values))
    return out


def record_gate_decision(store: RunStore, decision: GateDecision) -> None:
    """Add one decision to the release ledger (its time is the store's clock)."""
    row = {k: v for k, v in asdict(decision).items() if k != "created_at" or v is not None}
    store.upsert("gate_results", row)

"""GTDD's queries of its own run-store tables (gtdd/schema.py): the experiment's settings, each
block's first module and static tests, each round's records and trajectory state, and re-audits.
The experiment, its records, the report, `gtdd compare` and `gtdd run` call these; none of them
writes SQL. Rows are written by column name from the dataclasses below, so a row's values can never
shift into the wrong column.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package registers its schema on import: keep that free of DuckDB's import
    from testhelix.store.runstore import RunStore


def _put(store: RunStore, table: str, row: Any) -> None:
    """Insert or replace one dataclass row, by column name."""
    store.upsert(table, asdict(row))


def _columns(row_type: type) -> str:
    return ", ".join(f.name for f in fields(row_type))


def _rows(store: RunStore, sql: str, params: list[Any]) -> list[tuple]:
    """The experiment's own reads and writes: DuckDB's errors pass as they are (a damaged or full
    store is reported by the command line, testhelix/commands/plumbing.py)."""
    return store.conn.execute(sql, params).fetchall()


# --- settings -----------------------------------------------------------------------------------
def config_value(store: RunStore, key: str) -> Any:
    """A stored setting (a JSON value), None when not stored."""
    rows = _rows(store, "SELECT config FROM gtdd_config WHERE key = ?", [key])
    return json.loads(rows[0][0]) if rows else None


def put_config_value(store: RunStore, key: str, value: Any) -> None:
    store.upsert("gtdd_config", {"key": key, "config": json.dumps(value)})


# --- blocks: the first module and the static tests ------------------------------------------------
@dataclass(frozen=True)
class BlockRow:
    block: int
    module: str | None
    simulated: bool
    note: str | None


@dataclass(frozen=True)
class StaticRow:
    """A static generator's tests of one block: the traces and their info, as JSON text."""

    block: int
    key: str
    traces: str
    info: str


def put_block(store: RunStore, row: BlockRow) -> None:
    _put(store, "gtdd_blocks", row)


def block_module(store: RunStore, block: int) -> str | None:
    """The first module a block's coder wrote, None when not stored."""
    rows = _rows(store, "SELECT module FROM gtdd_blocks WHERE block = ?", [block])
    return rows[0][0] if rows else None


def first_modules(store: RunStore) -> dict[int, str | None]:
    """block -> the first module its coder wrote."""
    _, rows = store.query("SELECT block, module FROM gtdd_blocks")
    return {int(block): module for block, module in rows}


def put_static(store: RunStore, row: StaticRow) -> None:
    _put(store, "gtdd_static", row)


def static_tests(store: RunStore, block: int) -> list[StaticRow]:
    rows = _rows(store, f"SELECT {_columns(StaticRow)} FROM gtdd_static WHERE block = ?", [block])
    return [StaticRow(*r) for r in rows]


# --- rounds ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RoundRow:
    """One round of one trajectory (gtdd_rounds): the commitment, development, acceptance and the
    evaluation population's failures; `detail` is JSON text."""

    block: int
    policy: str
    round: int
    manifest_hash: str
    module_hash: str
    simulated: bool
    proposed: int
    valid: int
    duplicates: int
    executed: int
    failures: int
    new_failures: int
    counterexamples: int
    repaired_previous: int
    regressions: int
    protected_changes: int
    public_pass: bool
    regression_pass: bool
    audits_pass: bool
    accepted: bool | None
    population_failures: int
    population_size: int
    failure_rate: float
    unseen_failures: int
    unseen_size: int
    wall_s: float
    detail: str


@dataclass(frozen=True)
class CounterexampleRow:
    """A counterexample shown to the coder (`shown`, JSON text) and what it came from."""

    block: int
    policy: str
    round: int
    id: str
    original_id: str
    family: str
    mechanism: str
    shown: str


@dataclass(frozen=True)
class RoundRecords:
    """Everything one round stores, written together: its row, its audit record (JSON text), the
    counterexamples shown, the generator's source (None when kept in gtdd_static) and info (JSON
    text) when a generator ran, and the trajectory's state after the round (JSON text)."""

    round: RoundRow
    audit: str
    counterexamples: tuple[CounterexampleRow, ...]
    generator: tuple[str | None, str] | None
    state: str


def put_round(store: RunStore, records: RoundRecords) -> None:
    """Store one round's records in one transaction."""
    r = records.round
    key = {"block": r.block, "policy": r.policy, "round": r.round}
    with store.transaction():
        _put(store, "gtdd_rounds", r)
        store.upsert("gtdd_audits", {**key, "record": records.audit})
        for shown in records.counterexamples:
            _put(store, "gtdd_counterexamples", shown)
        if records.generator is not None:
            source, info = records.generator
            store.upsert("gtdd_generators", {**key, "source": source, "info": info})
        store.upsert("gtdd_states", {**key, "state": records.state})


def rounds(store: RunStore, block: int | None = None, policy: str | None = None) -> list[RoundRow]:
    """The recorded rounds, by block, policy and round; only one block's or one policy's when given."""
    conditions, params = [], []
    for column, value in (("block", block), ("policy", policy)):
        if value is not None:
            conditions.append(f"{column} = ?")
            params.append(value)
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    _, rows = store.query(f"SELECT {_columns(RoundRow)} FROM gtdd_rounds {where} ORDER BY block, policy, round",
                          params)
    return [RoundRow(*r) for r in rows]


def last_state(store: RunStore, block: int, policy: str) -> tuple[int, str] | None:
    """The latest round of a trajectory and its state after that round (JSON text), or None."""
    rows = _rows(store, "SELECT round, state FROM gtdd_states WHERE block = ? AND policy = ? "
                 "ORDER BY round DESC LIMIT 1", [block, policy])
    return (int(rows[0][0]), str(rows[0][1])) if rows else None


# --- audits and re-audits -------------------------------------------------------------------------
def audit_records(store: RunStore) -> dict[tuple[int, str, int], Any]:
    """(block, policy, round) -> the round's audit record."""
    _, rows = store.query("SELECT block, policy, round, record FROM gtdd_audits")
    return {(b, p, t): json.loads(record) for b, p, t, record in rows}


def reaudit_count(store: RunStore) -> int:
    """How many audits a re-audit superseded (0 for a run recorded before the table existed)."""
    return int(_one_value(store, "SELECT count(*) FROM gtdd_superseded_audits") or 0)


def per_audit_error(store: RunStore) -> Any:
    """The per-audit error an audit record states (JSON text), None when none is recorded."""
    return _one_value(store, "SELECT any_value(json_extract_string(record, '$.per_audit_error')) FROM gtdd_audits")


def _one_value(store: RunStore, sql: str) -> Any:
    try:
        return store.query(sql)[1][0][0]
    except Exception:  # noqa: BLE001 - a run recorded before the table existed
        return 0


@dataclass(frozen=True)
class AuditedRound:
    """A recorded round as a re-audit needs it: its audit record, decision inputs, detail and state
    (JSON text)."""

    block: int
    policy: str
    round: int
    record: str
    accepted: bool | None
    public_pass: bool
    regression_pass: bool
    detail: str
    state: str


def audited_rounds(store: RunStore) -> list[AuditedRound]:
    rows = _rows(store,
                 "SELECT a.block, a.policy, a.round, a.record, r.accepted, r.public_pass, r.regression_pass, "
                 "r.detail, s.state FROM gtdd_audits a JOIN gtdd_rounds r USING (block, policy, round) "
                 "JOIN gtdd_states s USING (block, policy, round) ORDER BY a.block, a.policy, a.round", [])
    return [AuditedRound(*r) for r in rows]


def supersede_audit(store: RunStore, old: AuditedRound, trajectories: int, rounds_: int, record: str,
                    audits_pass: bool, accepted: bool | None) -> None:
    """Replace a round's audit and decision with a re-audit's, keeping the superseded audit (made
    for `trajectories` x `rounds_`) and decision in gtdd_superseded_audits; one transaction."""
    key = {"block": old.block, "policy": old.policy, "round": old.round}
    with store.transaction():
        store.upsert("gtdd_superseded_audits", {**key, "trajectories": trajectories, "rounds": rounds_,
                                                "accepted": old.accepted, "record": old.record})
        store.upsert("gtdd_audits", {**key, "record": record})
        _rows(store, "UPDATE gtdd_rounds SET audits_pass = ?, accepted = ? WHERE block = ? AND policy = ? AND round = ?",
              [audits_pass, accepted, old.block, old.policy, old.round])

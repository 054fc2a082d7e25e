"""GTDD's part of the run store: its tables and its run kind, declared as the
`testhelix.store_schemas` entry point `gtdd` (pyproject.toml) and registered with TestHelix's named
migrations (testhelix/store/migrations.py) by every process that opens a store.

`gtdd:tables` uses CREATE TABLE IF NOT EXISTS: experiments stored before GTDD owned a migration made
these tables themselves, so on their stores the migration only records its name. A later change to
a table is a new migration appended here (`gtdd:<what it does>`), never an edit of this one.
"""

from __future__ import annotations

from testhelix.store import migrations
from testhelix.store.migrations import RunKind, StoreSchema

MIGRATIONS = (
    ("gtdd:tables", """
CREATE TABLE IF NOT EXISTS gtdd_config (key TEXT PRIMARY KEY, config JSON);
CREATE TABLE IF NOT EXISTS gtdd_blocks (block INTEGER PRIMARY KEY, module TEXT, simulated BOOLEAN,
    note TEXT);
CREATE TABLE IF NOT EXISTS gtdd_static (block INTEGER, key TEXT, traces JSON, info JSON,
    PRIMARY KEY (block, key));
CREATE TABLE IF NOT EXISTS gtdd_rounds (block INTEGER, policy TEXT, round INTEGER,
    manifest_hash TEXT, module_hash TEXT, simulated BOOLEAN, proposed INTEGER, valid INTEGER,
    duplicates INTEGER, executed INTEGER, failures INTEGER, new_failures INTEGER,
    counterexamples INTEGER, repaired_previous INTEGER, regressions INTEGER,
    protected_changes INTEGER, public_pass BOOLEAN, regression_pass BOOLEAN, audits_pass BOOLEAN,
    accepted BOOLEAN, population_failures INTEGER, population_size INTEGER, failure_rate DOUBLE,
    unseen_failures INTEGER, unseen_size INTEGER, wall_s DOUBLE, detail JSON,
    PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_audits (block INTEGER, policy TEXT, round INTEGER, record JSON,
    PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_counterexamples (block INTEGER, policy TEXT, round INTEGER,
    id TEXT, original_id TEXT, family TEXT, mechanism TEXT, shown JSON,
    PRIMARY KEY (block, policy, round, id));
CREATE TABLE IF NOT EXISTS gtdd_generators (block INTEGER, policy TEXT, round INTEGER,
    source TEXT, info JSON, PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_states (block INTEGER, policy TEXT, round INTEGER, state JSON,
    PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_superseded_audits (block INTEGER, policy TEXT, round INTEGER,
    trajectories INTEGER, rounds INTEGER, accepted BOOLEAN, record JSON,
    PRIMARY KEY (block, policy, round, trajectories, rounds));
"""),
)

SCHEMA = StoreSchema("gtdd", MIGRATIONS,
                     kinds=(RunKind("gtdd", "a GTDD experiment", "SELECT 1 FROM gtdd_config", "gtdd report"),))

migrations.register_schema(SCHEMA)  # also when imported without the entry point (a source tree not installed)

"""The run store, one package: every SQL statement TestHelix runs lives here, beside the schema.

- `runstore`: `RunStore`, one run folder's DuckDB file (attempts, the ledger, results, state).
- `migrations`: the schema as named migrations and run kinds, and the `StoreSchema` other
  packages contribute theirs with.
- `lifecycle`: atomic creation, acceptance before writing, run kinds, live snapshots.

This file imports nothing: a package registers its `StoreSchema` (testhelix.store.migrations) when
it is imported, and that must not load DuckDB (`--help` stays light); import `RunStore` from
`testhelix.store.runstore`.
"""

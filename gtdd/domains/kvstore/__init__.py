"""The key-value store domain (spec.md): 61 commands in 8 families, Redis-compatible where shared.

`DOMAIN` satisfies gtdd.domains.base.Domain: it describes behaviour only; the trace executor runs
its candidates (gtdd/execution.py, one fresh sandboxed process per trace). Keep this module light:
the sandbox never imports the package, and tools that only need the spec or the schema should not
pay for more.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from gtdd.domains import base
from gtdd.domains.base import Op, Trace, TraceResult
from gtdd.domains.kvstore import generator, schema
from gtdd.domains.kvstore import population as population_module

HERE = Path(__file__).parent


def run_reference(ops: Sequence[Op]) -> TraceResult:
    """Trusted in-process execution of the reference (never used for candidates)."""
    from gtdd.domains.kvstore.reference import Store

    store = Store()
    return TraceResult(tuple(store.execute(op["cmd"], list(op["args"])) for op in ops), None)


class KVStoreDomain:
    name = "kvstore"
    families: tuple[str, ...] = schema.FAMILIES
    module_name = "kvstore.py"
    entry_class = "Store"
    max_ops = schema.MAX_OPS
    loss = base.EXACT_LOSS

    def spec(self) -> str:
        return (HERE / "spec.md").read_text()

    def reference_source(self) -> str:
        return (HERE / "reference.py").read_text()

    def trace_json_schema(self) -> dict:
        return schema.trace_json_schema()

    def validate(self, ops: Sequence[Op]) -> list[str]:
        return schema.validate_ops(ops)

    def generate(self, rng: random.Random, family: str | None = None) -> Trace:
        family = family or rng.choice(self.families)
        return Trace.of(generator.generate_ops(rng, family), family)

    def population(self) -> tuple[Trace, ...]:
        return population_module.population()

    def family_of_op(self, op: Op) -> str:
        return schema.COMMAND_FAMILY[op["cmd"]]

    def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]:
        return [_reference_result(t) for t in traces]

    @property
    def defects(self) -> ModuleType:
        from gtdd.domains.kvstore import defects

        return defects

    def public_examples(self) -> tuple[Trace, ...]:
        return ()  # the loop draws seeded examples from the generator

    def first_divergence(self, expected: TraceResult, got: TraceResult) -> int | None:
        return base.first_divergence(expected, got)


@lru_cache(maxsize=8192)
def _reference_result(trace: Trace) -> TraceResult:
    return run_reference(trace.ops)


DOMAIN = KVStoreDomain()

"""A tiny out-of-tree GTDD domain, loaded with `--domain counter` (entry point) or `--domain sample_plugin.counter:DOMAIN`.

Named counters: `INC name` returns the new value, `GET name` the value (0 when unset), `RESET name`
returns 1 if the counter existed and removes it. It implements every hook of
gtdd.domains.base.Domain itself and describes behaviour only: GTDD's trace executor runs its
candidates (a module `counters.py` with class `Counters`) in the sandbox, as for any domain;
nothing in gtdd knows about it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gtdd.domains import base
from gtdd.domains.base import Trace, TraceResult

REFERENCE = '''class Counters:
    def __init__(self):
        self.values = {}

    def execute(self, cmd, args):
        if cmd == "INC":
            self.values[args[0]] = self.values.get(args[0], 0) + 1
            return self.values[args[0]]
        if cmd == "GET":
            return self.values.get(args[0], 0)
        if cmd == "RESET":
            return 1 if self.values.pop(args[0], None) is not None else 0
        return {"error": "UNKNOWN"}
'''
COMMANDS = {"INC": "counting", "GET": "counting", "RESET": "resetting"}


@dataclass(frozen=True)
class Defect:
    id: str
    family: str
    description: str
    find: str
    replace: str


class Defects:
    DEFECTS = (
        Defect("inc-from-one", "counting", "INC starts at 2", "self.values.get(args[0], 0) + 1",
               "self.values.get(args[0], 1) + 1"),
        Defect("get-missing-none", "counting", "GET of an unset counter is null", "return self.values.get(args[0], 0)",
               "return self.values.get(args[0])"),
        Defect("reset-always-one", "resetting", "RESET replies 1 for an unset counter",
               "is not None else 0", "is not None else 1"),
    )

    @staticmethod
    def apply_defects(source: str, ids: Sequence[str]) -> str:
        by_id = {d.id: d for d in Defects.DEFECTS}
        for i in ids:
            if source.count(by_id[i].find) != 1:
                raise ValueError(f"defect {i}: its text is not found exactly once")
            source = source.replace(by_id[i].find, by_id[i].replace)
        return source


def _reference(ops: Sequence[dict]) -> TraceResult:
    namespace: dict[str, Any] = {}
    exec(compile(REFERENCE, "counters.py", "exec"), namespace)
    store = namespace["Counters"]()
    return TraceResult(tuple(store.execute(op["cmd"], list(op["args"])) for op in ops), None)


class CounterDomain:
    name = "counters"
    families: tuple[str, ...] = ("counting", "resetting")
    module_name = "counters.py"
    entry_class = "Counters"
    max_ops = 8
    loss = base.EXACT_LOSS
    defects = Defects
    _population: tuple[Trace, ...] | None = None

    def spec(self) -> str:
        return ("# Counters\n`INC name` -> the new value; `GET name` -> the value, 0 when unset; `RESET name` -> "
                "1 if the counter existed (it is removed), else 0. Class `Counters`, method execute(cmd, args).\n")

    def reference_source(self) -> str:
        return REFERENCE

    def validate(self, ops: Sequence[dict]) -> list[str]:
        if not 1 <= len(ops) <= self.max_ops:
            return [f"a trace has 1 to {self.max_ops} operations"]
        return [f"op {i}: expected one of {sorted(COMMANDS)} with one name" for i, op in enumerate(ops)
                if not isinstance(op, dict) or op.get("cmd") not in COMMANDS or not isinstance(op.get("args"), list)
                or len(op["args"]) != 1 or not isinstance(op["args"][0], str)]

    def generate(self, rng: random.Random, family: str | None = None) -> Trace:
        family = family or rng.choice(self.families)
        names = [c for c, f in COMMANDS.items() if f == family] + ["INC"]
        ops = [{"cmd": rng.choice(names), "args": [rng.choice("xy")]} for _ in range(rng.randint(2, self.max_ops))]
        return Trace.of(ops, family)

    def population(self) -> tuple[Trace, ...]:
        # built once per domain object (a cache on the instance, not on the class: nothing outlives it)
        if self._population is None:
            self._population = self._build_population()
        return self._population

    def _build_population(self) -> tuple[Trace, ...]:
        rng, seen = random.Random(7), set()
        out: list[Trace] = []
        while len(out) < 60:
            t = self.generate(rng, self.families[len(out) % 2])
            if (t.family, t.id) not in seen:
                seen.add((t.family, t.id))
                out.append(t)
        return tuple(out)

    def public_examples(self) -> tuple[Trace, ...]:
        return (Trace.of([{"cmd": "INC", "args": ["x"]}, {"cmd": "GET", "args": ["x"]}], "counting"),)

    def family_of_op(self, op: dict) -> str:
        return COMMANDS[op["cmd"]]

    def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]:
        return [_reference(t.ops) for t in traces]

    def first_divergence(self, expected: TraceResult, got: TraceResult) -> int | None:
        return base.first_divergence(expected, got)


DOMAIN = CounterDomain()
NOT_A_DOMAIN = object()

"""A tiny domain for the GTDD loop tests: a stack and a map, 6 commands, 2 families.

It satisfies gtdd.domains.base.Domain and carries its own defect catalogue (`domain.defects`), so
the loop, the simulated agents and the experiment can be tested quickly and independently of the
key-value store. Its candidates run in-process, through `InProcessRunner` given to the executor in
place of the sandbox (the fake's modules are all derived from its own reference); a domain never
runs candidates itself.
"""

from __future__ import annotations

import random
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gtdd.domains import base
from gtdd.domains.base import Trace, TraceResult
from gtdd.execution import TraceExecutor

REFERENCE = '''
class Store:
    def __init__(self):
        self.stack = []
        self.map = {}

    def execute(self, cmd, args):
        if cmd == "PUSH":
            self.stack.append(args[0])
            return len(self.stack)
        if cmd == "POP":
            if not self.stack:
                return {"error": "EMPTY"}
            return self.stack.pop()
        if cmd == "SIZE":
            return len(self.stack)
        if cmd == "SET":
            self.map[args[0]] = args[1]
            return "OK"
        if cmd == "GET":
            return self.map.get(args[0])
        if cmd == "DEL":
            return 1 if self.map.pop(args[0], None) is not None else 0
        raise ValueError(cmd)
'''

COMMANDS: dict[str, tuple[str, list[type]]] = {"PUSH": ("stack", [int]), "POP": ("stack", []), "SIZE": ("stack", []),
            "SET": ("map", [str, str]), "GET": ("map", [str]), "DEL": ("map", [str])}


@dataclass(frozen=True)
class Defect:
    id: str
    family: str
    description: str
    find: str
    replace: str


DEFECTS = (
    Defect("pop-empty-none", "stack", "POP on an empty stack replies null",
           'return {"error": "EMPTY"}', "return None"),
    Defect("push-bool", "stack", "PUSH replies true instead of the new size",
           "return len(self.stack)\n        if cmd == \"POP\"", "return True\n        if cmd == \"POP\""),
    Defect("del-always-one", "map", "DEL replies 1 for a missing key",
           "else 0", "else 1"),
    Defect("get-missing-empty", "map", "GET of a missing key replies an empty string",
           "return self.map.get(args[0])", 'return self.map.get(args[0], "")'),
    Defect("size-crash", "stack", "SIZE raises on an empty stack",
           "if cmd == \"SIZE\":\n            return len(self.stack)",
           "if cmd == \"SIZE\":\n            return len(self.stack) // len(self.stack) * len(self.stack)"),
)


def apply_defects(source: str, ids: Sequence[str]) -> str:
    by_id = {d.id: d for d in DEFECTS}
    for defect_id in ids:
        d = by_id[defect_id]
        if source.count(d.find) != 1:
            raise ValueError(f"defect {defect_id}: its text is not found exactly once")
        source = source.replace(d.find, d.replace)
    return source


defects_module = types.SimpleNamespace(DEFECTS=DEFECTS, apply_defects=apply_defects, __name__="fake.defects")


def _run(source: str, ops: Sequence[dict]) -> TraceResult:
    namespace: dict[str, Any] = {}
    try:
        exec(compile(source, "candidate.py", "exec"), namespace)
        store = namespace["Store"]()
    except Exception:  # noqa: BLE001
        return TraceResult((), "import")
    replies = []
    for op in ops:
        try:
            replies.append(store.execute(op["cmd"], list(op["args"])))
        except Exception as err:  # noqa: BLE001
            return TraceResult(tuple(replies), type(err).__name__)
    return TraceResult(tuple(replies), None)


class FakeDomain:
    name = "fake"
    families: tuple[str, ...] = ("stack", "map")
    module_name = "store.py"
    entry_class = "Store"
    max_ops = 12
    loss = base.EXACT_LOSS
    defects = defects_module

    def __init__(self) -> None:
        self._population: tuple[Trace, ...] | None = None

    def spec(self) -> str:
        return "# Stack and map\nPUSH n -> new size; POP -> top or {\"error\": \"EMPTY\"}; SIZE; SET k v -> OK; " \
               "GET k -> value or null; DEL k -> 1 or 0.\n"

    def reference_source(self) -> str:
        return REFERENCE

    def validate(self, ops: Sequence[dict]) -> list[str]:
        problems = []
        if not 1 <= len(ops) <= self.max_ops:
            problems.append(f"a trace has 1 to {self.max_ops} operations, got {len(ops)}")
        for i, op in enumerate(ops):
            if not isinstance(op, dict) or op.get("cmd") not in COMMANDS or not isinstance(op.get("args"), list):
                problems.append(f"op {i}: unknown command or malformed operation")
                continue
            kinds = COMMANDS[op["cmd"]][1]
            if len(op["args"]) != len(kinds) or not all(
                    type(a) is k for a, k in zip(op["args"], kinds)):
                problems.append(f"op {i}: args of {op['cmd']} must be {[k.__name__ for k in kinds]}")
        return problems

    def generate(self, rng: random.Random, family: str | None = None) -> Trace:
        family = family or rng.choice(self.families)
        names = [c for c, (f, _) in COMMANDS.items() if f == family]
        ops = []
        for _ in range(rng.randint(4, self.max_ops)):
            cmd = rng.choice(names)
            kinds = COMMANDS[cmd][1]
            args = [rng.randint(0, 5) if k is int else rng.choice("abc") for k in kinds]
            ops.append({"cmd": cmd, "args": args})
        return Trace.of(ops, family)

    def population(self) -> tuple[Trace, ...]:
        # drawn once per instance (the loop asks for it often), kept on the instance rather than in an
        # lru_cache on the method, which would keep every instance alive
        if self._population is None:
            rng = random.Random(20260101)
            out: list[Trace] = []
            seen: set[str] = set()
            while len(out) < 200:
                t = self.generate(rng)
                if t.id not in seen:
                    seen.add(t.id)
                    out.append(t)
            self._population = tuple(out)
        return self._population

    def public_examples(self) -> tuple[Trace, ...]:
        return ()

    def family_of_op(self, op: dict) -> str:
        return COMMANDS[op["cmd"]][0]

    def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]:
        return [_run(REFERENCE, t.ops) for t in traces]

    def first_divergence(self, expected: TraceResult, got: TraceResult) -> int | None:
        return base.first_divergence(expected, got)


class InProcessRunner:
    """A CandidateRunner (gtdd/execution.py) that runs the fake's candidates in this process: fast,
    and safe only because every module the tests run derives from the fake's own reference."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, module_source: str, traces: Sequence[Trace], module_file: str, entry: str) -> list[TraceResult]:
        self.calls += 1
        return [_run(module_source, t.ops) for t in traces]

    def config(self) -> dict:
        return {"sandbox": "in-process test fake"}


def fake_executor(domain: FakeDomain | None = None) -> TraceExecutor:
    return TraceExecutor(domain or FakeDomain(), runner=InProcessRunner())


DOMAIN = FakeDomain()  # for `--domain loop_fakes:DOMAIN` in command-line tests

"""The domain interface of GTDD: what the loop needs from a behavioural contract.

A *domain* is one issue of the GTDD setting (docs/design.md §8): a written spec, a trusted reference
implementation, an operation schema that decides which traces are valid, a trace generator, and a
fixed evaluation population labelled by requirement family. The key-value store is the first
domain; a parser or a formally specified API plugs in by providing another object that satisfies
the `Domain` protocol below, with the same value types.

A *trace* is a sequence of operations applied to a fresh instance. Operations are plain JSON objects
(`{"cmd": "SET", "args": ["k", "v"]}`) so traces can be written by an LLM, stored, hashed and sent to
a subprocess without any domain-specific encoding.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from testhelix.core.digest import canonical_json
from testhelix.core.plugins import missing_members, protocol_members

Op = dict  # {"cmd": "SET", "args": ["k", "v"]}; must be JSON-serialisable

# Execution failures a runner may report in TraceResult.error besides an exception type name.
ERROR_TIMEOUT = "timeout"  # the per-trace CPU-time limit was exceeded
ERROR_IMPORT = "import"  # the candidate module could not be imported or lacks its entry point
ERROR_CRASH = "crash"  # the process running the candidate died (exit, signal, memory)
ERROR_MALFORMED = "malformed"  # a reply that is not a JSON value
# Harness errors: no verdict was obtained (the wall-clock backstop fired). Never cached; a use counts
# the trace as failed, conservatively, and the round records how many there were.
ERROR_WALL_CLOCK = "harness:wall-clock"
HARNESS_ERRORS = frozenset({ERROR_WALL_CLOCK})


def trace_id(ops: Sequence[Op]) -> str:
    """Stable content hash of a trace's operations (the family is a label, not content)."""
    return hashlib.sha256(canonical_json(list(ops), ascii_only=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Trace:
    ops: tuple[Op, ...]
    family: str
    id: str

    @classmethod
    def of(cls, ops: Sequence[Op], family: str) -> Trace:
        frozen = tuple({"cmd": op["cmd"], "args": list(op["args"])} for op in ops)
        return cls(ops=frozen, family=family, id=trace_id(frozen))

    def __hash__(self) -> int:  # ops hold dicts; the id is their content hash
        return hash((self.id, self.family))

    def to_json(self) -> dict:
        return {"id": self.id, "family": self.family, "ops": [dict(op) for op in self.ops]}


@dataclass(frozen=True)
class Defect:
    """One entry of a domain's defect catalogue: the simulated coder's mistake, written as a text edit
    (`find` -> `replace`) of the reference source, in a behaviour family."""

    id: str
    family: str
    description: str
    find: str
    replace: str


@dataclass(frozen=True)
class TraceResult:
    replies: tuple[Any, ...]
    error: str | None  # class of an execution failure: exception type name, "timeout", "import", ...


def population_digest(traces: Sequence[Trace]) -> str:
    """sha256 over the ordered (id, family, ops) of a population; pins the evaluation target."""
    h = hashlib.sha256()
    for t in traces:
        h.update(canonical_json(t.to_json(), ascii_only=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: a boolean is never a number, null only equals null, numbers compare by
    value, arrays elementwise, objects by key set and values. Python's == says True == 1, which is
    exactly the confusion the comparison must not make (it can change a candidate's failure count)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def is_json_value(value: Any) -> bool:
    """True for values made only of None, bool, int, finite float, str, list/tuple, str-keyed dict."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(is_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_value(v) for k, v in value.items())
    return False


EXACT_LOSS = "exact: every reply equal as a JSON value (json_equal), and the same execution error"


def first_divergence(expected: TraceResult, got: TraceResult) -> int | None:
    """The exact loss (EXACT_LOSS): index of the first operation whose outcome differs, or None when the results agree.

    A failed execution diverges at the operation it did not answer (len(replies)); a run that
    answered more or fewer operations than expected diverges where the shorter one stops."""
    for i, (e, g) in enumerate(zip(expected.replies, got.replies)):
        if not json_equal(e, g):
            return i
    n_exp, n_got = len(expected.replies), len(got.replies)
    if n_exp != n_got or expected.error != got.error:
        return min(n_exp, n_got)
    return None


class Domain(Protocol):
    """What GTDD needs from one behavioural contract (see module docstring): behaviour only. Running a
    candidate is the trace executor's (gtdd/execution.py runs every domain's candidates in the sandbox
    of gtdd/isolation/), so a domain never imports the isolation. Every hook the loop, the experiment
    and the simulated agents read is declared here; nothing is probed with getattr. A domain outside
    the project is loaded with `--domain package.module:OBJECT` (gtdd.domains)."""

    name: str
    families: tuple[str, ...]
    module_name: str  # file name a candidate provides, e.g. "kvstore.py"
    entry_class: str  # the class in that module whose instances answer execute(cmd, args)
    max_ops: int  # the schema's trace-length limit L (bounds reduction cost)
    # How replies are compared (first_divergence), in words: part of every commitment, since it decides
    # verdicts. EXACT_LOSS, or e.g. "judged: NAME: RUBRIC" (gtdd/domains/judged.py).
    loss: str

    @property
    def defects(self) -> Any:
        """The defect catalogue the simulated coder injects from (an object with DEFECTS and
        apply_defects(source, ids)); None when the domain has none (then only LLM coders can run)."""

    def spec(self) -> str: ...
    def reference_source(self) -> str: ...  # HIDDEN from agents
    def validate(self, ops: Sequence[Op]) -> list[str]: ...  # problems, [] when valid
    def generate(self, rng: random.Random, family: str | None = None) -> Trace: ...
    def population(self) -> tuple[Trace, ...]: ...
    def public_examples(self) -> tuple[Trace, ...]: ...  # the domain's own; () to let the loop draw some
    def family_of_op(self, op: Op) -> str: ...  # requirement family of one operation's command
    def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]: ...  # trusted, in-process
    def first_divergence(self, expected: TraceResult, got: TraceResult) -> int | None: ...  # the loss


DOMAIN_HOOKS = protocol_members(Domain)  # the Protocol is the one list


def missing_hooks(obj: Any) -> list[str]:
    """The Domain hooks an object lacks (a plug-in is checked once, when it is loaded)."""
    return missing_members(obj, Domain)

"""Scripted faults for `testhelix serve`: what the next requests get instead of a good answer.

A script is an ordered list of faults; each request takes the first one (and counts one of its
`times`; `times=0` means until the script is changed). With an empty script every request is
answered normally. Kinds:

    ok         a normal answer (to script an outage that starts after some good requests)
    status     HTTP error `code` (429, 500, 503, 529, 401, ...) with an optional `retry_after` (s)
    context    HTTP 400 saying the request exceeds the context window
    stall      wait `seconds` before answering (normally), to trip client timeouts and deadlines
    malformed  HTTP 200 with a truncated JSON body
    html       HTTP 200 with an HTML page (a proxy's error page)
    empty      HTTP 200 with no choices / no content
    oversized  the model's answer padded to `size` characters, usage to match (ignores max_tokens)
    inflated   the model's answer with its usage multiplied by `factor`
    badargs    every tool call's arguments replaced by text that is not a JSON object
    nousage    the answer without any usage fields

On the command line a fault is `KIND[:key=value,...]`, e.g. `status:code=429,retry_after=1,times=3`,
`stall:seconds=5`, `oversized:size=3000000`; a bare status code (`429`, `529`) is a status fault.
The script can also be replaced while serving: POST a JSON list of faults to /_testhelix/faults.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, field

from testhelix.core.errors import UserError

KINDS = ("ok", "status", "context", "stall", "malformed", "html", "empty", "oversized", "inflated", "badargs", "nousage")


@dataclass
class Fault:
    kind: str
    times: int = 1                 # 0: every request until the script changes
    code: int = 500
    retry_after: float | None = None
    seconds: float = 5.0
    size: int = 3_000_000
    factor: float = 100.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UserError(f"unknown fault kind {self.kind!r}; known: {', '.join(KINDS)}")
        if self.times < 0:
            raise UserError(f"fault {self.kind}: times must be >= 0, got {self.times}")
        # Range checks before the server uses a value (a negative or endless stall, a status that is
        # not HTTP, an allocation of any size).
        for name, value, low, high in (("code", self.code, 100, 599), ("seconds", self.seconds, 0, 3600),
                                       ("retry_after", self.retry_after, 0, 3600), ("size", self.size, 0, 1 << 30),
                                       ("factor", self.factor, 0, 1e6)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not math.isfinite(value) or not low <= value <= high):
                raise UserError(f"fault {self.kind}: {name} must be a number in [{low}, {high}], got {value!r}")


def parse_fault(spec: str) -> Fault:
    """`KIND[:key=value,...]` or a bare HTTP status code."""
    kind, _, rest = spec.strip().partition(":")
    values: dict = {}
    if kind.isdigit():
        values["code"], kind = int(kind), "status"
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in Fault.__dataclass_fields__ or key == "kind":
            raise UserError(f"--fault {spec!r}: {part!r} is not key=value with a key of "
                            f"{', '.join(k for k in Fault.__dataclass_fields__ if k != 'kind')}")
        try:
            values[key] = float(value) if key in ("retry_after", "seconds", "factor") else int(value)
        except ValueError:
            raise UserError(f"--fault {spec!r}: {key} must be a number, got {value!r}") from None
    return Fault(kind, **values)


def fault_from_dict(d: dict) -> Fault:
    try:
        return Fault(**d)
    except TypeError as err:
        raise UserError(f"fault {d!r}: {err}") from None


@dataclass
class FaultScript:
    """The shared, thread-safe script; `served` counts what each request got."""

    faults: list[Fault] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def replace(self, faults: list[Fault]) -> None:
        with self._lock:
            self.faults = list(faults)

    def next(self) -> Fault | None:
        with self._lock:
            if not self.faults:
                self.served["ok"] = self.served.get("ok", 0) + 1
                return None
            fault = self.faults[0]
            if fault.times == 1:
                self.faults.pop(0)
            elif fault.times > 1:
                fault.times -= 1
            self.served[fault.kind] = self.served.get(fault.kind, 0) + 1
            return fault

    def snapshot(self) -> dict:
        with self._lock:
            return {"pending": [asdict(f) for f in self.faults], "served": dict(self.served)}

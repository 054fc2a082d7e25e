"""The 2,000-trace evaluation population, drawn once from a fixed seed.

The population is regenerated on demand (about a tenth of a second) instead of being stored, and its
digest is pinned in data/population.json: a change to the generator that would silently move the
evaluation target makes `check_population` (and the test suite) fail instead. Families take turns,
so each of the 8 families holds 250 traces; traces are distinct within a family.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path

from gtdd.domains.base import Trace, population_digest
from gtdd.domains.kvstore.generator import generate_ops
from gtdd.domains.kvstore.schema import FAMILIES

POPULATION_SEED = 20250414
POPULATION_SIZE = 2000
PIN_FILE = Path(__file__).with_name("data") / "population.json"


def draw_population(seed: int = POPULATION_SEED, size: int = POPULATION_SIZE) -> tuple[Trace, ...]:
    rng = random.Random(seed)
    seen: set[tuple[str, str]] = set()
    traces: list[Trace] = []
    while len(traces) < size:
        family = FAMILIES[len(traces) % len(FAMILIES)]
        trace = Trace.of(generate_ops(rng, family), family)
        if (family, trace.id) in seen:  # redraw: cases within a family are distinct
            continue
        seen.add((family, trace.id))
        traces.append(trace)
    return tuple(traces)


@lru_cache(maxsize=1)
def population() -> tuple[Trace, ...]:
    return draw_population()


def pinned() -> dict:
    return json.loads(PIN_FILE.read_text())


def check_population() -> list[str]:
    """Differences between the regenerated population and the pinned digest; [] when they agree."""
    pin, traces = pinned(), population()
    problems = []
    if pin["seed"] != POPULATION_SEED or pin["size"] != len(traces):
        problems.append(f"pinned seed/size {pin['seed']}/{pin['size']} differ from "
                        f"{POPULATION_SEED}/{len(traces)}")
    digest = population_digest(traces)
    if pin["sha256"] != digest:
        problems.append(f"population digest {digest} differs from the pinned {pin['sha256']} "
                        f"({PIN_FILE}); the generator changed the evaluation target")
    return problems


def write_pin() -> dict:
    """Record the current population's digest (only when deliberately changing the target)."""
    traces = population()
    counts = {f: sum(t.family == f for t in traces) for f in FAMILIES}
    pin = {"seed": POPULATION_SEED, "size": len(traces), "sha256": population_digest(traces),
           "family_counts": counts}
    PIN_FILE.parent.mkdir(parents=True, exist_ok=True)
    PIN_FILE.write_text(json.dumps(pin, indent=2) + "\n")
    return pin

"""The nine tester policies and how a policy turns into development traces.

A policy fixes *when* traces are generated, *what* the tester sees and *how many* traces it asks
for (docs/design.md §8 lists the experiment they serve):

  public-only             no development traces: only the public examples' outcome
  static-property         400 traces from the evaluation generator with another seed, before round 1
  static-llm              one LLM generator from the spec before round 1, 400 traces, fixed
  dynamic-blind           a new generator every testing round from spec + reported history, 200 traces
  dynamic-informed        as dynamic-blind, and the tester also reads the committed module
  static-llm-600          one generator before round 1, 600 traces, all used from the start
  staged-600              the same generator and traces as static-llm-600, 200 released per round
  regenerated-no-history  a new generator every testing round from the spec alone, 200 traces
  blind-rerun             dynamic-blind again with fresh randomness

Testing happens in rounds 1..T-1: each is followed by a repair round that receives its feedback
(the final round's feedback would reach no coder). Fixed traces are re-executed in later rounds as
regression tests.

LLM generators are untrusted programs. `run_generator` runs one in the same isolated child process
as candidate modules (see _HOST below) under a CPU-time limit; what it prints is discarded, and
its traces come back as one JSON reply.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from gtdd.domains.base import Domain, Trace
from testhelix.core.errors import UserError

GENERATOR_FILE = "trace_generator_host.py"
GENERATOR_CPU_S = 30.0


@dataclass(frozen=True)
class Policy:
    name: str
    source: Literal["none", "property", "llm"]
    schedule: Literal["none", "static", "staged", "dynamic"]
    traces: int  # per request (static / staged: in total)
    sees_history: bool = False
    sees_module: bool = False
    stream: str = "main"  # randomness stream; blind-rerun repeats dynamic-blind on a fresh one
    static_key: str | None = None  # static generators shared between policies of one block

    def tests_in(self, round_index: int, rounds: int) -> bool:
        if self.schedule == "static":
            return round_index == 1
        if self.schedule in ("staged", "dynamic"):
            return round_index < rounds
        return False


POLICIES: dict[str, Policy] = {p.name: p for p in (
    Policy("public-only", "none", "none", 0),
    Policy("static-property", "property", "static", 400),
    Policy("static-llm", "llm", "static", 400, static_key="llm-400"),
    Policy("dynamic-blind", "llm", "dynamic", 200, sees_history=True),
    Policy("dynamic-informed", "llm", "dynamic", 200, sees_history=True, sees_module=True),
    Policy("static-llm-600", "llm", "static", 600, static_key="llm-600"),
    Policy("staged-600", "llm", "staged", 600, static_key="llm-600"),
    Policy("regenerated-no-history", "llm", "dynamic", 200),
    Policy("blind-rerun", "llm", "dynamic", 200, sees_history=True, stream="rerun"),
)}


def parse_policies(text: str) -> list[Policy]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in POLICIES]
    if unknown or not names:
        raise UserError(f"--policies: unknown policy {', '.join(unknown) or '(none given)'}; "
                        f"known: {', '.join(POLICIES)}")
    if len(set(names)) != len(names):
        raise UserError(f"--policies: a policy is listed twice in {text!r}")
    return [POLICIES[n] for n in names]


def staged_chunk(raw: list, round_index: int, rounds: int) -> list:
    """The part of a staged generator's sampled traces released in testing round `round_index`."""
    testing_rounds = max(rounds - 1, 1)
    size = -(-len(raw) // testing_rounds)
    return raw[(round_index - 1) * size: round_index * size]


# --- proposals -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Proposals:
    valid: tuple[Trace, ...]
    invalid: int
    requested: int
    error: str | None = None  # why a generator yielded nothing (did not run, raised, timed out)
    problems: tuple[str, ...] = ()  # a few validation messages, for the record

    @property
    def proposed(self) -> int:
        return len(self.valid) + self.invalid


def label_family(domain: Domain, ops: list[dict]) -> str:
    """A proposal's family: the most frequent family among its commands (first seen wins ties)."""
    families = [domain.family_of_op(op) for op in ops]
    counts = Counter(families)
    return max(dict.fromkeys(families), key=counts.__getitem__)  # max keeps the first of equals


def proposals_from_raw(domain: Domain, raw: list[Any], requested: int, error: str | None = None
                       ) -> Proposals:
    valid: list[Trace] = []
    problems: list[str] = []
    invalid = 0
    for i, item in enumerate(raw):
        ops = item.get("ops") if isinstance(item, dict) else item
        if isinstance(ops, list) and ops:
            found = domain.validate(ops)
            if not found:
                valid.append(Trace.of(ops, label_family(domain, ops)))
                continue
        else:
            found = ["a trace must be a non-empty list of operations"]
        invalid += 1
        if len(problems) < 5:
            problems.append(f"trace {i}: {found[0]}")
    return Proposals(tuple(valid), invalid, requested, error, tuple(problems))


def property_proposals(domain: Domain, count: int, seed: int) -> Proposals:
    rng = random.Random(seed)
    return Proposals(tuple(domain.generate(rng) for _ in range(count)), 0, count)


# --- running a generator program ---------------------------------------------------------------

# The generator is hosted as a one-operation "store" so that it runs in the same isolation as
# candidate modules (gtdd/isolation/: namespaces, chroot, unprivileged uid, CPU and memory limits,
# allow-listed environment, results over a pipe the harness owns), which runs any module file whose
# entry class answers execute(cmd, args).
_HOST = """import random

SOURCE = {source!r}


class Generator:
    def execute(self, cmd, args):
        namespace = {{"__name__": "trace_generator"}}
        exec(compile(SOURCE, "trace_generator.py", "exec"), namespace)
        count, seed = args
        return list(namespace["generate"](random.Random(seed), count))[:count]
"""


def run_generator(source: str, count: int, seed: int, cpu_s: float = GENERATOR_CPU_S
                  ) -> tuple[list[Any], str | None]:
    """Run a generator program; returns (raw traces, None) or ([], why it yielded nothing)."""
    from gtdd.isolation import IsolationLimits, run_traces

    call = Trace.of([{"cmd": "generate", "args": [count, seed]}], "generator")
    [result] = run_traces(_HOST.format(source=source), [call], IsolationLimits(cpu_s=cpu_s, import_cpu_s=cpu_s, wall_factor=2.0),
                          module_file=GENERATOR_FILE, entry="Generator")
    if result.error is not None:
        return [], result.error
    traces = result.replies[0] if result.replies else None
    return (traces, None) if isinstance(traces, list) else ([], "generate() did not return a list")

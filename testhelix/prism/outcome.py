"""Limits, outcomes, and how a raw run is classified as pass / fail / error.

The rules follow the seed and the lessons of the SWE-bench harness (DESIGN §10):

- pass  = the entry exited 0 AND at least one test actually executed (skips do not count);
- fail  = pytest's "tests failed" exit (1) with at least one executed test that failed or errored;
- error = everything else, with the reason kept: missing suite or entry script, timeout, a resource
  limit, no test executed, collection / usage errors, a non-zero exit without any failing test,
  death by a signal, a corrupted result channel, a fault of the harness itself.

The verdict is computed on the host from what the harness observed (exit status, its own timer, the
lines the reporting plugin wrote into a pipe the harness owns, the captured output) — never from a
file inside the workspace, which the suite could write.
"""

from __future__ import annotations

import json
import re
import signal
from dataclasses import asdict, dataclass, field
from typing import Literal

Status = Literal["pass", "fail", "error"]

# Bump when the sandbox or the classification changes in a way that can change an outcome: the
# outcome cache is keyed by it, so old entries stop matching.
RUNNER_VERSION = "prism-3"

# How the harness invokes pytest on a suite (in the fork server's child, and in bench/harness.py's
# naive baseline so that both run the same thing); see pytest_args.
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider")
TRACEBACK_STYLES = ("auto", "long", "short", "line", "native", "no")


@dataclass(frozen=True)
class Limits:
    """Per-execution limits."""

    wall_s: float = 60.0  # wall-clock timeout, kills the whole process group / PID namespace
    cpu_s: int = 60
    memory_mb: int = 1024  # RLIMIT_AS
    fsize_mb: int = 64
    nofile: int = 256
    nproc: int = 64
    output_bytes: int = 65536  # stdout+stderr kept (tail), beyond that truncated
    # pytest's --tb style. "auto" (pytest's default) where an agent or a reviewer reads the output;
    # the panel evaluation, whose outputs nobody reads, uses "line": one location and message per
    # failure instead of source excerpts whose rendering costs ~3 ms per failing test.
    traceback: str = "auto"

    def __post_init__(self) -> None:
        if self.traceback not in TRACEBACK_STYLES:
            raise ValueError(f"Limits.traceback: {self.traceback!r} is not one of {', '.join(TRACEBACK_STYLES)}")

    def as_dict(self) -> dict:
        return asdict(self)


def pytest_args(limits: Limits) -> list[str]:
    return [*PYTEST_ARGS, f"--tb={limits.traceback}"]


@dataclass(frozen=True)
class Outcome:
    status: Status
    reason: str | None
    tests_run: int | None
    duration_s: float
    output: str
    cached: bool = False


@dataclass(frozen=True)
class RawRun:
    """What the harness observed about one execution (the input of `classify`)."""

    entry: Literal["pytest", "script"]
    exit_code: int | None = None  # None when the process died by a signal or never ran
    signal: int | None = None
    timed_out: bool = False
    wall_s: float = 0.0
    duration_s: float = 0.0
    report_lines: tuple[str, ...] = ()  # lines written by the reporting plugin into our pipe
    output: str = ""
    fault: str | None = None  # a harness fault or a refusal found before running (e.g. no suite)
    pre_error: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Counts:
    executed: int = 0
    failed: int = 0  # failed calls plus setup/teardown errors of executed tests
    skipped: int = 0
    collect_errors: int = 0
    resource: str | None = None


_REPORT_KEYS = {"passed", "failed", "errors", "skipped", "xfailed", "xpassed", "collect_errors",
                "exitstatus", "resource"}


def parse_reports(lines: tuple[str, ...]) -> Counts | None:
    """Sum the plugin's per-session lines; None when there are none; ValueError when malformed."""
    if not lines:
        return None
    executed = failed = skipped = collect = 0
    resource = None
    for line in lines:
        data = json.loads(line)
        if not isinstance(data, dict) or set(data) != _REPORT_KEYS:
            raise ValueError("unexpected report keys")
        nums = [data[k] for k in _REPORT_KEYS - {"resource", "exitstatus"}]
        if not all(isinstance(n, int) and n >= 0 for n in nums):
            raise ValueError("report counts must be non-negative integers")
        executed += data["passed"] + data["failed"] + data["xfailed"] + data["xpassed"]
        failed += data["failed"] + data["errors"]
        skipped += data["skipped"]
        collect += data["collect_errors"]
        resource = resource or data["resource"]
    return Counts(executed, failed, skipped, collect, resource)


# Used only when the entry script ran something that does not load our plugin (e.g. unittest):
# the terminal summaries of pytest and unittest are parsed from the captured output.
_PYTEST_SUMMARY = re.compile(r"=+ (.*?) in [\d.]+s")
_PYTEST_PART = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", re.M)


def parse_summary(output: str) -> Counts | None:
    summaries = _PYTEST_SUMMARY.findall(output)
    parts = _PYTEST_PART.findall(summaries[-1]) if summaries else []
    if parts:
        n = {kind.rstrip("s") if kind.startswith("error") else kind: int(v) for v, kind in parts}
        executed = n.get("passed", 0) + n.get("failed", 0) + n.get("xfailed", 0) + n.get("xpassed", 0)
        return Counts(executed, n.get("failed", 0) + n.get("error", 0), n.get("skipped", 0))
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        bad = _UNITTEST_FAILED.findall(output)
        failed = sum(int(a or 0) + int(b or 0) for a, b in bad[-1:])
        return Counts(int(ran[-1]), failed)
    return None


_PYTEST_EXITS = {2: "interrupted or collection errors", 3: "pytest internal error",
                 4: "pytest usage error", 5: "no tests collected"}


def _signal_reason(signum: int) -> str:
    if signum == signal.SIGXCPU:
        return "resource limit: cpu time"
    if signum == signal.SIGXFSZ:
        return "resource limit: file size"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = str(signum)
    return f"killed by signal {name}"


def classify(raw: RawRun) -> tuple[Status, str | None, int | None]:
    """(status, reason, tests_run) of one observed execution."""
    if raw.pre_error:
        return "error", raw.pre_error, None
    if raw.fault:
        return "error", f"harness fault: {raw.fault}", None
    if raw.timed_out:
        return "error", f"timeout after {raw.wall_s:g}s", None
    try:
        # In-process pytest is one session: exactly one line. An entry script may run several.
        if raw.entry == "pytest" and len(raw.report_lines) > 1:
            raise ValueError("more than one report from one pytest session")
        counts = parse_reports(raw.report_lines)
    except (ValueError, TypeError, KeyError):
        return "error", "result channel corrupted", None
    if counts is None and raw.entry == "script":
        counts = parse_summary(raw.output)
    tests_run = counts.executed if counts else None
    if counts and counts.resource:
        return "error", f"resource limit: {counts.resource}", tests_run
    if raw.signal is not None:
        return "error", _signal_reason(raw.signal), tests_run
    code = raw.exit_code
    if code is None:
        return "error", "harness fault: no exit status", tests_run
    if counts is None:
        why = "no test result reported" if code == 0 else f"exit code {code} and no test result reported"
        return "error", why, None
    if code == 0:
        if counts.executed == 0:
            extra = " (all skipped)" if counts.skipped else ""
            return "error", f"no tests ran{extra}", 0
        if counts.failed:
            return "error", "exit code 0 despite failing tests", tests_run
        return "pass", None, tests_run
    if raw.entry == "pytest" and code in _PYTEST_EXITS:
        why = "collection error" if code == 2 and counts.collect_errors else _PYTEST_EXITS[code]
        return "error", why, tests_run
    if raw.entry == "script" and code in (126, 127):
        return "error", "entry script could not run", tests_run
    if counts.executed == 0:
        return "error", f"exit code {code} and no tests ran", 0
    if counts.failed == 0:
        return "error", f"exit code {code} without failing tests", tests_run
    if raw.entry == "pytest" and code != 1:
        return "error", f"unexpected pytest exit code {code}", tests_run
    return "fail", f"{counts.failed} failing test(s)", tests_run

"""Limits, outcomes, and how a raw run is classified as pass / fail / error (docs/design.md §4).

The seed's rule: "the harness recognizes errors such as a missing entry script or a timeout and
otherwise uses the test runner's exit status". So:

- error = a missing or empty entry (no suite, a missing or unrunnable `run_tests.sh`, pytest's
  "no tests collected"), the harness's wall clock, a resource limit the harness observed (the
  job's cgroup counted an OOM kill or a refused fork, a job tmpfs was full, SIGXCPU / SIGXFSZ),
  or a fault of the harness itself;
- otherwise the exit status of the process the harness started: 0 = pass, anything else = fail
  (a collection error caused by the program, e.g. an ImportError because an invalid program
  lacks a function, is a rejection like any failing test). The finer reason is kept.

Nothing the test process can write takes part in the verdict: no report pipe, no file. Test counts
parsed from the captured output are diagnostics only (`Outcome.tests_run`, labelled so where
shown); a suite can print anything.
"""

from __future__ import annotations

import re
import signal
from dataclasses import asdict, dataclass
from typing import Literal

Status = Literal["pass", "fail", "error"]

# Bump when the sandbox or the classification changes in a way that can change an outcome: the
# outcome cache is keyed by it, so old entries stop matching.
RUNNER_VERSION = "prism-4"  # 4: verdict from the exit status only; cgroups

# How the harness invokes pytest on a suite (in the fork server's child, and in bench/harness.py's
# naive baseline so that both run the same thing); see pytest_args.
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider")
TRACEBACK_STYLES = ("auto", "long", "short", "line", "native", "no")


@dataclass(frozen=True)
class Limits:
    """Per-execution limits."""

    wall_s: float = 60.0  # wall-clock timeout, kills the whole process group / PID namespace
    cpu_s: int = 60
    memory_mb: int = 1024  # the job's cgroup (all its processes and tmpfs pages); else RLIMIT_AS
    fsize_mb: int = 64
    nofile: int = 256
    nproc: int = 64  # tasks (threads count) in the job's cgroup; else RLIMIT_NPROC
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
    tests_run: int | None  # DIAGNOSTIC: parsed from the output the suite printed; never a verdict
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
    output: str = ""
    fault: str | None = None  # a fault of the harness itself
    pre_error: str | None = None  # a refusal found before running (e.g. no suite)
    resource: str | None = None  # a limit the harness saw exceeded (cgroup counters, full tmpfs)


@dataclass(frozen=True)
class Counts:
    """Test counts read from a run's output: a diagnostic, never part of a verdict."""

    executed: int = 0
    failed: int = 0
    skipped: int = 0


# The terminal summaries of pytest and unittest, parsed from the captured output.
_PYTEST_SUMMARY = re.compile(r"=+ (.*?) in [\d.]+s")
_PYTEST_PART = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", re.M)
_PYTEST_QUIET = re.compile(r"^((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?)(?:, )?)+) in [\d.]+s", re.M)


def parse_summary(output: str) -> Counts | None:
    summaries = _PYTEST_SUMMARY.findall(output) or _PYTEST_QUIET.findall(output)
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


# pytest's exit codes other than 0 and 5; all of them are the suite's verdict (fail).
_PYTEST_FAILS = {1: "tests failed", 2: "collection error or interrupted", 3: "pytest internal error",
                 4: "pytest usage error"}
NO_TESTS_EXIT = 5  # pytest: no tests collected (an empty entry)
_RESOURCE_SIGNALS: dict[int, str] = {signal.SIGXCPU: "cpu time", signal.SIGXFSZ: "file size"}


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def classify(raw: RawRun) -> tuple[Status, str | None, int | None]:
    """(status, reason, tests_run) of one observed execution; tests_run is a diagnostic."""
    counts = parse_summary(raw.output) if raw.output else None
    tests_run = counts.executed if counts else None
    if raw.pre_error:
        return "error", raw.pre_error, None
    if raw.fault:
        return "error", f"harness fault: {raw.fault}", None
    if raw.timed_out:
        return "error", f"timeout after {raw.wall_s:g}s", tests_run
    if raw.resource:
        return "error", f"resource limit: {raw.resource}", tests_run
    if raw.signal is not None:
        if raw.signal in _RESOURCE_SIGNALS:
            return "error", f"resource limit: {_RESOURCE_SIGNALS[raw.signal]}", tests_run
        return "fail", f"killed by signal {_signal_name(raw.signal)}", tests_run
    code = raw.exit_code
    if code is None:
        return "error", "harness fault: no exit status", None
    if code == 0:
        return "pass", None, tests_run
    if code == NO_TESTS_EXIT:
        return "error", "no tests collected (exit code 5)", tests_run
    if raw.entry == "script" and code in (126, 127):
        return "error", f"entry script could not run (exit code {code})", tests_run
    why = _PYTEST_FAILS.get(code) if raw.entry == "pytest" else None
    return "fail", f"{why} (exit code {code})" if why else f"exit code {code}", tests_run


def outcome_of(raw: RawRun) -> Outcome:
    """The Outcome of one observed execution (classified by the rules above)."""
    status, reason, tests_run = classify(raw)
    return Outcome(status=status, reason=reason, tests_run=tests_run, duration_s=round(raw.duration_s, 4),
                   output=raw.output)

"""CI requires zero unexpected skips: a pytest plugin (loaded by tests/conftest.py).

A skip hides a test that did not run, so in CI (the environment variable CI is set, as `.ci/run`
runs with CI=true) every skip must be on the allowlist `tests/allowed_skips.toml`: a node-id
pattern and the reason the skip is expected there. Any other skip -- of a test, or of a whole
module at collection -- fails the session after the summary names it. Outside CI skips only count.

The allowlist file is the ini option `allowed_skips` (a path relative to the rootdir).
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

DEFAULT_ALLOWLIST = "tests/allowed_skips.toml"


@dataclass(frozen=True)
class AllowedSkip:
    test: str  # fnmatch pattern over the node id, e.g. "tests/llm/test_local_model.py::*"
    reason: str  # why the skip is expected in CI


def in_ci(environ: dict[str, str] | None = None) -> bool:
    """CI=true, CI=1, ... (any value but empty, 0, false or no)."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def load_allowlist(path: Path) -> list[AllowedSkip]:
    """The entries of an allowlist file ([[skip]] tables with `test` and `reason`); a missing file
    allows nothing. A malformed file is a usage error naming the file and the entry."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise pytest.UsageError(f"{path}: not a TOML file ({err})") from None
    entries = data.get("skip", [])
    if not isinstance(entries, list):
        raise pytest.UsageError(f"{path}: `skip` must be an array of tables ([[skip]])")
    out = []
    for i, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("test"), str) and entry["test"].strip()
                and isinstance(entry.get("reason"), str) and entry["reason"].strip()):
            raise pytest.UsageError(f"{path}: skip entry {i + 1} needs a non-empty `test` pattern and `reason`")
        out.append(AllowedSkip(entry["test"].strip(), entry["reason"].strip()))
    return out


def allowed(nodeid: str, allowlist: list[AllowedSkip]) -> AllowedSkip | None:
    return next((a for a in allowlist if fnmatch.fnmatchcase(nodeid, a.test)), None)


class SkipPolicy:
    """Collects skips during the session; in CI, fails it when one is not on the allowlist."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.path = config.rootpath / (config.getini("allowed_skips") or DEFAULT_ALLOWLIST)
        self.allowlist = load_allowlist(self.path)
        self.unexpected: list[tuple[str, str]] = []  # (node id, skip reason)

    def _note(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):  # an xfail is reported as a skip too
            return
        if allowed(report.nodeid, self.allowlist) is None:
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.unexpected.append((report.nodeid, reason.removeprefix("Skipped: ")))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._note(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._note(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unexpected and in_ci() and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not (self.unexpected and in_ci()):
            return
        terminalreporter.section("unexpected skips (CI requires none)", red=True)
        for nodeid, reason in self.unexpected:
            terminalreporter.line(f"{nodeid}: {reason}")
        terminalreporter.line(f"{len(self.unexpected)} skip(s) not on the allowlist {self.path}: make the "
                              "test run here, or add it there with the reason it cannot")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("allowed_skips", f"allowlist of expected skips in CI (default {DEFAULT_ALLOWLIST})",
                  default=DEFAULT_ALLOWLIST)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipPolicy(config), "skip-policy")

"""Pytest plugin that reports test counts to the harness through a pipe the harness owns.

Standalone on purpose (no testhelix imports): the fork server loads it in-process, and for suites
with their own `run_tests.sh` the file is copied into the sandbox and loaded with
`PYTEST_PLUGINS=prism_report`, the pipe's descriptor number given in `PRISM_REPORT_FD`.

One JSON line per pytest session, written at session end by the process that started the session
(a test that forks must not make its children report too). Executed tests are those whose call
phase ran; skipped tests are not executed. Exhausted resources (memory, processes, open files,
file size) show up inside the test process as exceptions, not signals, so the plugin notes them:
the harness classifies such a run as a resource-limit error rather than an ordinary failure.
"""

from __future__ import annotations

import errno
import json
import os

import pytest

_RESOURCE_ERRNOS = {errno.EAGAIN: "processes", errno.EMFILE: "open files", errno.ENFILE: "open files",
                    errno.EFBIG: "file size", errno.ENOMEM: "memory"}


def resource_of(exc: BaseException) -> str | None:
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
        return _RESOURCE_ERRNOS[exc.errno]
    return None


class PrismReport:
    def __init__(self, fd: int):
        self.fd = fd
        self.pid = os.getpid()
        self.counts = dict(passed=0, failed=0, errors=0, skipped=0, xfailed=0, xpassed=0, collect_errors=0)
        self.resource: str | None = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is not None and self.resource is None:
            self.resource = resource_of(call.excinfo.value)
        yield

    def pytest_collectreport(self, report):
        if report.failed:
            self.counts["collect_errors"] += 1

    def pytest_runtest_logreport(self, report):
        c = self.counts
        xfail = hasattr(report, "wasxfail")
        if report.when == "call":
            if xfail:
                c["xfailed" if report.skipped else "xpassed"] += 1
            elif report.passed:
                c["passed"] += 1
            elif report.failed:
                c["failed"] += 1
            else:
                c["skipped"] += 1
        elif report.failed:  # setup or teardown error
            c["errors"] += 1
        elif report.skipped and report.when == "setup":
            c["skipped"] += 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if os.getpid() != self.pid:
            return
        line = json.dumps({**self.counts, "exitstatus": int(exitstatus), "resource": self.resource})
        try:
            os.write(self.fd, (line + "\n").encode())
        except OSError:
            pass


def pytest_configure(config):
    # Loaded by name (PYTEST_PLUGINS) in the entry-script path: register the reporter once.
    fd = os.environ.get("PRISM_REPORT_FD")
    if fd and fd.isdigit() and not config.pluginmanager.has_plugin("prism-report"):
        config.pluginmanager.register(PrismReport(int(fd)), "prism-report")

"""A fork server that does not start: a longer wait under load, one retry, then a harness fault for
the job (an outcome, never cached, never a traceback)."""

from __future__ import annotations

import os

from testhelix.execution import executor as ex_mod
from testhelix.execution.outcome import Limits
from testhelix.execution.outcome_cache import cacheable


class _Refusing(ex_mod._ServerHandle):
    def __init__(self):
        self.proc, self.index, self.tries = None, 0, 0

    def start(self) -> None:
        self.tries += 1
        raise RuntimeError(f"fork server {self.index} did not start: test")


def test_start_timeout_scales_with_load_within_a_bound(monkeypatch):
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert ex_mod.start_timeout() == ex_mod.SERVER_START_TIMEOUT_S
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0 * cores, 0.0, 0.0))
    assert ex_mod.start_timeout() == 4 * ex_mod.SERVER_START_TIMEOUT_S
    monkeypatch.setattr(os, "getloadavg", lambda: (1000.0 * cores, 0.0, 0.0))
    assert ex_mod.start_timeout() == ex_mod.SERVER_START_TIMEOUT_MAX_S


def test_a_server_that_cannot_start_is_a_recorded_harness_fault():
    handle = _Refusing()
    reply = handle.call({"suite": "x", "program": "y"}, timeout=1.0)
    assert handle.tries == 2  # tried once more
    outcome = ex_mod.outcome_from_reply(reply, Limits(), 0.0)
    assert outcome.status == "error" and (outcome.reason or "").startswith("harness fault: fork server 0 did not start")
    assert not cacheable(outcome)  # a resumed run redoes it

"""The supervisor's side of a keeper: a keeper forked ahead of its job, and watching a started job.

See forkserver.py for the whole picture. A `WaitingKeeper` is a keeper forked from the zygote and
moved into its job cgroup before its job is known; `watch_job` reads a started job's output and
the keeper's status until the job is over, under the job's wall clock.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from testhelix.execution.cgroup import JobCgroup
from testhelix.execution.outcome import Limits

DRAIN_GRACE_S = 2.0
OVER_LIMIT_POLL_S = 0.1
STATUS_BYTES = 16  # what a keeper reports: the test's pid (4), then exit status, set-up done, full tmpfs (3 x 4)


def watch_job(out_r: int, st_r: int, pidfd: int, deadline: float, cap: int,
              over_limit: Callable[[], bool] | None = None) -> tuple[bytearray, int, bool, bool, bytes]:
    """Read output (keeping the last `cap` bytes) and the keeper's status until the job is over:
    its output closed, and either the keeper exited or it reported the test's exit (all of
    STATUS_BYTES) -- its exit, which tears down the job's namespaces, need not be waited for.
    `over_limit` (asked every OVER_LIMIT_POLL_S) ends a job that holds more than the kernel kills
    it for (cgroup.JobCgroup.over_limit)."""
    out, total, status = bytearray(), 0, b""
    os.set_blocking(out_r, False)
    os.set_blocking(st_r, False)
    timed_out, exited, out_open, st_open = False, False, True, True
    grace_end = None
    next_check = time.monotonic() + OVER_LIMIT_POLL_S
    while out_open or not (exited or len(status) >= STATUS_BYTES):
        now = time.monotonic()
        end = grace_end if grace_end is not None else deadline
        if now >= end:
            if grace_end is not None:
                break
            timed_out = True
            kill_pidfd(pidfd)
            grace_end = now + DRAIN_GRACE_S
            continue
        if over_limit is not None and grace_end is None and now >= next_check:
            next_check = now + OVER_LIMIT_POLL_S
            if over_limit():
                kill_pidfd(pidfd)
                grace_end = now + DRAIN_GRACE_S
        wait = min(end, next_check) - now if over_limit is not None and grace_end is None else end - now
        watch = ([out_r] if out_open else []) + ([st_r] if st_open else []) + ([] if exited else [pidfd])
        for fd in select.select(watch, [], [], max(0.0, wait))[0]:
            if fd == pidfd:
                exited = True
                if grace_end is None:
                    grace_end = min(deadline, time.monotonic() + DRAIN_GRACE_S)
                continue
            try:
                chunk = os.read(fd, 65536 if fd == out_r else STATUS_BYTES - len(status))
            except BlockingIOError:
                continue
            if fd == st_r:
                status += chunk
                st_open = bool(chunk) and len(status) < STATUS_BYTES
                continue
            if not chunk:
                out_open = False
                continue
            total += len(chunk)
            out += chunk
            if len(out) > cap:
                del out[: len(out) - cap]
    return out, total, timed_out, exited, status


@dataclass
class WaitingKeeper:
    """A keeper forked from the zygote, in its own job cgroup, waiting for its spec."""

    pidfd: int
    spec_w: int  # the spec goes here; the keeper reads it to the end
    out_r: int  # the test process's stdout and stderr
    st_r: int  # the keeper's status reports
    cg: JobCgroup | None
    cgroup_limits: tuple[int, int]  # what its cgroup was configured for


def cgroup_limits(limits: Limits) -> tuple[int, int]:
    return limits.memory_mb, limits.nproc


def ended(pidfd: int) -> bool:
    return bool(select.select([pidfd], [], [], 0)[0])


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def kill_pidfd(pidfd: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except (ProcessLookupError, OSError):
        pass

"""Forking a child for one job in a process that stays warm, and the warm pytest worker built on it.

A warm process imports what every job needs once and forks one child per job, which saves an
interpreter start and the imports of every job. The child starts a session of its own (so a
timeout kills everything it spawned), silences its output and runs the job; the parent waits for
it with a deadline and then kills the child's session, taking any leftover with it.

`run_forked` is that step. `python forkrun.py` (started by path, so it needs nothing but the
standard library and pytest) is the warm pytest worker of the pack tools (testhelix/pack/runner.py):
it reads one JSON job per line from stdin ({"cwd", "args", "timeout"}), runs pytest on it in a
forked child and answers {"code": EXIT_CODE or null on timeout}. The program and test modules are
imported only in the child, so nothing leaks from one job to the next.

The sandboxed fork servers (testhelix/execution/zygote.py, gtdd/isolation/zygote.py) fork inside
namespaces and cgroups with their own protocols; they do not use this module.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable

CHILD_FAILED = 70   # the exit code of a child whose job raised


def run_forked(job: Callable[[], int], timeout: float) -> int | None:
    """Run `job` in a forked child in its own session with stdin, stdout and stderr on /dev/null;
    its exit code, or None when it ran out of `timeout` seconds."""
    pid = os.fork()
    if pid == 0:
        code = CHILD_FAILED
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            code = int(job())
        finally:
            os._exit(code)
    exit_code = wait_until(pid, time.monotonic() + timeout)
    kill_session(pid)    # leftovers of a finished job, or the whole of a timed-out one
    if exit_code is None:
        os.waitpid(pid, 0)
    return exit_code


def wait_until(pid: int, deadline: float) -> int | None:
    """The exit code of child `pid`, or None if it is still running at `deadline` (monotonic)."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists (another user's counts: it cannot be signalled, but it is there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_session(pid: int) -> None:
    """SIGKILL the process group led by `pid` (a child that called setsid); gone already is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pytest_job(cwd: str, args: list[str]) -> Callable[[], int]:
    def job() -> int:
        import pytest

        os.chdir(cwd)
        os.environ["PYTHONPATH"] = cwd
        sys.path.insert(0, cwd)
        return int(pytest.main(args))
    return job


def serve_pytest() -> None:
    """The warm pytest worker's loop (see the module docstring)."""
    import pytest  # noqa: F401  (imported once here, inherited by every child)

    for line in sys.stdin:
        job = json.loads(line)
        code = run_forked(_pytest_job(job["cwd"], job["args"]), job["timeout"])
        sys.stdout.write(json.dumps({"code": code}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.path[0] = ""   # started by path: this folder's modules must not shadow a program's imports
    serve_pytest()

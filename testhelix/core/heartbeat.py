"""A plain line at a bounded rate during a long phase: `heartbeat(10, beat)` calls `beat(elapsed_s)`
every 10 s from a helper thread until the block ends (never when the phase is shorter). Long phases
that print only at their start and end (pack unpacking, a search's or gate's evaluations without a
terminal) use it so that logs never go quiet for minutes.

The command clock lives here too: `command_started()` is when the running command began (the
process's start for its first command), so that every duration a command reports and every
`elapsed` it shows covers its start-up (imports, unpacking a pack) as the user's wall clock does."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def heartbeat(interval_s: float, beat: Callable[[float], None]) -> Iterator[None]:
    stop = threading.Event()
    started = time.monotonic()

    def run() -> None:
        while not stop.wait(interval_s):
            beat(time.monotonic() - started)

    thread = threading.Thread(target=run, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


_IMPORTED_AT = time.monotonic()


_commands_begun = 0
_later_command_at: float | None = None


def command_begins() -> None:
    """Called by every command-line entry (plumbing.entry_point): the first command of a process is
    timed from the process's start; a later one in the same process (tests, scripts calling `main`)
    from this call."""
    global _commands_begun, _later_command_at
    _commands_begun += 1
    if _commands_begun > 1:
        _later_command_at = time.monotonic()


def command_started() -> float:
    """The `time.monotonic()` reading at which this command started: for the process's first command
    the process's start time from /proc/self/stat (clock ticks since boot) against the boot-time
    clock, so the interpreter's start-up and the imports count; where that cannot be read, when this
    module was imported."""
    if _later_command_at is not None:
        return _later_command_at
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED_AT
    return min(_IMPORTED_AT, time.monotonic() - max(0.0, age))


def command_elapsed() -> float:
    """Seconds since the process started (see command_started)."""
    return time.monotonic() - command_started()

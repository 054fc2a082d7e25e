"""A plain line at a bounded rate during a long phase: `heartbeat(10, beat)` calls `beat(elapsed_s)`
every 10 s from a helper thread until the block ends (never when the phase is shorter). Long phases
that print only at their start and end (pack unpacking, a search's or gate's evaluations without a
terminal) use it so that logs never go quiet for minutes."""

from __future__ import annotations

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

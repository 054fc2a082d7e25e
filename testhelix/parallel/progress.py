"""A live progress display for long commands: tasks done / running / incomplete, model calls,
tokens and cost so far, elapsed time and an ETA. Off when the output is not a terminal (or --json).

Every update comes from the driver thread or, for model calls, through `call(row)` which is safe
from any thread; the display redraws itself a few times a second.
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class TaskProgress:
    def __init__(self, description: str, total: int | None = None, enabled: bool = True,
                 console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self._lock = threading.Lock()
        self.done = self.running = self.incomplete = self.calls = self.tokens = self.queued = 0
        self.cost = 0.0
        self.unpriced = 0
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TextColumn("ETA"),
                                  TimeRemainingColumn(), console=self.console, disable=not self.enabled,
                                  transient=False)
        self._job = self._progress.add_task(description, total=total, stats="")

    def __enter__(self) -> TaskProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._refresh()
        self._progress.stop()

    # --- events ---------------------------------------------------------------------------
    def add_total(self, n: int) -> None:
        """More tasks to do (a search learns its work batch by batch; a run knows it up front and
        passes `total` instead, so this adds only what is beyond it)."""
        with self._lock:
            self.queued += n
            task = self._progress.tasks[0]
            if task.total is None or self.queued + task.completed > task.total:
                self._progress.update(self._job, total=self.queued + task.completed)

    def skipped(self, n: int = 1) -> None:
        self._progress.advance(self._job, n)

    def started(self, *_ignored) -> None:
        with self._lock:
            self.running += 1
        self._refresh()

    def finished(self, result: dict | None = None) -> None:
        with self._lock:
            self.running = max(0, self.running - 1)
            self.queued = max(0, self.queued - 1)
            self.done += 1
            if result and result.get("incomplete"):
                self.incomplete += 1
        self._progress.advance(self._job, 1)
        self._refresh()

    def call(self, row: dict) -> None:
        """One model-call ledger row (thread-safe)."""
        with self._lock:
            self.calls += 1
            self.tokens += (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
            if row.get("cost_usd") is None:
                self.unpriced += 1
            else:
                self.cost += float(row["cost_usd"])
        self._refresh()

    def stats(self) -> str:
        cost = f"${self.cost:.2f}" + (f" (+{self.unpriced} calls unpriced)" if self.unpriced else "")
        return (f"running {self.running} · incomplete {self.incomplete} · calls {self.calls} · "
                f"tokens {self.tokens:,} · cost {cost}")

    def _refresh(self) -> None:
        if self.enabled:
            with self._lock:
                text = self.stats()
            self._progress.update(self._job, stats=text)

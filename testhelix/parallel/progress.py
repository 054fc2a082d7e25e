"""Progress of a long phase (a search's evaluations, a run, a gate): tasks done of the total, rate,
ETA, cost, tasks running and incomplete, model calls, tokens, elapsed time.

- On a terminal: one live line that fits the terminal's width. Fields are added in order of
  importance -- count, ETA, rate, cost, incomplete, elapsed, running, calls, tokens, the phase's
  name, a bar -- each in its long form, else its short form, else left out; the count is always
  there. So at 80 columns the line still reads `12/40 · ETA 3:20 · 2.1/min · cost unknown`.
- Not on a terminal (CI, logs): a plain line when the phase starts and then every `interval`
  seconds (10 by default) while it runs, and one when it ends; never more often. It starts with the
  phase's name and fits the console's width (80 columns in a log unless $COLUMNS says otherwise),
  choosing fields by the same order of importance, so a log reads line by line.
- Cost: the sum of priced calls; as soon as one call is unpriced the cost is shown as unknown,
  never as `$0.00` (with no call yet it is `—`); calls of a local model (nothing billed) show as
  `cost local`.
- One set of labels: a short form drops detail, never its label (`elapsed 1:00`, `running 1`).
- Time: `elapsed` counts from the start of the process (`command_started`), so it covers start-up
  (imports, unpacking a pack) as every duration a command reports does; the rate and the ETA use the
  phase's own time. Where the total grows while work is done (a search learns its work batch by
  batch) the ETA field says `total grows` instead of an ETA that would only hold for the batch.
  For the same total the ETA never moves later until it has run out: a wobbling rate does not
  push the finish back and forth.

Off entirely with `enabled=False` (--json). Every update comes from the driver thread or, for model
calls, through `call(row)`, which is safe from any thread.
"""

from __future__ import annotations

import contextlib
import threading
import time

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.text import Text

from testhelix.core.heartbeat import command_started, heartbeat
from testhelix.helix.results import Incomplete, TaskResult

SEP = " · "
def clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class TaskProgress:
    def __init__(self, description: str, total: int | None = None, enabled: bool = True,
                 console: Console | None = None, interval: float = 10.0):
        self.description = description
        self.console = console or Console(stderr=True)
        self.live = enabled and self.console.is_terminal
        self.plain = enabled and not self.console.is_terminal
        self.enabled = self.live
        self.interval = interval
        self._lock = threading.Lock()
        self.done = self.running = self.incomplete = self.calls = self.tokens = self.queued = self.skips = 0
        self.total = total
        self.cost = 0.0
        self.unpriced = self.local_calls = 0
        self.total_grows = False
        self._finish_by: tuple[int | None, float] | None = None   # (total, predicted end) behind the ETA shown
        self.started_at = time.monotonic()
        self.command_started_at = command_started()
        self._beat: contextlib.AbstractContextManager | None = None
        self._live = Live(_Line(self), console=self.console, refresh_per_second=4, transient=False) if self.live else None

    def __enter__(self) -> TaskProgress:
        if self._live is not None:
            self._live.start()
        elif self.plain:
            self._print_plain()
            self._beat = heartbeat(self.interval, lambda _elapsed: self._print_plain())
            self._beat.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
        elif self._beat is not None:
            self._beat.__exit__(None, None, None)
            self._print_plain()

    def _print_plain(self) -> None:
        self.console.print(self.plain_line(), markup=False, highlight=False, soft_wrap=True)

    # --- events ---------------------------------------------------------------------------
    def add_total(self, n: int) -> None:
        """More tasks to do (a search learns its work batch by batch; a run knows it up front and
        passes `total` instead, so this adds only what is beyond it)."""
        with self._lock:
            self.queued += n
            completed = self.done + self.skips
            if self.total is None or self.queued + completed > self.total:
                # a total that grows after work was done makes any ETA hold for this batch only
                self.total_grows = self.total_grows or (self.total is not None and completed > 0)
                self.total = self.queued + completed

    def skipped(self, n: int = 1) -> None:
        with self._lock:
            self.skips += n

    def started(self, *_ignored: object) -> None:
        with self._lock:
            self.running += 1

    def finished(self, result: TaskResult | None = None) -> None:
        with self._lock:
            self.running = max(0, self.running - 1)
            self.queued = max(0, self.queued - 1)
            self.done += 1
            if isinstance(result, Incomplete):
                self.incomplete += 1

    def call(self, row: dict) -> None:
        """One model-call ledger row (thread-safe)."""
        with self._lock:
            self.calls += 1
            self.tokens += (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
            if str(row.get("model") or "").startswith("local:") and not row.get("cost_usd"):
                self.local_calls += 1         # nothing billed: shown as local, never as $0.00
            elif row.get("cost_usd") is None:
                self.unpriced += 1
            else:
                self.cost += float(row["cost_usd"])

    # --- text -----------------------------------------------------------------------------
    def cost_text(self, short: bool = False) -> str:
        if self.unpriced:
            if short:
                return "cost unknown"
            priced = f"; ${self.cost:.2f} priced" if self.calls > self.unpriced + self.local_calls else ""
            return f"cost unknown ({self.unpriced} calls unpriced{priced})"
        if self.local_calls and self.calls == self.local_calls:
            return "cost local"
        return "cost —" if not self.calls else f"cost ${self.cost:.2f}"

    def fields(self, now: float | None = None) -> list[tuple[str, str, str]]:
        """(name, long form, short form) of every field, most important first."""
        with self._lock:
            now = now if now is not None else time.monotonic()
            elapsed = now - self.started_at                  # this phase: the rate and the ETA
            command = now - self.command_started_at          # the whole command: what `elapsed` shows
            count = self.done + self.skips
            per_min = 60 * self.done / elapsed if self.done and elapsed > 0 else None
            left = None if self.total is None else max(0, self.total - count)
            eta = None if left is None or not self.done else clock(self._steady_eta(now, left * elapsed / self.done))
            eta_text = "total grows" if self.total_grows and left else f"ETA {eta or '?'}"
            total = "?" if self.total is None else str(self.total)
            out = [("count", f"{count}/{total} tasks", f"{count}/{total}"),
                   ("eta", eta_text, eta_text),
                   ("rate", f"{per_min:.1f} tasks/min" if per_min is not None else "rate ?",
                    f"{per_min:.1f}/min" if per_min is not None else ""),
                   ("cost", self.cost_text(), self.cost_text(short=True))]
            if self.incomplete:
                out.append(("incomplete", f"incomplete {self.incomplete}", f"inc {self.incomplete}"))
            out += [("elapsed", f"elapsed {clock(command)}", f"elapsed {clock(command)}"),
                    ("running", f"running {self.running}", f"running {self.running}"),
                    ("calls", f"calls {self.calls:,}", f"{self.calls:,} calls"),
                    ("tokens", f"tokens {self.tokens:,}", f"{self.tokens:,} tok"),
                    ("description", self.description, self.description[:12])]
            return out

    def _steady_eta(self, now: float, estimate: float) -> float:
        """The ETA shown: never later than the one shown before for the same total, until that one
        has run out (a rate that wobbles does not move the finish back and forth; more work does)."""
        previous = self._finish_by
        if previous is None or previous[0] != self.total or now + estimate < previous[1] or now >= previous[1]:
            previous = self._finish_by = (self.total, now + estimate)
        return previous[1] - now

    @staticmethod
    def _fit(fields: list[tuple[str, str, str]], width: int) -> dict[str, str]:
        """Each field in its long form, else its short form, else left out, most important first,
        while the joined fields fit `width`; the count is always kept."""
        chosen: dict[str, str] = {}
        order = [name for name, _, _ in fields]
        for name, long, short in fields:
            for form in (long, short):
                if not form:
                    continue
                trial = {**chosen, name: form}
                if len(SEP.join(trial[n] for n in order if n in trial)) <= width or name == "count":
                    chosen = trial
                    break
        return chosen

    def line(self, width: int, now: float | None = None) -> str:
        """The live line for a terminal `width` columns wide (see the module docstring)."""
        chosen = self._fit(self.fields(now), width)
        display = ["description", "count", "running", "incomplete", "calls", "tokens", "cost", "rate", "elapsed", "eta"]
        text = SEP.join(chosen[n] for n in display if n in chosen)
        room = width - len(text) - 1
        if room >= 12 and self.total:
            size = min(30, room)
            filled = round(size * min(1.0, (self.done + self.skips) / self.total))
            text = f"{'━' * filled}{'╺' * (size > filled)}{'─' * max(0, size - filled - 1)} {text}"
        return text

    def plain_line(self, width: int | None = None) -> str:
        """The line printed without a terminal: the phase's name, then the fields that fit `width`
        (default: the console's width)."""
        prefix = f"{self.description}: "
        fields = [f for f in self.fields() if f[0] != "description"]
        chosen = self._fit(fields, (width or self.console.width) - len(prefix))
        return prefix + SEP.join(chosen[name] for name, _, _ in fields if name in chosen)

    def stats(self) -> str:
        """Every field but the name, long forms (what a test or a log reads)."""
        return SEP.join(long for name, long, _ in self.fields() if name != "description")


class _Line:
    """The live display's renderable: redrawn by rich a few times a second at the current width."""

    def __init__(self, progress: TaskProgress):
        self.progress = progress

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(self.progress.line(options.max_width), no_wrap=True, overflow="ellipsis")

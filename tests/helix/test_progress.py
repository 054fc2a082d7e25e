"""The progress display: counts from the driver and from worker threads; a line that fits 80 and
120 columns on a terminal; plain lines at a bounded rate without one."""

import io
import re
import threading
import time

import pytest
from rich.console import Console

from testhelix.helix.results import Incomplete, Usage
from testhelix.parallel.progress import TaskProgress


def test_counts_and_plain_lines_without_a_terminal():
    out = io.StringIO()
    with TaskProgress("x", total=4, console=Console(file=out, force_terminal=False), interval=3600) as p:
        assert not p.enabled
        p.skipped()
        for _ in range(3):
            p.started()
        rows = [{"input_tokens": 10, "output_tokens": 5, "cost_usd": None},
                {"input_tokens": 1, "output_tokens": 1, "cost_usd": 0.5}] * 50
        threads = [threading.Thread(target=lambda r=r: p.call(r)) for r in rows]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        p.finished(Incomplete(task_id="t", run_label="m/A", cause="server_error", error="HTTP 503",
                              usage=Usage(tokens=0, calls=1)))
        p.finished()
    assert (p.done, p.running, p.incomplete, p.calls, p.tokens, p.unpriced) == (2, 1, 1, 100, 850, 50)
    assert abs(p.cost - 25.0) < 1e-9 and "incomplete 1" in p.stats() and "50 calls unpriced" in p.stats()
    assert "$0.00" not in p.stats() and "cost unknown" in p.stats()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2                                  # one when the phase starts, one when it ends
    assert lines[0].startswith("x: 0/4 tasks") and "elapsed " in lines[0] and "3/4 tasks" in lines[1]
    assert "\x1b" not in out.getvalue()                     # plain text, no terminal codes


def test_plain_lines_come_at_most_every_interval():
    out = io.StringIO()
    with TaskProgress("search", console=Console(file=out, force_terminal=False), interval=0.2):
        time.sleep(0.5)
    n = len(out.getvalue().splitlines())
    assert 3 <= n <= 5     # start, about two ticks, end


def _busy(width: int, unpriced: bool) -> tuple[TaskProgress, io.StringIO]:
    out = io.StringIO()
    p = TaskProgress("task evaluations", total=40, console=Console(file=out, force_terminal=True, width=width))
    p.started_at -= 300
    for _ in range(12):
        p.finished()
    p.running = 3
    for _ in range(25):
        p.call({"input_tokens": 2000, "output_tokens": 100, "cost_usd": None if unpriced else 0.01})
    return p, out


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("unpriced", [True, False])
def test_the_live_line_keeps_count_eta_rate_and_cost_at_80_and_120_columns(width, unpriced):
    p, out = _busy(width, unpriced)
    with p:
        pass                                             # start and stop: rich renders the line once more
    rendered = [ln for ln in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).splitlines() if ln.strip()][-1]
    assert len(rendered.rstrip()) <= width and "…" not in rendered
    assert "12/40" in rendered and "ETA 11:40" in rendered and "2.4" in rendered
    if unpriced:
        assert "$" not in rendered and "cost unknown" in rendered
    else:
        assert "$0.25" in rendered


def test_live_display_on_a_terminal():
    out = io.StringIO()
    with TaskProgress("tasks", console=Console(file=out, force_terminal=True, width=160)) as p:
        p.add_total(2)
        p.started()
        p.call({"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.25})
        p.finished()
    text = out.getvalue()
    assert "tasks" in text and "calls 1" in text and "tokens 7" in text and "$0.25" in text
    assert "1/2 tasks" in text


def test_heartbeat_beats_at_its_interval_and_stops_with_the_phase():
    from testhelix.core.heartbeat import heartbeat

    beats: list[float] = []
    with heartbeat(0.1, beats.append):
        time.sleep(0.35)
    n = len(beats)
    time.sleep(0.25)
    assert 2 <= n <= 4 and len(beats) == n and beats == sorted(beats)


def test_plain_lines_fit_a_log_of_80_columns_and_keep_the_count():
    out = io.StringIO()
    with TaskProgress("task evaluations", total=80, console=Console(file=out, force_terminal=False, width=80),
                      interval=3600) as p:
        for _ in range(79):
            p.started()
            p.finished()
        for _ in range(4453):
            p.call({"input_tokens": 4000, "output_tokens": 170, "cost_usd": None})
    lines = out.getvalue().splitlines()
    assert lines and all(len(line) <= 80 for line in lines), lines
    assert lines[-1].startswith("task evaluations: 79/80 tasks · ETA ")


def test_elapsed_counts_from_the_process_start_and_a_growing_total_shows_no_eta():
    """`elapsed` covers the command's start-up (the process's start time, not the phase's); a total
    that grows after work was done shows `total grows`, never an ETA for the batch alone."""
    from testhelix.core.heartbeat import command_elapsed, command_started

    assert command_started() <= time.monotonic() - command_elapsed() + 0.5
    p = TaskProgress("search", console=Console(file=io.StringIO(), force_terminal=False))
    p.command_started_at -= 125                      # as if the command had started 2 minutes earlier
    p.add_total(2)
    p.finished()
    shown = re.search(r"elapsed (\d+):(\d\d)", p.stats())
    assert shown is not None
    minutes, seconds = shown.groups()
    assert "ETA " in p.stats() and 60 * int(minutes) + int(seconds) >= 125
    p.finished()
    p.add_total(2)                                   # the next batch: the total grew after work was done
    p.finished()
    assert "total grows" in p.stats() and "ETA" not in p.stats()


def test_labels_are_the_same_in_long_and_short_forms_and_a_local_model_costs_local():
    p = TaskProgress("x", total=3, console=Console(file=io.StringIO(), force_terminal=False))
    p.call({"model": "local:smollm2-135m", "input_tokens": 5, "output_tokens": 1, "cost_usd": 0.0})
    names = {name: (long, short) for name, long, short in p.fields()}
    assert names["cost"] == ("cost local", "cost local") and "$0.00" not in p.stats()
    from testhelix.view.html import cost  # the HTML usage table says the same
    assert cost(0.0, local=True) == "local (nothing billed)" and cost(None) == "unknown (no price)"
    for field in ("elapsed", "running", "eta"):
        assert names[field][1].split()[0] == names[field][0].split()[0]     # the same label word


def test_the_eta_never_moves_later_for_the_same_work():
    """A rate that drops for a while (the same total) does not push the ETA back; more work does."""
    p = TaskProgress("x", total=10, console=Console(file=io.StringIO(), force_terminal=False))
    start = p.started_at
    for _ in range(5):
        p.finished()
    etas = [p._steady_eta(start + t, 5 * t / 5) for t in (50, 60)]   # 5 of 10 done after 50 s, then 60 s
    assert etas[0] == 50 and etas[1] == 40                            # not 60: the finish stays where it was
    p.total = 20                                                       # more work: a new estimate
    assert p._steady_eta(start + 60, 15 * 60 / 5) == 180

"""The live progress display: counts from the driver and from worker threads; off without a terminal."""

import io
import threading

from rich.console import Console

from testhelix.parallel.progress import TaskProgress


def test_counts_and_no_output_without_a_terminal():
    out = io.StringIO()
    with TaskProgress("x", total=4, console=Console(file=out, force_terminal=False)) as p:
        assert not p.enabled
        p.skipped()
        for _ in range(3):
            p.started()
        rows = [{"input_tokens": 10, "output_tokens": 5, "cost_usd": None},
                {"input_tokens": 1, "output_tokens": 1, "cost_usd": 0.5}] * 50
        threads = [threading.Thread(target=lambda r=r: p.call(r)) for r in rows]
        [t.start() for t in threads]
        [t.join() for t in threads]
        p.finished({"incomplete": True})
        p.finished({})
    assert (p.done, p.running, p.incomplete, p.calls, p.tokens, p.unpriced) == (2, 1, 1, 100, 850, 50)
    assert abs(p.cost - 25.0) < 1e-9 and "incomplete 1" in p.stats() and "+50 calls unpriced" in p.stats()
    assert out.getvalue() == ""


def test_live_display_on_a_terminal():
    out = io.StringIO()
    with TaskProgress("tasks", console=Console(file=out, force_terminal=True, width=160)) as p:
        p.add_total(2)
        p.started()
        p.call({"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.25})
        p.finished({})
    text = out.getvalue()
    assert "tasks" in text and "calls 1" in text and "tokens 7" in text and "$0.25" in text

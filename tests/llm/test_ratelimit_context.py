"""The shared rate limiter, context-window clamping and the `testhelix serve` command itself."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from testhelix.agent.loop import context_limit
from testhelix.llm.ratelimit import RateLimiter, RateLimitWait, limiter_for
from testhelix.llm.registry import create_model, model_ref


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, s):
        with self.lock:
            self.now += s


def test_requests_per_minute_spread_calls_over_time():
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, clock=clock, sleep=clock.sleep)
    for _ in range(60):
        limiter.acquire()
    assert clock.now == 0                                     # a full bucket: a minute's worth at once
    limiter.acquire()
    assert clock.now == pytest.approx(1.0, abs=0.01)          # then one per second


def test_tokens_per_minute_and_the_deadline():
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, sleep=clock.sleep)
    limiter.acquire(tokens=900)
    with pytest.raises(RateLimitWait):
        limiter.acquire(tokens=900, deadline_s=10)            # needs ~48 s of refill
    limiter.acquire(tokens=900, deadline_s=60)
    assert clock.now == pytest.approx(48, abs=1)


def test_provider_headers_hold_every_caller_until_the_reset():
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6s"})
    limiter.acquire()
    assert clock.now == pytest.approx(6, abs=0.01)


def test_one_limiter_per_model_shared_by_threads():
    limiters = []
    threads = [threading.Thread(target=lambda: limiters.append(limiter_for("openai:test-shared", 1000, None)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(x) for x in limiters}) == 1 and limiters[0].rpm == 1000
    granted = []
    threads = [threading.Thread(target=lambda: granted.append(limiters[0].acquire())) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 50 and limiters[0]._requests == pytest.approx(950, abs=2)


def test_context_window_override_and_clamp_note():
    name = "openai-compatible:small@http://127.0.0.1:9/v1"
    assert create_model(model_ref(name)).context_window == 32768                  # the [openai-compatible] default
    assert create_model(model_ref(name), context_window=16000).context_window == 16000   # a run's --context-window
    assert create_model(model_ref(name)).context_window == 32768                  # nothing stays behind for the next
    assert context_limit(64000, 16000) == (16000, "strategy contextTokens 64000 exceeds the model's context "
                                                  "window 16000: clamped to 16000")
    assert context_limit(8000, 16000) == (8000, "")
    assert model_ref(name).label == "openai-compatible:small"             # run labels never carry the port


def test_serve_command_prints_where_it_listens_and_answers(tmp_path):
    import openai

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task"
    proc = subprocess.Popen([sys.executable, "-u", "-c", "from testhelix.commands.cli import main; main()",
                             "serve", "--model", "sim:weak", "--pack", str(fixture), "--fault", "429:retry_after=0.01"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first.startswith("serving sim:weak on http://127.0.0.1:")
        url = first.split(" on ")[1].split(" ")[0]
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=2)
        reply = client.chat.completions.create(model="sim", messages=[{"role": "user", "content": "hello"}],
                                               max_tokens=50)
        assert reply.model == "sim:weak" and reply.usage is not None and reply.usage.completion_tokens <= 50
        stats = __import__("json").loads(__import__("urllib.request").request.urlopen(f"{url}/_testhelix/stats").read())
        assert stats["faults"]["served"] == {"status": 1, "ok": 1}
    finally:
        proc.terminate()
        proc.wait(timeout=10)

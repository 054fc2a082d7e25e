"""`sim:NAME?latency=SECONDS`: same answers as without latency, each after a seeded, jittered delay."""

import time
from pathlib import Path

import pytest

from testhelix.core.errors import UserError
from testhelix.llm.base import CallTags, Message, ModelRequest
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.sim.latency import JITTER, LatencyModel
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


def req(text: str, pair: int = 0) -> ModelRequest:
    return ModelRequest((Message("system", "s"), Message("user", text)), (), 300,
                        tags=CallTags(role="review", pair=pair, round=1))


def test_names_and_bad_options():
    assert model_ref("sim:weak?latency=1.5").info.options.latency == 1.5   # parsed once, by the provider
    assert model_ref("sim:weak").info.options.latency == 0.0
    assert model_ref("sim:weak?latency=2").info.name == "sim:weak"
    for bad, word in (("sim:weak?latency=abc", "number"), ("sim:weak?latency=-1", "between"),
                      ("sim:weak?speed=1", "unknown option")):
        with pytest.raises(UserError, match=word):
            model_ref(bad)


def test_same_answers_with_a_deterministic_delay():
    task = load_task(SIM_TASK)
    plain = create_model(model_ref("sim:weak"), task=task, seed=7)
    slow = create_model(model_ref("sim:weak?latency=0.05"), task=task, seed=7)
    assert isinstance(slow, LatencyModel) and not isinstance(plain, LatencyModel)
    r = req("## Suite\ndef test_a():\n    assert 1\n## Execution symptoms\nnone")
    started = time.monotonic()
    answer = slow.complete(r)
    waited = time.monotonic() - started
    assert answer.text == plain.complete(r).text and answer.model == "sim:weak"
    delay = slow.delay_for(r)
    assert delay == slow.delay_for(r)                                   # seeded by the request
    assert 0.05 * (1 - JITTER) <= delay <= 0.05 * (1 + JITTER) and waited >= delay * 0.9
    assert len({round(slow.delay_for(req(f"x{i}", i)), 9) for i in range(8)}) > 1   # jitter varies by request

"""The shipped test doubles (testhelix/llm/testing.py): replies of every kind, recording, marks."""

from __future__ import annotations

import threading

import pytest

from testhelix.llm.base import CallTags, ChatModel, Completion, Message, ModelRequest, ModelUnavailable, ToolCall, Usage
from testhelix.llm.testing import FunctionModel, Reply, ScriptedModel, ScriptExhausted, tool_call

REQ = ModelRequest((Message("system", "s"), Message("user", "x" * 400)), (), 100)


def test_scripted_replies_of_every_kind_in_order():
    given = Completion("as given", (), "max_tokens", Usage(7, 3, cost_usd=0.5), "whatever", metadata={"k": 1})
    model = ScriptedModel(["hello", tool_call("submit", {"summary": "s"}),
                           Reply("two", (tool_call("read_file", {"path": "a"}), tool_call("submit"))),
                           given, ModelUnavailable("busy", status=503)])
    assert isinstance(model, ChatModel) and model.name == "test:scripted"
    text = model.complete(REQ)
    assert (text.text, text.tool_calls, text.stop_reason) == ("hello", (), "end_turn")
    one = model.complete(REQ)
    assert one.stop_reason == "tool_use" and one.tool_calls == (
        ToolCall("call-2", "submit", {"summary": "s"}, raw_arguments='{"summary": "s"}'),)
    two = model.complete(REQ)
    assert [c.id for c in two.tool_calls] == ["call-3-0", "call-3-1"] and two.text == "two"
    passed = model.complete(REQ)
    assert (passed.text, passed.stop_reason, passed.usage, passed.model) == ("as given", "max_tokens",
                                                                            Usage(7, 3, cost_usd=0.5), "whatever")
    assert passed.metadata["k"] == 1
    with pytest.raises(ModelUnavailable, match="busy"):
        model.complete(REQ)
    assert model.remaining == 0
    with pytest.raises(ScriptExhausted, match="call 6, but the script has 5 replies"):
        model.complete(REQ)
    assert model.calls == 6 and all(r is REQ for r in model.requests)


def test_every_completion_says_it_comes_from_a_test_double():
    scripted = ScriptedModel(["a", Completion("b", (), "end_turn", Usage(1, 1), "m")])
    function = FunctionModel(lambda request: "c")
    for answer, kind in [(scripted.complete(REQ), "ScriptedModel"), (scripted.complete(REQ), "ScriptedModel"),
                         (function.complete(REQ), "FunctionModel")]:
        assert answer.simulated and answer.metadata["test_double"] == kind
    assert function.name == "test:function"


def test_usage_is_estimated_unless_given():
    estimated = ScriptedModel(["y" * 40]).complete(REQ)
    assert estimated.usage == Usage(input_tokens=(1 + 400) // 4 + 1, output_tokens=11, cost_usd=None)
    capped = ScriptedModel(["y" * 4000]).complete(REQ)
    assert capped.usage.output_tokens == REQ.max_output_tokens
    fixed = ScriptedModel(["y", Reply("z", usage=Usage(3, 4))], usage=Usage(1, 2))
    assert fixed.complete(REQ).usage == Usage(1, 2) and fixed.complete(REQ).usage == Usage(3, 4)


def test_function_model_sees_the_whole_request_and_may_fail():
    seen = []

    def answer(request):
        seen.append((request.tags.role, request.max_output_tokens))
        return ModelUnavailable("down") if request.tags.role == "review" else f"{len(request.messages)} messages"

    model = FunctionModel(answer, name="test:echo", context_window=5000)
    assert model.complete(ModelRequest(REQ.messages, tags=CallTags(role="planning"))).text == "2 messages"
    with pytest.raises(ModelUnavailable):
        model.complete(ModelRequest(REQ.messages, tags=CallTags(role="review")))
    assert seen == [("planning", 4096), ("review", 4096)] and model.calls == 2
    with pytest.raises(TypeError, match="a reply must be"):
        # deliberately not a reply kind: the double's check is what is tested
        FunctionModel(lambda request: 42).complete(REQ)  # type: ignore[arg-type,return-value]


def test_calls_from_many_threads_are_all_recorded_and_each_reply_used_once():
    model = ScriptedModel([str(i) for i in range(200)])
    answers: list[str] = []
    lock = threading.Lock()

    def worker():
        for _ in range(50):
            text = model.complete(REQ).text
            with lock:
                answers.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert model.calls == 200 and sorted(answers, key=int) == [str(i) for i in range(200)]

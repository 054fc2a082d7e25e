"""`testhelix external`: a scripted agent command runs in each task's workspace under the time limit,
sees only the public task and the variables named with --env, and its suite is scored beside A–E."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.execution.sandbox import namespaces_available
from testhelix.helix.external import read_usage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
PACK = FIXTURES / "pack"

# A scripted "coding agent": reads the task, writes a test file for the clamp task only, reports
# its usage, and prints what it can see (its environment and the pack folder) to its log.
AGENT = f'''
import json, os, pathlib
task = pathlib.Path(os.environ["TESTHELIX_TASK_FILE"]).read_text()
suite = pathlib.Path(os.environ["TESTHELIX_SUITE_DIR"])
if "clamp" in task:
    (suite / "test_agent.py").write_text(
        "from clampy import clamp\\n\\ndef test_upper():\\n    assert clamp(10, 0, 5) == 5\\n\\n"
        "def test_lower():\\n    assert clamp(-1, 0, 5) == 0\\n")
    pathlib.Path(os.environ["TESTHELIX_USAGE_FILE"]).write_text(json.dumps(
        {{"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0125, "calls": 3}}))
pack = pathlib.Path({str(PACK)!r})
print("PROBE", json.dumps({{"env": sorted(os.environ), "pack": sorted(p.name for p in pack.iterdir())
                            if pack.is_dir() else None, "cwd": os.getcwd(), "uid": os.getuid()}}))
'''


def agent_python() -> str:
    """An interpreter the agent's unprivileged uid can run (this venv's may live under /root)."""
    system = Path("/usr/bin/python3")
    return str(system) if namespaces_available() and system.is_file() else sys.executable


def _probe(run: Path, task: str) -> dict:
    log = (run / "work" / "external_scripted_X" / task / "agent.log").read_text()
    return json.loads(log.split("PROBE ", 1)[1].splitlines()[0])


def test_a_scripted_agent_is_run_isolated_and_scored_beside_the_configurations(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MY_MODEL_KEY", "key-passed-by-name")
    monkeypatch.setenv("OTHER_SECRET", "never-passed")
    run = tmp_path / "run"
    command = f"{shlex.quote(agent_python())} -c {shlex.quote(AGENT)}"
    with pytest.raises(SystemExit) as done:
        main(["external", "--pack", str(PACK), "--split", "all", "--command", command, "--name", "scripted",
              "--env", "MY_MODEL_KEY", "--run", str(run), "--no-coverage", "--workers", "2"])
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert "fx-clamp-m01: exit 0" in out and "fx-stack-m02: exit 0" in out and "no test file written" in out
    assert "external:scripted/X: 2 tasks (1 without a suite)" in out
    probe = _probe(run, "fx-clamp-m01")
    protocol = {"TESTHELIX_TASK_FILE", "TESTHELIX_SUITE_DIR", "TESTHELIX_USAGE_FILE"}
    assert set(probe["env"]) - {"PWD", "SHLVL", "_"} == {"PATH", "LANG", "HOME", "TMPDIR", "MY_MODEL_KEY"} | protocol
    if namespaces_available():
        assert probe["pack"] == [] and probe["uid"] == 65534       # the pack is masked, the uid unprivileged
    # scored by TestPrism under its own label, usage recorded where reported
    with pytest.raises(SystemExit) as done:
        main(["report", str(run)])
    report = capsys.readouterr().out
    assert done.value.code == 0
    row = next(line for line in report.splitlines() if line.startswith("| external:scripted/X |"))
    assert "| 2 | 50.00% |" in row                 # reference acceptance: the clamp suite, not the missing one
    assert "## External agents (configuration X)" in report
    assert "1500 (1 of 2 tasks reported) | $0.0125 |" in report and "MY_MODEL_KEY" in report
    with pytest.raises(SystemExit) as done:
        main(["sql", str(run), "SELECT task_id, tokens, calls, detail FROM task_results ORDER BY task_id", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert (rows[0]["tokens"], rows[0]["calls"]) == (1500, 3) and rows[1]["tokens"] is None
    assert json.loads(rows[1]["detail"])["external"]["usage"] == "not reported"


def test_the_time_limit_stops_the_agent_and_bad_input_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as done:
        main(["external", "--pack", str(PACK), "--split", "all", "--command", "sleep 60", "--name", "slow",
              "--agent-time-limit", "1", "--run", str(run), "--no-coverage", "--limit", "1", "--first", "--json"])
    assert done.value.code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["missing"] == 1
    with pytest.raises(SystemExit) as done:
        main(["sql", str(run), "SELECT detail FROM task_results", "--json"])
    detail = json.loads(json.loads(capsys.readouterr().out)[0]["detail"])["external"]
    assert detail["exit"] == "time limit" and detail["wall_s"] < 30
    for args, message in ((["--env", "SURELY_UNSET_VARIABLE_X"], "--env SURELY_UNSET_VARIABLE_X: not set"),
                          (["--name", "a b"], "--name 'a b'")):
        base = {"--name": "ok", "--command": "true"}
        argv = ["external", "--pack", str(PACK), "--split", "all", "--run", str(tmp_path / "r2")]
        for key, value in base.items():
            if key not in args:
                argv += [key, value]
        with pytest.raises(SystemExit) as done:
            main(argv + args)
        err = capsys.readouterr().err
        assert done.value.code == 2 and message in err and "Traceback" not in err


def test_usage_file_protocol(tmp_path):
    path = tmp_path / "u.json"
    assert read_usage(path) == (None, "")
    path.write_text('{"input_tokens": 5, "output_tokens": 2}')
    assert read_usage(path) == ({"input_tokens": 5, "output_tokens": 2}, "")
    path.write_text('{"input_tokens": -1, "output_tokens": 2}')
    assert read_usage(path)[0] is None and "input_tokens must be an integer >= 0" in read_usage(path)[1]
    path.write_text('{"input_tokens": 1, "output_tokens": 2, "cost_usd": "free"}')
    assert read_usage(path)[0] is None and "cost_usd" in read_usage(path)[1]
    path.write_text("not json")
    assert read_usage(path)[0] is None and "does not parse" in read_usage(path)[1]

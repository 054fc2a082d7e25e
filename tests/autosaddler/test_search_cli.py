"""End to end: `autosaddler search` with simulated models on the bundled pack, `kill -9` at several
points and `autosaddler resume`, which must end with the same DAG as an uninterrupted run; then
freeze and the gate in run mode."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PACK = os.environ.get("TESTHELIX_TEST_PACK", "katas")  # a folder, or the bundled pack by name
CONFIG = {"train_minibatch_size": 2, "completed_train_iterations": 2, "max_candidate_proposals": 3,
          "development_limit": 2}
STABLE = ("node_id", "iteration", "strategy_hash", "edit", "status", "reason", "parent_outcomes",
          "child_outcomes", "dev_score")

pytestmark = pytest.mark.slow


def cli(*args):
    return [str(Path(sys.executable).parent / "autosaddler"), *args]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("search")
    split = root / "splits.json"
    subprocess.run([str(Path(sys.executable).parent / "testhelix"), "splits", "make", "--pack", str(PACK),
                    "--out", str(split), "--proposal", "12", "--development", "4", "--release", "6", "--test", "2"],
                   check=True, capture_output=True)
    config = root / "mini.json"
    config.write_text(json.dumps(CONFIG))
    return root, split, config


def search_cmd(run, split, config):
    return cli("search", "--pack", str(PACK), "--split-file", str(split), "--model", "sim:strong",
               "--optimizer-model", "sim:strong", "--run", str(run), "--preset", "demo", "--settings", str(config))


def dag(run):
    subprocess.run(cli("dag", str(run), "--json-out", str(run / "dag.json")), check=True, capture_output=True)
    nodes = json.loads((run / "dag.json").read_text())["nodes"]
    return [{k: n[k] for k in STABLE} for n in nodes]


def test_uninterrupted_then_killed_and_resumed_match(setup):
    root, split, config = setup
    full = root / "full"
    done = subprocess.run(search_cmd(full, split, config), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "simulated test doubles" in done.stdout
    closing = done.stdout[done.stdout.index("search finished"):].splitlines()  # piped: a log's 80 columns
    assert all(len(line) <= 80 or " " not in line.strip() for line in closing), closing  # a long path is one word
    reference = dag(full)
    assert reference[0]["status"] == "root" and len(reference) >= 3
    for i, lines_before_kill in enumerate((1, 2)):
        run = root / f"killed{i}"
        proc = subprocess.Popen(search_cmd(run, split, config), stdout=subprocess.PIPE, text=True)
        seen = 0
        while seen < lines_before_kill:
            line = proc.stdout.readline()  # type: ignore[union-attr]  # stdout=PIPE
            if not line:
                break
            seen += line.lstrip().startswith("[")
        time.sleep(0.5 * i)  # kill at a step boundary and in the middle of evaluations
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        resumed = subprocess.run(cli("resume", str(run)), capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
        assert dag(run) == reference


def test_a_search_without_a_terminal_says_it_started_within_15_s(setup):
    root, split, config = setup
    started = time.monotonic()
    proc = subprocess.Popen(search_cmd(root / "first-line", split, config), stdout=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]  # stdout=PIPE
        waited = time.monotonic() - started
    finally:
        proc.kill()
        proc.wait()
    assert first.startswith("task evaluations: 0/") and "ETA" in first and "$0.00" not in first
    assert waited < 15, f"first line after {waited:.1f} s"


def test_freeze_and_gate_spend_the_release_split(setup):
    root, split, config = setup
    run = root / "full"
    frozen = root / "frozen.json"
    r = subprocess.run(cli("freeze", str(run), "--out", str(frozen)), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    initial = Path(__file__).resolve().parents[2] / "strategies" / "initial.json"
    # a baseline no search of this size reaches, so the gate evaluates whichever node was frozen (a
    # challenger with the baseline's hash and a deterministic model is decided without evaluating)
    baseline = root / "baseline.json"
    baseline.write_text(json.dumps(json.loads(initial.read_text()) | {"agentSteps": 30, "repairSteps": 12}))
    gate = subprocess.run(cli("gate", "--challenger", str(frozen), "--baseline", str(baseline),
                              "--pack", str(PACK), "--split-file", str(split), "--split", "release", "--model",
                              "sim:strong", "--run", str(run), "--preset", "demo", "--json"),
                          capture_output=True, text=True)
    assert gate.returncode == 0, gate.stderr
    result = json.loads(gate.stdout)
    assert result["n"] == 6 and set(result) >= {"promoted", "p_value", "wins", "losses", "ci95", "ci99", "diagnostics"}
    assert (run / "gate_report.md").is_file()
    # the same gate again is the same test: its recorded decision, said to be a replay
    replay = subprocess.run(cli("gate", "--challenger", str(frozen), "--baseline", str(baseline), "--pack", str(PACK),
                                "--split-file", str(split), "--split", "release", "--model", "sim:strong",
                                "--run", str(run), "--preset", "demo", "--json"), capture_output=True, text=True)
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["replay_of"] and json.loads(replay.stdout)["wins"] == result["wins"]
    # the release tasks are now spent: a gate with another baseline on them is refused
    other = root / "other-baseline.json"
    other.write_text(json.dumps(json.loads(initial.read_text()) | {"agentSteps": 20}))
    again = subprocess.run(cli("gate", "--challenger", str(frozen), "--baseline", str(other), "--pack", str(PACK),
                               "--split-file", str(split), "--split", "release", "--model", "sim:strong",
                               "--run", str(run)), capture_output=True, text=True)
    assert again.returncode == 2 and "spent" in again.stderr

"""A model reference is resolved once, at the command's edge, and carried from there.

`--model` becomes a `ModelRef` while the command line is parsed (testhelix/commands/run_options.py `MODEL`);
the run setup, the runner's plans and its jobs carry it, and nothing below parses the name again.
The spies below count what a simulated `testhelix run` asks of the registry and of the simulated
provider: one resolution per `--model`, one parse of its `?seed/noise/latency` options, and no
name-based `is_simulated` question at all."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.helix.config import get_config
from testhelix.helix.jobs import TaskJob
from testhelix.llm import registry
from testhelix.llm.modelref import ModelRef
from testhelix.llm.registry import model_ref
from testhelix.llm.sim import provider as sim_provider
from testhelix.llm.sim.options import SimOptions
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import initial_strategy

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task"


@pytest.mark.parametrize("name", ["sim:weak?seed=3&noise=0.25&latency=0.5", "sim:strong",
                                  "openai-compatible:small@http://127.0.0.1:9/v1", "opus"])
def test_a_model_ref_is_frozen_and_pickles(name):
    ref = model_ref(name)
    back = pickle.loads(pickle.dumps(ref))
    assert back == ref and back.given == name and str(back) == name
    with pytest.raises(AttributeError):
        ref.given = "other"  # type: ignore[misc]
    job = TaskJob("t", "/nowhere", "", initial_strategy(), get_config("C"), ref, f"{ref.label}/C")
    assert pickle.loads(pickle.dumps(job)) == job   # what a Ray worker or a fork server receives


def test_what_later_layers_ask_is_answered_by_the_one_resolution():
    ref = model_ref("sim:weak?seed=3&noise=0.25&latency=0.5")
    assert ref.name == "sim:weak" and ref.simulated and ref.info.options == SimOptions(latency=0.5, noise=0.25, seed=3)
    assert ref.suggested_tasks == 8            # a latency stands in for a hosted API
    assert ref.label == ref.given and ref.credential_env_vars == () and not ref.credentials_required
    compatible = model_ref("openai-compatible:small@http://127.0.0.1:9/v1")
    assert compatible.label == "openai-compatible:small" and not compatible.simulated
    opus = model_ref("opus")                   # an alias: recorded as given, canonical inside
    assert opus.given == "opus" and opus.name == "anthropic:claude-opus-4-6" and opus.credentials_required
    assert opus.credential_env_vars == ("ANTHROPIC_API_KEY",)


def test_a_bad_model_is_refused_while_the_command_line_is_parsed(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", str(PACK), "--split", "all", "--config", "A", "--model", "sim:weak?noise=2",
              "--run", str(tmp_path / "r")])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "sim:weak?noise=2" in err and "noise must be between 0 and 1" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_a_simulated_run_resolves_its_model_once_and_never_asks_by_name(tmp_path, capsys, monkeypatch):
    counts = {"model_ref": 0, "parse": 0, "is_simulated": 0}
    real_ref, real_parse = registry.model_ref, sim_provider.parse_sim_name

    def counting_ref(name: str) -> ModelRef:
        counts["model_ref"] += 1
        return real_ref(name)

    def counting_parse(name: str):
        counts["parse"] += 1
        return real_parse(name)

    def no_name_question(name: str) -> bool:
        counts["is_simulated"] += 1
        return False

    monkeypatch.setattr(registry, "model_ref", counting_ref)
    monkeypatch.setattr("testhelix.commands.run_options.model_ref", counting_ref)   # the --model type's binding
    monkeypatch.setattr(sim_provider, "parse_sim_name", counting_parse)
    monkeypatch.setattr(registry, "is_simulated", no_name_question)
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", str(PACK), "--split", "all", "--config", "A", "--config", "C",
              "--model", "sim:strong?seed=2", "--run", str(tmp_path / "r"), "--workers", "1", "--jobs", "2",
              "--no-coverage", "--json"])
    assert done.value.code == 0, capsys.readouterr().err
    # one --model, two configurations, one task each (with pairs at once): resolved and parsed once
    assert counts == {"model_ref": 1, "parse": 1, "is_simulated": 0}
    assert '"simulated": true' in capsys.readouterr().out
    store = RunStore(tmp_path / "r", read_only=True)
    try:
        labels = store.query("SELECT run_label, count(*) FROM task_results GROUP BY 1 ORDER BY 1")[1]
        models = store.query("SELECT DISTINCT model, simulated FROM model_calls")[1]
    finally:
        store.close()
    assert labels == [("sim:strong?seed=2/A", 1), ("sim:strong?seed=2/C", 1)]
    assert models == [("sim:strong", True)]

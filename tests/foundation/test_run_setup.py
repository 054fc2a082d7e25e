"""One RunSetup: settings given on the command line reach the model and the executor explicitly (no
environment variable, no module global), and every command that runs models takes the same options."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from testhelix.llm.registry import model_ref
from testhelix.run.setup import ModelSettings, RunSetup
from testhelix.strategy.model import initial_strategy

MODEL_OPTIONS = ["--call-timeout", "45", "--context-window", "64000", "--rpm", "90", "--tpm", "80000"]


class Stop(Exception):
    """Raised by a spy once it has seen what it came for."""


def test_run_settings_reach_the_model_and_the_executor_and_leave_the_environment_alone(tmp_path, monkeypatch):
    from testhelix.commands.cli import cli
    from testhelix.execution import seam
    from testhelix.llm import registry

    assert not os.environ.get(seam.SANDBOX_ENV) and not os.environ.get(seam.EXECUTOR_ENV)
    before = dict(os.environ)
    seen: dict[str, Any] = {}
    real_executor = seam.create_executor

    def executor_spy(spec: str | None = None, workers: int | None = None, cache: Any = None,
                     sandbox: str | None = None, checked: bool = False) -> Any:
        seen["executor"] = (spec, workers, sandbox)
        seen["checked_before"] = checked     # the RunSetup's choice was checked once, at the command's edge
        return real_executor(spec, workers=workers, cache=cache, sandbox=sandbox, checked=checked)

    def model_spy(ref: Any, **kwargs: Any) -> Any:
        seen["model"] = (ref, kwargs)
        raise Stop

    monkeypatch.setattr(seam, "create_executor", executor_spy)
    monkeypatch.setattr(registry, "create_model", model_spy)
    result = CliRunner().invoke(cli, ["run", "--pack", "katas", "--split", "test", "--config", "A", "--model", "sim:weak",
                                      "--limit", "1", "--no-coverage", "--run", str(tmp_path / "run"), "--jobs", "1",
                                      "--workers", "1", "--sandbox", "plain", "--executor", "forkserver",
                                      *MODEL_OPTIONS, "--json"])
    assert isinstance(result.exception, Stop), result.output
    assert seen["executor"] == ("forkserver", 1, "plain") and seen["checked_before"] is True
    ref, kwargs = seen["model"]
    assert ref.given == "sim:weak" and kwargs["context_window"] == 64000
    assert (kwargs["requests_per_minute"], kwargs["tokens_per_minute"]) == (90.0, 80000.0)
    assert dict(os.environ) == before                     # nothing the command decided went into the environment


def test_a_users_environment_default_is_read_once_and_the_option_wins(monkeypatch):
    from testhelix.commands.run_options import RunOptions

    monkeypatch.setenv("TESTHELIX_SANDBOX", "plain")
    assert RunOptions().execution().sandbox == "plain"                       # the user's default
    assert RunOptions(sandbox="namespaced").execution().sandbox == "namespaced"  # the command line wins
    with pytest.raises(Exception, match="sandbox"):
        RunOptions(sandbox="no.such.module:Sandbox").execution()             # checked before any work


def test_model_settings_give_each_model_its_own_window_and_limits():
    settings = ModelSettings.for_models(["sim:weak", "sim:strong"], 30.0, 50_000, 60.0, None)
    assert settings.context_window("sim:weak") == 50_000 and settings.context_window("other") is None
    assert settings.rate_limit("sim:strong") == (60.0, None) and settings.rate_limit("other") == (None, None)
    assert ModelSettings.for_models(["sim:weak"]) == ModelSettings()
    model = ModelSettings.for_models(["openai-compatible:m@http://127.0.0.1:9/v1"], context_window=16000) \
        .create_model(model_ref("openai-compatible:m@http://127.0.0.1:9/v1"))
    assert model.context_window == 16000


def _capture_setup(monkeypatch: pytest.MonkeyPatch, module: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake_evaluator(store: Any, run_dir: Path, tasks: Any, model: str, cfg: Any, scope: str,
                       setup: RunSetup) -> Any:
        seen.update(setup=setup, cfg=cfg)
        raise Stop

    monkeypatch.setattr(module, "helix_evaluator", fake_evaluator)
    return seen


@pytest.mark.parametrize("command", ["search", "resume", "gate"])
def test_search_resume_and_gate_take_the_shared_model_options(command):
    from autosaddler.cli import cli

    lines = CliRunner().invoke(cli, [command, "--help"]).output
    for option in ("--call-timeout", "--context-window", "--rpm", "--tpm", "--executor", "--sandbox", "--jobs",
                   "--workers", "--backend", "--ray-address"):
        assert option in lines, (command, option)


def test_search_hands_the_shared_options_to_its_runner_and_flags_override_the_settings_file(tmp_path, monkeypatch):
    from autosaddler.cli import cli
    from autosaddler.commands import search as search_cmd

    seen = _capture_setup(monkeypatch, search_cmd)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"seed": 7, "per_task_token_cap": 5000}))
    result = CliRunner().invoke(cli, ["search", "--pack", "katas", "--model", "sim:weak", "--optimizer-model",
                                      "sim:strong", "--run", str(tmp_path / "run"), "--preset", "demo",
                                      "--settings", str(settings), "--seed", "9", "--workers", "1", "--jobs", "3",
                                      *MODEL_OPTIONS])
    assert isinstance(result.exception, Stop), result.output
    setup, cfg = seen["setup"], seen["cfg"]
    assert cfg.seed == 9 and cfg.per_task_token_cap == 5000 and cfg.workers == 1  # flag over file over preset
    assert setup.models.call_timeout_s == 45.0 and setup.models.context_window("sim:weak") == 64000
    assert setup.models.rate_limit("sim:weak") == (90.0, 80000.0)
    assert (setup.concurrency.tasks_in_flight, setup.concurrency.execution_slots) == (3, 1)


def test_gate_hands_the_shared_options_to_its_runner(tmp_path, monkeypatch):
    from autosaddler.cli import cli
    from autosaddler.commands import gate as gate_cmd

    seen = _capture_setup(monkeypatch, gate_cmd)
    challenger = tmp_path / "challenger.json"   # not the baseline: a same-strategy gate evaluates nothing
    challenger.write_text(json.dumps(initial_strategy().model_dump(mode="json") | {"agentSteps": 16}))
    result = CliRunner().invoke(cli, ["gate", "--challenger", str(challenger), "--allow-unfrozen-challenger", "--baseline",
                                      "initial", "--pack", "katas", "--model", "sim:weak", "--run",
                                      str(tmp_path / "gate"), "--preset", "demo", "--sandbox", "plain",
                                      *MODEL_OPTIONS])
    assert isinstance(result.exception, Stop), result.output
    setup = seen["setup"]
    assert setup.models.context_window("sim:weak") == 64000 and setup.execution.sandbox == "plain"
    assert setup.concurrency.execution_slots == seen["cfg"].workers           # the settings' default


@pytest.mark.parametrize("command", ["experiment", "run"])
def test_gtdd_takes_the_same_model_options(command):
    from gtdd.cli import cli

    lines = CliRunner().invoke(cli, [command, "--help"]).output
    for option in ("--call-timeout", "--context-window", "--rpm", "--tpm", "--sandbox"):
        assert option in lines, (command, option)


def test_the_options_have_one_range_everywhere():
    from autosaddler.cli import cli as autosaddler_cli
    from gtdd.cli import cli as gtdd_cli
    from testhelix.commands.cli import cli as testhelix_cli

    def option(group: click.Group, command: str, name: str) -> click.Parameter:
        ctx = click.Context(group)
        cmd = group.get_command(ctx, command)
        assert cmd is not None
        return next(p for p in cmd.params if name in getattr(p, "opts", ()))

    for name in ("--jobs", "--call-timeout", "--context-window", "--rpm", "--tpm"):
        types = {repr(option(g, c, name).type) for g, c in ((testhelix_cli, "run"), (autosaddler_cli, "search"),
                                                            (autosaddler_cli, "gate"), (autosaddler_cli, "resume"))}
        assert len(types) == 1, (name, types)
    assert repr(option(gtdd_cli, "experiment", "--jobs").type) == repr(option(testhelix_cli, "run", "--jobs").type)
    for name in ("--seed", "--token-cap", "--limit", "--workers"):
        assert repr(option(testhelix_cli, "run", name).type) == repr(option(autosaddler_cli, "search", name).type)

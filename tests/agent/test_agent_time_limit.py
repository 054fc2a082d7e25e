"""The agent time limit T comes from the task's declaration; `testhelix run --agent-time-limit` overrides it."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from testhelix.agent.budget import Budget, working_cap_s
from testhelix.commands.cli import cli
from testhelix.helix.config import get_config
from testhelix.helix.context import HelixContext
from testhelix.strategy.model import initial_strategy


def context(task, override=None):
    return HelixContext(task=task, strategy=initial_strategy(), config=get_config("C", agent_time_limit_s=override),
                        model=None, budget=Budget(10**6), executor=None, work_dir=None)  # type: ignore[arg-type]


def test_the_task_declares_t_and_an_override_wins(sim_task):
    short = dataclasses.replace(sim_task, agent_timeout_s=200.0)
    ctx = context(short)
    assert ctx.agent_time_limit_s == 200.0
    assert abs(ctx.deadline.remaining() - working_cap_s(200.0)) < 5  # not the old fixed 600 s
    overridden = context(short, override=900.0)
    assert overridden.agent_time_limit_s == 900.0
    assert abs(overridden.deadline.remaining() - working_cap_s(900.0)) < 5


def test_the_run_option_refuses_a_bad_limit(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                      "sim:strong", "--run", str(tmp_path / "r"), "--agent-time-limit", "0"])
    assert result.exit_code == 2 and "--agent-time-limit" in result.output

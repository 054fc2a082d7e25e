"""Domains as plug-ins: `--domain package.module:OBJECT`, the Domain hooks, and the CLI resuming and
extending an experiment on an out-of-tree domain (tests/plugins/sample_plugin/sample_plugin/counter.py)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from gtdd.cli import main
from gtdd.domains import get_domain
from gtdd.domains.base import DOMAIN_HOOKS, Domain
from testhelix.core.errors import UserError

PLUGIN_DIR = Path(__file__).resolve().parents[1] / "plugins" / "sample_plugin"
COMMAND = ["experiment", "--domain", "sample_plugin.counter:DOMAIN", "--policies", "public-only,static-property",
           "--blocks", "1", "--rounds", "2", "--quiet", "--json"]


@pytest.fixture(autouse=True)
def _sample_plugin_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))


def cli(args, capsys):
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def test_a_domain_is_loaded_by_dotted_path_and_checked_for_every_hook():
    assert get_domain("sample_plugin.counter:DOMAIN") is importlib.import_module("sample_plugin.counter").DOMAIN
    declared = {name for name in Domain.__annotations__} | {n for n in vars(Domain) if not n.startswith("_")}
    assert declared >= set(DOMAIN_HOOKS) and set(DOMAIN_HOOKS) >= declared - {"__annotations__"}
    with pytest.raises(UserError, match="lacks Domain hooks: name, families"):
        get_domain("sample_plugin.counter:NOT_A_DOMAIN")
    with pytest.raises(UserError, match="cannot import 'no_such_module'"):
        get_domain("no_such_module:DOMAIN")
    with pytest.raises(UserError, match="has no attribute 'MISSING'"):
        get_domain("sample_plugin.counter:MISSING")
    with pytest.raises(UserError, match="unknown domain 'nope'"):
        get_domain("nope")


@pytest.mark.slow
def test_the_same_command_resumes_exactly_and_more_blocks_extend_with_a_reaudit(tmp_path, capsys):
    run = ["--run", str(tmp_path), "--seed", "3"]
    code, out, _ = cli(COMMAND + run, capsys)
    assert code == 0 and json.loads(out)["rounds_run"] == 4
    code, out, _ = cli(COMMAND + run, capsys)  # the very same command: resumed, nothing left to do
    assert code == 0 and json.loads(out)["rounds_run"] == 0 and json.loads(out)["reaudited"] == 0
    extended = [a if a != "1" else "2" for a in COMMAND]  # --blocks 2: M goes from 2 to 4
    code, out, _ = cli(extended + run + ["--jobs", "2"], capsys)
    summary = json.loads(out)
    assert code == 0 and summary["rounds_run"] == 4 and summary["reaudited"] == 4
    longer = extended[:-4] + ["--rounds", "3", "--quiet", "--json"]  # would change the recorded rounds
    code, _, err = cli(longer + run, capsys)
    assert code == 2 and "cannot be extended to 3" in err and "new run directory" in err
    code, out, err = cli(["report", str(tmp_path)], capsys)
    assert code == 0, err
    assert "public-only - static-property" in out
    assert "re-audited 4 rounds" in out and "M = 4 trajectories" in out
    print(out)

"""`--help` of the three console scripts imports no heavy module, and the lazy command listing says
exactly what the imported commands would say (the speed goal itself lives in bench/startup.py)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

HEAVY = {"scipy", "numpy", "duckdb", "rich", "pydantic", "networkx", "anthropic", "openai", "httpx", "jsonschema"}
# console script -> the module of its click group
CLIS = {"testhelix": "testhelix.commands.cli", "autosaddler": "autosaddler.cli", "gtdd": "gtdd.cli"}


def test_help_imports_no_heavy_module():
    probe = ("import json, sys\n"
             f"for module in {sorted(CLIS.values())!r}:\n"
             "    main = __import__(module, fromlist=['main']).main\n"
             "    try:\n"
             "        main(['--help'])\n"
             "    except SystemExit:\n"
             "        pass\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    assert "Commands:" in out
    assert loaded & HEAVY == set()


@pytest.mark.parametrize("name", CLIS)
def test_lazy_listing_equals_the_listing_of_the_imported_commands(name):
    group = importlib.import_module(CLIS[name]).cli
    lazy_text = CliRunner().invoke(group, ["--help"], terminal_width=100).output
    eager = click.Group(group.name, help=group.help, params=group.params,
                        context_settings=group.context_settings)
    for command_name in group.lazy:
        eager.add_command(group.get_command(click.Context(group), command_name), command_name)
    eager_text = CliRunner().invoke(eager, ["--help"], terminal_width=100).output
    assert lazy_text.split("Commands:")[1] == eager_text.split("Commands:")[1]
    assert sorted(group.lazy) == sorted(group.commands)   # every entry names a real command

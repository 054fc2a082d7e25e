"""Pytest work the fork server does once, so that each execution's child starts further along.

1. `warm_up` runs pytest once (a passing and a failing test), plainly and under coverage.py, so
   that every module pytest, its plugins and coverage import on the way is already in the server's
   memory when it forks.
2. `ConfigTemplate`: `pytest.main` begins by building a `Config` with pytest's default plugins
   imported and registered (`_pytest.config.get_config`). That object depends only on the `-p`
   arguments, which are the harness's own and fixed, so the server builds it once; each child then
   adopts its private copy-on-write copy instead of building it again (about 5 ms of a 55 ms
   execution). Everything after that step -- ini files, conftests, entry-point plugins, collection,
   the run -- still happens in the child, inside its workspace.

The template is used for one `pytest.main` call per child (a suite that runs pytest again, e.g.
through `pytester`, gets a fresh config). With a pytest whose `get_config` does not look the way
this module expects, the template is simply off and children build their config as usual.
"""

from __future__ import annotations

import inspect
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import _pytest.config as _pytest_config  # the private hook point; guarded by ConfigTemplate.build
import pytest

from testhelix.execution.coverage_run import run_under_coverage
from testhelix.execution.outcome import PYTEST_ARGS

PROG = "pytest.main()"  # what pytest.main passes to get_config


def warm_up(work: Path) -> None:
    workspace = Path(tempfile.mkdtemp(dir=work))
    (workspace / "suite").mkdir()
    (workspace / "suite" / "test_warm.py").write_text("def test_pass():\n    assert [1] == [1]\n\n"
                                                      "def test_fail():\n    assert {'a': 1} == {'a': 2}\n")
    for style in ("auto", "line"):  # the two traceback styles the harness uses render differently
        pytest.main([*PYTEST_ARGS, f"--tb={style}", str(workspace / "suite")])
    cwd = os.getcwd()
    try:  # and once under coverage.py, which imports more on its first measurement
        os.chdir(workspace)
        run_under_coverage([*PYTEST_ARGS, "suite"], "suite")
    finally:
        os.chdir(cwd)
    # The warm-up's own test module must not stay importable under its name (a suite may have a
    # test_warm.py); every other extra module is forgotten per job when a tree would shadow it.
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(workspace)):
            del sys.modules[name]


GetConfig = Callable[..., _pytest_config.Config]


class ConfigTemplate:
    def __init__(self, config: _pytest_config.Config | None, original: GetConfig | None):
        self.config, self._original = config, original

    @classmethod
    def build(cls) -> ConfigTemplate:
        original: GetConfig | None = getattr(_pytest_config, "get_config", None)
        try:
            if original is None or not {"args", "plugins", "prog"} <= set(inspect.signature(original).parameters):
                return cls(None, original)
            return cls(original(list(PYTEST_ARGS), None, prog=PROG), original)
        except Exception:  # noqa: BLE001 - any surprise means: no template
            return cls(None, original)

    @property
    def active(self) -> bool:
        return self.config is not None

    def install(self, args: Sequence[str]) -> None:
        """In the child, before pytest.main(args): the next get_config(args) returns the template."""
        config, original = self.config, self._original
        if config is None or original is None:  # a template exists only where get_config did
            return
        expected = list(args)

        # get_config's own signature (pytest.main calls it in the child)
        def adopt(args: Iterable[str] | None = None, plugins: Sequence[str | object] | None = None, *,
                  prog: str | None = None) -> _pytest_config.Config:
            _pytest_config.get_config = original  # one use only
            if list(args or ()) != expected or prog != PROG:
                return original(args, plugins, prog=prog)
            config.invocation_params = config.InvocationParams(args=expected, plugins=plugins, dir=Path.cwd())
            return config

        _pytest_config.get_config = adopt

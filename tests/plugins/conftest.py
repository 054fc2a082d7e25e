"""The sample plug-in package (tests/plugins/sample_plugin) made visible as if it were installed.

Its folder holds the package and the `*.dist-info` folder `pip install` would write, so putting the
folder on sys.path is enough for importlib.metadata to find its entry points. Fork servers and GTDD
launchers are separate processes: they import a plug-in sandbox from the folder it was loaded from
(testhelix.core.plugins.import_root), so nothing is installed into the virtual environment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PLUGIN_DIR = Path(__file__).resolve().parent / "sample_plugin"


@pytest.fixture
def sample_plugin(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    # The commands' --executor / --sandbox set these for the process: undone after each test.
    for name in ("TESTHELIX_EXECUTOR", "TESTHELIX_SANDBOX", "SAMPLE_PLUGIN_API_KEY", "SAMPLE_PLUGIN_LOG"):
        monkeypatch.delenv(name, raising=False)
    return PLUGIN_DIR

from __future__ import annotations

from pathlib import Path

import pytest

from testhelix.execution.executor import default_executor
from testhelix.llm.registry import credential_env_vars
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


@pytest.fixture(scope="session")
def sim_task():
    return load_task(SIM_TASK)


@pytest.fixture(scope="session")
def executor():
    # Fake credentials in the host environment while the execution servers start: executed code
    # must never see them (checked in test_tools.py).
    mp = pytest.MonkeyPatch()
    for name in credential_env_vars():
        mp.setenv(name, f"secret-{name.lower()}")
    ex = default_executor(workers=1)
    yield ex
    ex.close()
    mp.undo()

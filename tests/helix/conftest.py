"""Fixtures the pipeline tests share: one fork-server executor per module and the fixture task."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testhelix.execution.executor import default_executor
from testhelix.execution.protocols import Executor
from testhelix.tasks.task import Task, load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


@pytest.fixture(scope="module")
def executor() -> Iterator[Executor]:
    ex = default_executor(workers=2)
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def task() -> Task:
    return load_task(SIM_TASK)

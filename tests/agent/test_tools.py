"""Tool rules: protected paths, escapes, clipping, bounded run output."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from testhelix.agent.tools import AgentWorkspace, Submitted, ToolBox, ToolError
from testhelix.llm.base import ToolCall


@dataclass
class FakeOutcome:
    status: str = "fail"
    reason: str | None = "1 failing test(s)"
    tests_run: int | None = 2
    output: str = "x" * 5000 + "\nFAILED suite/test_a.py::test_one - assert 1 == 2"


class FakeExecutor:
    def __init__(self):
        self.calls = []

    def run(self, suite_dir, program_dir, limits=None):
        self.calls.append((suite_dir, program_dir, limits))
        return FakeOutcome()


@pytest.fixture
def box(tmp_path, sim_task):
    ws = AgentWorkspace.create(tmp_path / "ws", sim_task.initial_dir)
    return ToolBox(ws, FakeExecutor(), limits="L", output_chars=300, writable=("suite", "repair"))  # type: ignore[arg-type]


def call(name, **args):
    return ToolCall("c1", name, args)


def test_workspace_holds_only_public_material(box, sim_task):
    listing = box.execute(call("list_files"))
    assert "program/chunker/__init__.py" in listing and "repair/chunker/__init__.py" in listing
    assert not any(word in listing for word in ("bank", "solution", "panel", "tests/"))


def test_protected_writes_are_refused_and_recorded(box, sim_task):
    original = (sim_task.initial_dir / "chunker" / "__init__.py").read_text()
    assert box.execute(call("write_file", path="program/chunker/__init__.py", content="x")).startswith("refused")
    assert box.execute(call("write_file", path="notes.txt", content="x")).startswith("refused")
    with pytest.raises(ToolError):
        box.execute(call("write_file", path="../escape.py", content="x"))
    with pytest.raises(ToolError):
        box.execute(call("write_file", path="/tmp/abs.py", content="x"))
    assert (box.workspace.program / "chunker" / "__init__.py").read_text() == original
    assert not (box.workspace.root.parent / "escape.py").exists()
    assert [r["path"] for r in box.refusals] == ["program/chunker/__init__.py", "notes.txt", "../escape.py", "/tmp/abs.py"]
    assert box.execute(call("write_file", path="suite/test_a.py", content="def test_a(): pass\n")).startswith("wrote")


def test_symlink_escape_is_refused(box, tmp_path):
    (box.workspace.suite / "link").symlink_to(tmp_path)
    with pytest.raises(ToolError, match="leaves the workspace"):
        box.execute(call("write_file", path="suite/link/evil.py", content="x"))


def test_tester_only_session_cannot_write_the_repair(tmp_path, sim_task):
    ws = AgentWorkspace.create(tmp_path / "ws", sim_task.initial_dir)
    box = ToolBox(ws, FakeExecutor(), None, writable=("suite",))  # type: ignore[arg-type]  # limits unused
    assert box.execute(call("write_file", path="repair/chunker/__init__.py", content="x")).startswith("refused")


def test_read_is_clipped_and_run_output_bounded(box):
    box.execute(call("write_file", path="suite/big.txt", content="y" * 2000))
    assert len(box.execute(call("read_file", path="suite/big.txt"))) < 400
    out = box.execute(call("run_tests", program="repair"))
    assert out.startswith("suite on repair program: fail") and len(out) <= 400 and "FAILED" in out
    suite, program, limits = box.executor.calls[0]
    assert suite == box.workspace.suite and program == box.workspace.repair and limits == "L"


def test_bad_calls_raise_tool_errors(box):
    with pytest.raises(ToolError, match="unknown tool"):
        box.execute(call("rm_rf"))
    with pytest.raises(ToolError, match="missing argument"):
        box.execute(call("read_file"))
    with pytest.raises(ToolError, match="program must be"):
        box.execute(call("run_tests", program="reference"))
    with pytest.raises(ToolError, match="could not read"):
        box.execute(ToolCall.from_json_text("c", "read_file", "{oops"))
    with pytest.raises(Submitted):
        box.execute(call("submit", summary="ok"))


def test_api_keys_never_reach_executed_code(tmp_path, sim_task, executor):
    import os

    from testhelix.execution.executor import Limits
    from testhelix.llm.registry import credential_env_vars
    assert all(os.environ.get(n, "").startswith("secret-") for n in credential_env_vars())
    ws = AgentWorkspace.create(tmp_path / "ws", sim_task.initial_dir)
    box = ToolBox(ws, executor, Limits(wall_s=30), writable=("suite",))
    box.execute(call("write_file", path="suite/test_env.py", content=(
        "import os\n\ndef test_no_keys():\n"
        f"    leaked = [n for n in {list(credential_env_vars())!r} if n in os.environ]\n"
        "    assert leaked == []\n"
        "    assert not any('secret-' in v for v in os.environ.values())\n")))
    assert box.execute(call("run_tests", program="initial")).startswith("suite on initial program: pass")

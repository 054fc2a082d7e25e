"""Trajectories: the full message list of a session, saved as JSON after every step, and replay.

File format (`trajectory.json`):
    {"format": 1, "meta": {...model, simulated, task_id, phase, pair, round, writable...},
     "messages": [Message.to_dict(), ...],      # the FULL history; context trimming only changes
                                                # what is sent to the model, never what is saved
     "steps": [{"step", "stop_reason", "usage", "cache_hit", "simulated", "elided", ...}, ...],
     "exit": "submitted" | "step_limit" | ...}

`replay(path, root, initial_dir)` re-runs a saved trajectory without any model: it rebuilds the
workspace from the initial program and re-applies every tool call of every assistant message in
order, through the same ToolBox rules (so refused writes stay refused). Test runs are re-executed
only when an executor is given. The result must have the same files as the original session.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testhelix.agent.tools import AgentWorkspace, Submitted, SuiteRunner, ToolBox, ToolError
from testhelix.core.errors import UserError
from testhelix.execution.outcome import Limits
from testhelix.llm.base import Message

if TYPE_CHECKING:
    from testhelix.execution.outcome import Limits, Outcome

FORMAT = 1


@dataclass
class Trajectory:
    meta: dict[str, Any]
    messages: list[Message] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    exit: str | None = None

    def to_dict(self) -> dict:
        return {"format": FORMAT, "meta": self.meta, "messages": [m.to_dict() for m in self.messages],
                "steps": self.steps, "exit": self.exit}

    def save(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(self.to_dict(), fh, indent=1)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> Trajectory:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise UserError(f"{path}: cannot read trajectory: {err}") from None
        if data.get("format") != FORMAT:
            raise UserError(f"{path}: unsupported trajectory format {data.get('format')!r}")
        return cls(meta=data["meta"], messages=[Message.from_dict(m) for m in data["messages"]],
                   steps=data.get("steps", []), exit=data.get("exit"))


class _NoExecutor:
    """Replay without an executor: test runs are skipped (they do not change any file)."""

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits) -> Outcome:  # noqa: ARG002 - SuiteRunner's signature
        raise ToolError("test runs are not re-executed during replay")


def replay(path: Path, root: Path, initial_dir: Path, executor: SuiteRunner | None = None,
           limits: Limits | None = None, start_from: Path | None = None) -> AgentWorkspace:
    """Rebuild the session's files from its trajectory. `start_from` seeds the workspace with an
    earlier round's workspace (repair rounds continue from the generation round's files)."""
    traj = Trajectory.load(path)
    root = Path(root)
    if start_from is not None:
        import shutil
        shutil.copytree(start_from, root, dirs_exist_ok=True)
    ws = AgentWorkspace.create(root, initial_dir)
    box = ToolBox(ws, executor or _NoExecutor(), limits or Limits(), output_chars=10**9,
                  writable=tuple(traj.meta.get("writable", ("suite", "repair"))))
    for msg in traj.messages:
        for call in msg.tool_calls if msg.role == "assistant" else ():
            try:
                box.execute(call)
            except (ToolError, Submitted):
                pass
    return ws

"""The agent's tools and its workspace.

An agent workspace holds only public material and the pair's own work:

    <root>/program/   a copy of the task's initial program (never writable)
    <root>/suite/     the pair's test suite
    <root>/repair/    the pair's repair, starting as a copy of the initial program

Tools (all paths are relative to <root>):
    list_files(path=".")        files below a folder
    read_file(path)             a file, cut to the strategy's toolOutputChars
    write_file(path, content)   only inside the folders the session may write (`writable`)
    run_tests(program)          the suite on "initial" or on "repair", through Executor.run
    load_skill(name)            the text of one skill of the library this session may load
                                (never a reviewer-only skill), cut to toolOutputChars; offered
                                only when there is something to load (`tool_specs`): the loop
                                gives a library only when no route is set for the task's context
    submit(summary)             ends the session

A write outside the writable folders (the initial program, anything outside the workspace, a path
escaping through `..` or a symlink) is refused with an observation and recorded in `refusals`.
Bad arguments raise `ToolError`, which the loop turns into an error observation.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from testhelix.core.agent_roles import GENERATION_ROLES
from testhelix.core.digest import tree_sha256
from testhelix.llm.base import ToolCall, ToolSpec

if TYPE_CHECKING:
    from testhelix.execution.outcome import Limits, Outcome
    from testhelix.strategy.skills import Skill

PROGRAMS = ("initial", "repair")


class ToolError(Exception):
    """The call was malformed or impossible; the message goes back to the model."""


class Submitted(Exception):
    def __init__(self, summary: str):
        super().__init__(summary)
        self.summary = summary


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("list_files", "List the files below a folder of the workspace (default: the whole workspace).",
             {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}),
    ToolSpec("read_file", "Read a text file of the workspace (long files are cut).",
             {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
              "additionalProperties": False}),
    ToolSpec("write_file", "Create or overwrite a file. Tests go in suite/, the repaired program in repair/.",
             {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
              "required": ["path", "content"], "additionalProperties": False}),
    ToolSpec("run_tests", "Run the suite in suite/ on the initial program or on your repair.",
             {"type": "object", "properties": {"program": {"type": "string", "enum": list(PROGRAMS)}},
              "required": ["program"], "additionalProperties": False}),
    ToolSpec("submit", "Finish: the suite in suite/ and the program in repair/ are your answer.",
             {"type": "object", "properties": {"summary": {"type": "string"}}, "additionalProperties": False}),
)
LOAD_SKILL_SPEC = ToolSpec(
    "load_skill", "Load the full text of one skill from the skill library index in your instructions.",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
     "additionalProperties": False})


class SuiteRunner(Protocol):
    """The part of an executor the tools use (`testhelix.execution.executor.Executor` has it)."""

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits) -> Outcome: ...


def loadable_skills(library: dict[str, Skill] | None, role: str) -> dict[str, Skill]:
    """The skills a candidate session of `role` may load: never a reviewer-only one."""
    return {name: s for name, s in (library or {}).items() if not (s.reviewer_only and role in GENERATION_ROLES)}


@dataclass(frozen=True)
class AgentWorkspace:
    root: Path

    @property
    def program(self) -> Path:
        return self.root / "program"

    @property
    def suite(self) -> Path:
        return self.root / "suite"

    @property
    def repair(self) -> Path:
        return self.root / "repair"

    @classmethod
    def create(cls, root: Path, initial_dir: Path) -> AgentWorkspace:
        """Copy the public initial program in; keep an existing suite/repair (later rounds).

        Copies are made under a temporary name and renamed into place, so a copy that failed
        half-way (a full disk) never looks like a finished one; and the program copy, which no
        session may edit, is checked against the initial program's digest whenever it is reused
        and made again when it differs."""
        ws = cls(Path(root).resolve())
        ws.root.mkdir(parents=True, exist_ok=True)
        if ws.program.exists() and tree_sha256(ws.program) != tree_sha256(initial_dir):
            shutil.rmtree(ws.program)
        if not ws.program.exists():
            _copy_whole(initial_dir, ws.program)
        if not ws.repair.exists():
            _copy_whole(ws.program, ws.repair)
        ws.suite.mkdir(exist_ok=True)
        return ws


def _copy_whole(src: Path, dest: Path) -> None:
    """Copy a tree (caches left out) to `dest` via a temporary sibling: all of it or nothing."""
    tmp = dest.with_name(f".{dest.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-(limit - head):]}"


@dataclass
class ToolBox:
    """Executes tool calls for one session; test runs go through `executor` under `limits`."""

    workspace: AgentWorkspace
    executor: SuiteRunner
    limits: Limits
    output_chars: int = 10000
    writable: tuple[str, ...] = ("suite", "repair")
    skills: dict[str, Skill] = field(default_factory=dict)       # name -> Skill this session may load
    refusals: list[dict] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    loaded_skills: list[str] = field(default_factory=list)

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The tools offered to the model: load_skill only when there is something to load."""
        return TOOL_SPECS + ((LOAD_SKILL_SPEC,) if self.skills else ())

    def execute(self, call: ToolCall) -> str:
        if call.error is not None or call.arguments is None:
            raise ToolError(f"could not read the arguments of {call.name}: {call.error}")
        names = tuple(t.name for t in self.tool_specs())
        if call.name not in names:
            raise ToolError(f"unknown tool {call.name!r}; available: {', '.join(names)}")
        args = call.arguments
        try:
            if call.name == "load_skill":
                return self.load_skill(str(args["name"]))
            if call.name == "list_files":
                return self.list_files(str(args.get("path", ".")))
            if call.name == "read_file":
                return self.read_file(str(args["path"]))
            if call.name == "write_file":
                return self.write_file(str(args["path"]), args["content"])
            if call.name == "run_tests":
                return self.run_tests(str(args["program"]))
            raise Submitted(str(args.get("summary", "")))
        except KeyError as missing:
            raise ToolError(f"{call.name}: missing argument {missing}") from None

    def _resolve(self, path: str) -> Path:
        if not path or Path(path).is_absolute():
            raise ToolError(f"path must be relative to the workspace, got {path!r}")
        target = (self.workspace.root / path).resolve()
        if target != self.workspace.root and self.workspace.root not in target.parents:
            raise ToolError(f"path {path!r} leaves the workspace")
        return target

    def list_files(self, path: str) -> str:
        base = self._resolve(path) if path not in ("", ".") else self.workspace.root
        if not base.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        names = sorted(str(p.relative_to(self.workspace.root)) for p in base.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts)
        return _clip("\n".join(names) or "(no files)", self.output_chars)

    def read_file(self, path: str) -> str:
        target = self._resolve(path)
        if not target.is_file():
            raise ToolError(f"no file {path!r}")
        return _clip(target.read_text(errors="replace"), self.output_chars)

    def write_file(self, path: str, content: object) -> str:
        if not isinstance(content, str):
            raise ToolError("write_file: content must be a string")
        if isinstance(path, str) and not path.isascii():
            try:
                path.encode("utf-8")  # a lone surrogate makes a name no digest or sandbox can carry
            except UnicodeEncodeError:
                reason = f"{path.encode('utf-8', 'backslashreplace').decode()!r} is not a valid UTF-8 file name"
                self.refusals.append({"tool": "write_file", "path": path, "reason": reason})
                return f"refused: {reason}"
        try:
            target = self._resolve(path)
        except ToolError as err:
            self.refusals.append({"tool": "write_file", "path": path, "reason": str(err)})
            raise
        rel = target.relative_to(self.workspace.root)
        if not rel.parts or rel.parts[0] not in self.writable or len(rel.parts) < 2:
            reason = f"{path!r} is protected: this session may write only inside {', '.join(self.writable)}/"
            self.refusals.append({"tool": "write_file", "path": path, "reason": reason})
            return f"refused: {reason}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {rel} ({len(content)} characters)"

    def load_skill(self, name: str) -> str:
        skill = self.skills.get(name)
        if skill is None:
            raise ToolError(f"load_skill: no skill {name!r} for this session; available: "
                            f"{', '.join(sorted(self.skills)) or 'none'}")
        self.loaded_skills.append(name)
        return _clip(f"# Skill: {skill.name}\n{skill.body}", self.output_chars)

    def run_tests(self, program: str) -> str:
        if program not in PROGRAMS:
            raise ToolError(f"run_tests: program must be one of {PROGRAMS}, got {program!r}")
        program_dir = self.workspace.program if program == "initial" else self.workspace.repair
        outcome = self.executor.run(self.workspace.suite, program_dir, self.limits)
        self.runs.append({"program": program, "status": outcome.status, "reason": outcome.reason,
                          "tests_run": outcome.tests_run})
        head = (f"suite on {program} program: {outcome.status}"
                + (f" ({outcome.reason})" if outcome.reason else "")
                + f"; tests run: {outcome.tests_run if outcome.tests_run is not None else 'unknown'}")
        tail = outcome.output[-max(0, self.output_chars - len(head) - 20):] if outcome.output else ""
        return f"{head}\n--- output ---\n{tail}"

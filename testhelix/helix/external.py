"""External coding agents as a configuration beside A–E (docs/external-agents.md).

A user-given command (any coding agent's CLI) runs once per task in a fresh agent workspace:

    TASK.md      the public task (context, packages, instruction: what TestHelix's agents see)
    program/     a copy of the public initial program
    suite/       where the agent writes its test files (test_*.py); this folder is the submission

under the task's agent time limit T (or --agent-time-limit), its process group killed at T. The
environment is scrubbed: PATH, LANG, HOME and TMPDIR (private folders in the workspace), the
protocol variables below, and only the variables the user names with --env (the model
credentials, by name). The suite it leaves is scored by TestPrism exactly like configuration A's,
under the run label `external:<name>/X`, so `testhelix report` shows it beside A–E.

Isolation. TestHelix's execution sandbox has no network, and a coding agent needs one to reach its
model; so the agent does not run there. With root and util-linux `unshare` (the same requirement as
the namespaced sandbox) it runs in new mount, PID, IPC and UTS namespaces that keep the network: the
task packs (the pack folder, the bundled archives, the pack cache), the run folder and any --mask
folder are covered by empty read-only tmpfs mounts, /proc shows only its own processes, and it runs
as an unprivileged uid (so it can neither undo the mounts nor read another process's environment).
Without them it runs as a plain subprocess with the scrubbed environment and the run records that
hidden material was not masked.

Usage protocol. Tokens and cost are recorded when the agent reports them: it may write a JSON
object to $TESTHELIX_USAGE_FILE with `input_tokens` and `output_tokens` (integers >= 0) and
optionally `cost_usd` (>= 0) and `calls` (integer >= 0). Without a valid file the usage is "not
reported"; an invalid one is "not reported" with the reason kept.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testhelix.agent.prompts import PublicTask, task_message
from testhelix.core.errors import UserError
from testhelix.execution.sandbox import namespaces_available
from testhelix.tasks.task import Task

LABEL_PREFIX = "external:"
CONFIG_NAME = "X"
USAGE_ENV, TASK_ENV, SUITE_ENV = "TESTHELIX_USAGE_FILE", "TESTHELIX_TASK_FILE", "TESTHELIX_SUITE_DIR"
USAGE_FILE = ".agent-usage.json"
AGENT_UID = 65534  # nobody: owns the workspace while the agent runs
NOT_REPORTED = "not reported"
_MASK_SCRIPT = ('cmd="$1"; shift; for d in "$@"; do mount -t tmpfs -o size=64k,mode=0555,ro testhelix-hidden "$d" '
                '|| exit 97; done; exec setpriv --reuid={uid} --regid={uid} --clear-groups --no-new-privs '
                '/bin/sh -c "$cmd"')


@dataclass(frozen=True)
class ExternalAgent:
    name: str
    command: str
    env_names: tuple[str, ...] = ()
    time_limit_s: float | None = None        # None: each task's declared agent timeout
    masks: tuple[Path, ...] = ()             # folders hidden besides the packs and the run folder

    @property
    def label(self) -> str:
        return f"{LABEL_PREFIX}{self.name}/{CONFIG_NAME}"


@dataclass(frozen=True)
class AgentRun:
    exit: str                                # "exit 0", "exit 3", "time limit", "launch failed: ..."
    wall_s: float
    time_limit_s: float
    usage: dict[str, Any] | None             # the reported usage, or None
    usage_note: str = ""                     # why a usage file was not accepted
    isolation: str = ""
    hidden: tuple[str, ...] = field(default=())

    def detail(self) -> dict[str, Any]:
        return {"external": {"exit": self.exit, "wall_s": self.wall_s, "time_limit_s": self.time_limit_s,
                             "usage": self.usage if self.usage is not None else NOT_REPORTED,
                             "usage_note": self.usage_note, "isolation": self.isolation,
                             "hidden": list(self.hidden)}}


def check_agent(agent: ExternalAgent, environ: dict[str, str]) -> None:
    if not agent.command.strip():
        raise UserError("--command: empty; give the agent's command line")
    if not agent.name or not all(c.isalnum() or c in "-_." for c in agent.name):
        raise UserError(f"--name {agent.name!r}: use letters, digits, '-', '_' or '.'")
    missing = [n for n in agent.env_names if n not in environ]
    if missing:
        raise UserError(f"--env {missing[0]}: not set in this environment (name only variables you have set)")


def prepare_workspace(task: Task, root: Path) -> Path:
    """A fresh workspace with the public task only; owned by the agent's uid when it will drop to it."""
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(task.initial_dir, root / "program", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder in ("suite", ".home", ".tmp"):
        (root / folder).mkdir(parents=True)
    (root / "TASK.md").write_text(
        task_message(PublicTask.of(task)) + "\n\nWrite pytest tests (test_*.py) into suite/ that fail on the "
        "program in program/ because of the reported bug and pass once it is fixed. Run them with "
        "`python -m pytest suite` (program/ is importable when you set PYTHONPATH=program).\n")
    return root


def agent_env(agent: ExternalAgent, workspace: Path, environ: dict[str, str]) -> dict[str, str]:
    env = {"PATH": environ.get("PATH", "/usr/bin:/bin"), "LANG": environ.get("LANG", "C.UTF-8"),
           "HOME": str(workspace / ".home"), "TMPDIR": str(workspace / ".tmp"),
           USAGE_ENV: str(workspace / USAGE_FILE), TASK_ENV: str(workspace / "TASK.md"),
           SUITE_ENV: str(workspace / "suite")}
    env.update({name: environ[name] for name in agent.env_names})
    return env


def masked_folders(agent: ExternalAgent, task: Task, run_dir: Path, workspace: Path) -> list[Path]:
    """Folders covered while the agent runs: the task's pack, the bundled archives and the pack
    cache, the run folder, and the user's --mask folders; never one that holds the workspace."""
    from testhelix.core.bundled_data import cache_root
    from testhelix.core.paths import tasks_dir

    wanted = [task.root.resolve().parent, tasks_dir(), cache_root(), run_dir, *agent.masks]
    out: list[Path] = []
    for folder in (Path(f).resolve() for f in wanted):
        if folder.is_dir() and folder not in out and not workspace.resolve().is_relative_to(folder):
            out.append(folder)
    return out


def read_usage(path: Path) -> tuple[dict[str, Any] | None, str]:
    if not path.is_file():
        return None, ""
    try:
        data = json.loads(path.read_text(errors="strict")[:100_000])
    except (ValueError, OSError) as err:
        return None, f"{USAGE_FILE} does not parse: {str(err)[:120]}"
    if not isinstance(data, dict):
        return None, f"{USAGE_FILE} is not a JSON object"
    usage: dict[str, Any] = {}
    for key, required in (("input_tokens", True), ("output_tokens", True), ("calls", False)):
        value = data.get(key)
        if value is None and not required:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None, f"{USAGE_FILE}: {key} must be an integer >= 0, got {value!r}"
        usage[key] = value
    cost = data.get("cost_usd")
    if cost is not None:
        if not isinstance(cost, int | float) or isinstance(cost, bool) or not math.isfinite(cost) or cost < 0:
            return None, f"{USAGE_FILE}: cost_usd must be a number >= 0, got {cost!r}"
        usage["cost_usd"] = float(cost)
    return usage, ""


def run_agent(agent: ExternalAgent, task: Task, workspace: Path, run_dir: Path, log: Path) -> AgentRun:
    """Run the agent's command once in `workspace` under the time limit; kill its group at the limit."""
    limit = agent.time_limit_s or task.agent_timeout_s
    env = agent_env(agent, workspace, dict(os.environ))
    if namespaces_available() and shutil.which("setpriv"):
        hidden = masked_folders(agent, task, run_dir, workspace)
        for p in [workspace, *workspace.rglob("*")]:
            os.chown(p, AGENT_UID, AGENT_UID, follow_symlinks=False)
        argv = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc", "--ipc", "--uts",
                "--kill-child", "--", "/bin/sh", "-c", _MASK_SCRIPT.format(uid=AGENT_UID), "sh", agent.command,
                *map(str, hidden)]
        isolation = f"namespaces (network kept), {len(hidden)} folder(s) masked, uid {AGENT_UID}"
    else:
        hidden, argv = [], ["/bin/sh", "-c", agent.command]
        isolation = "plain subprocess: hidden material NOT masked (needs root and util-linux unshare)"
    started = time.monotonic()
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(argv, cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as err:
            return AgentRun(f"launch failed: {err}", 0.0, limit, None, "", isolation)
        try:
            code = proc.wait(timeout=limit)
            exit_ = f"exit {code}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            exit_ = "time limit"
    usage, note = read_usage(workspace / USAGE_FILE)
    return AgentRun(exit_, round(time.monotonic() - started, 3), limit, usage, note, isolation,
                    tuple(str(h) for h in hidden))


def collect_suite(workspace: Path, dest: Path) -> bool:
    """Copy the agent's suite/ (without caches) to `dest`; False when it wrote no test file."""
    suite = workspace / "suite"
    if not any(suite.rglob("test_*.py")):
        return False
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(suite, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    return True


def work_folder(agent: ExternalAgent, run_dir: Path) -> Path:
    """<run>/work/external_<name>_X: the runner's folder naming for the label (names are plain)."""
    return Path(run_dir).resolve() / "work" / f"external_{agent.name}_{CONFIG_NAME}"


def suites_folder(agent: ExternalAgent, run_dir: Path) -> Path:
    """<run>/work/<label>/suites: one folder per task whose agent wrote a test file (testhelix
    evaluate's layout, so a missing one is scored as no submission)."""
    return work_folder(agent, run_dir) / "suites"


def run_external(agent: ExternalAgent, tasks: Sequence[Task], run_dir: Path,
                 progress: Any = None) -> dict[str, tuple[bool, AgentRun]]:
    """Run the agent on every task; its suite is kept at `suites_folder(...)/<task>`, its output at
    <run>/work/<label>/<task>/agent.log. Returns task id -> (submitted, AgentRun)."""
    out: dict[str, tuple[bool, AgentRun]] = {}
    with tempfile.TemporaryDirectory(prefix="testhelix-external-") as scratch:
        os.chmod(scratch, 0o755)  # the agent's uid must reach its workspace
        for task in tasks:
            logs = work_folder(agent, run_dir) / task.id
            logs.mkdir(parents=True, exist_ok=True)
            workspace = prepare_workspace(task, Path(scratch) / task.id)
            result = run_agent(agent, task, workspace, Path(run_dir).resolve(), logs / "agent.log")
            out[task.id] = (collect_suite(workspace, suites_folder(agent, run_dir) / task.id), result)
            shutil.rmtree(workspace, ignore_errors=True)
            if progress is not None:
                progress(task.id, *out[task.id])
    return out


def external_summaries(store: Any) -> list[dict[str, Any]]:
    """Per external-agent run label: its command, isolation, and the usage it reported (if any)."""
    from testhelix.store.runs import run_records

    out = []
    for run in run_records(store, label_prefix=LABEL_PREFIX):
        label, meta = run.run_label, run.config
        results = store.task_results(label)
        usages = [u for r in results if isinstance(u := json.loads(r["detail"] or "{}").get("external", {}).get("usage"), dict)]
        costs = [u["cost_usd"] for u in usages if "cost_usd" in u]
        out.append({"run_label": label, "command": meta.get("command"), "env": meta.get("env", []),
                    "isolation": meta.get("isolation"), "tasks": len(results), "usage_reported": len(usages),
                    "tokens": sum(u["input_tokens"] + u["output_tokens"] for u in usages) if usages else None,
                    "cost_usd": sum(costs) if costs else None,
                    "timeouts": sum(json.loads(r["detail"] or "{}").get("external", {}).get("exit") == "time limit"
                                    for r in results)})
    return out


def render_external(summaries: list[dict[str, Any]]) -> list[str]:
    if not summaries:
        return []
    lines = ["## External agents (configuration X)", "",
             "| run | command | credentials passed | isolation | tasks | at time limit | tokens | cost |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for s in summaries:
        tokens = NOT_REPORTED if s["tokens"] is None else \
            f"{s['tokens']} ({s['usage_reported']} of {s['tasks']} tasks reported)"
        cost = NOT_REPORTED if s["cost_usd"] is None else f"${s['cost_usd']:.4f}"
        command = str(s["command"]).replace("|", "/").replace("`", "'")
        lines.append(f"| {s['run_label']} | `{command[:80]}` | {', '.join(s['env']) or 'none'} | {s['isolation']} "
                     f"| {s['tasks']} | {s['timeouts']} | {tokens} | {cost} |")
    return [*lines, ""]

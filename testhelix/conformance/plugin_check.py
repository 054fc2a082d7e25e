"""Conformance checks for plug-in authors (`testhelix plugin check`; GTDD domains: `gtdd plugin check`).

A plug-in is loaded exactly as its registry loads it (a built-in name, `package.module:OBJECT` or an
entry point), its declared members are compared with the registry's Protocol (the list comes from
the Protocol itself: plugins.protocol_members), its optional abilities are named, and then it is
exercised the way the project will use it:

- a provider resolves a model and its model answers one short request of the shape the agent loop
  sends (a system and a user message, one tool offered), with a well-formed Completion;
- a sandbox (under the fork-server pool) and an executor each run three tiny suites on a tiny
  program, which must come back `pass`, `fail` and `error` (a suite that collects no test), and
  a repetition must give the same verdict;
- a simulated role (a package's test double for requests of its own, llm/sim/contributed.py) has a
  name no agent role uses, answers `recognises` with a bool, and does not claim a request that is
  not its package's (a role that claims every request would answer every other package's too).

Each check prints one line (`ok` or `FAIL`, what, detail); the command exits 0 when all passed, 1
when one failed, and 2 for a name no registry can load (UserError).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError
from testhelix.core.plugins import missing_members, protocol_members


@dataclass
class CheckReport:
    """One line per check; `failed` says whether any failed."""

    echo: Callable[[str], None]
    failed: bool = False
    lines: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        line = f"{'ok  ' if ok else 'FAIL'}  {what}" + (f": {detail}" if detail else "")
        self.lines.append(line)
        self.echo(line)
        self.failed |= not ok
        return ok

    def note(self, what: str) -> None:
        self.echo(f"      {what}")

    def members(self, obj: Any, protocol: type, what: str) -> bool:
        missing = missing_members(obj, protocol)
        return self.check(not missing, f"{what} declares every {protocol.__name__} member",
                          f"lacks {', '.join(missing)}" if missing else
                          f"{len(protocol_members(protocol))} members")

    def abilities(self, obj: Any, optional: dict[str, type]) -> None:
        """Name the optional abilities (runtime-checkable Protocols) the object declares."""
        has = [name for name, protocol in optional.items() if isinstance(obj, protocol)]
        self.note(f"optional abilities: {', '.join(has) or 'none'}")

    def attempt(self, what: str, action: Callable[[], Any]) -> tuple[bool, Any]:
        """Run one step of an exercise; an exception is this check's failure, named in one line."""
        try:
            return True, action()
        except UserError:
            raise
        except Exception as err:  # noqa: BLE001 - a plug-in's fault is what the check reports
            self.check(False, what, f"{type(err).__name__}: {err}")
            return False, None


# --- providers ------------------------------------------------------------------------------------

def check_provider(name: str, model: str | None, report: CheckReport) -> None:
    from testhelix.core.plugins import PROVIDERS_GROUP, is_dotted_path, load_plugin
    from testhelix.llm import registry
    from testhelix.llm.base import ChatModel, Completion, Message, ModelError, ModelRequest, ToolSpec
    from testhelix.llm.provider_protocol import (
        MakesOptimizerModels,
        ModelProvider,
        ServesTestDoubles,
        SuggestsConcurrency,
    )

    spec = name.split("/", 1)[0] if is_dotted_path(name) else name
    provider = load_plugin(spec, group=PROVIDERS_GROUP, builtins=registry.PROVIDERS, option="NAME",
                           what="model provider")
    report.check(True, f"provider {spec!r} loads", type(provider).__name__)
    if not report.members(provider, ModelProvider, "provider"):
        return
    names = provider.credential_env_vars
    report.check(isinstance(names, tuple) and all(isinstance(n, str) for n in names),
                 "credential_env_vars is a tuple of variable names", ", ".join(names) or "none")
    report.abilities(provider, {"simulated": ServesTestDoubles, "concurrent_tasks": SuggestsConcurrency,
                                "create_optimizer": MakesOptimizerModels})
    if not model:
        report.note("give --model MODEL to resolve a model and send it one request")
        return
    full = f"{spec}/{model}" if is_dotted_path(spec) else f"{spec}:{model}"
    ok, ref = report.attempt(f"resolve {full!r}", lambda: registry.model_ref(full))
    if not ok:
        return
    info = ref.info
    report.check(info.context_window > 0 and info.max_output_tokens > 0, f"resolve {full!r}",
                 f"context window {info.context_window}, max output {info.max_output_tokens}")
    task = _a_task() if ref.simulated else None  # a test double plays a task; a real model needs none
    try:
        made = registry.create_model(ref, task=task, max_retries=0, timeout_s=60)
    except ModelError as err:
        report.check(False, "create a model", f"{type(err).__name__}: {err} (credentials: {', '.join(names)})")
        return
    report.check(isinstance(made, ChatModel) and made.context_window > 0, "create a ChatModel",
                 type(made).__name__)
    tool = ToolSpec("run_tests", "Run the test suite.", {"type": "object", "properties": {}})
    request = ModelRequest(messages=(Message("system", "You write tests."),
                                     Message("user", "Say hello, or call run_tests.")),
                           tools=(tool,), max_output_tokens=256)
    ok, reply = report.attempt("answer a request", lambda: made.complete(request))
    if not ok:
        return
    well_formed = (isinstance(reply, Completion) and isinstance(reply.text, str)
                   and isinstance(reply.tool_calls, tuple) and reply.stop_reason in
                   ("end_turn", "tool_use", "max_tokens", "refusal", "other"))
    if not report.check(well_formed, "answer a request with a Completion",
                        f"stop {reply.stop_reason}, {len(reply.tool_calls)} tool call(s), {reply.usage.input_tokens}"
                        f"+{reply.usage.output_tokens} tokens" if well_formed else f"got {reply!r}"):
        return
    report.check(not ref.simulated or reply.simulated, "a test double's reply is marked simulated",
                 "simulated" if ref.simulated else "a real model")


def _a_task() -> Any:
    from testhelix.core.bundled_data import bundled_pack
    from testhelix.tasks.task import load_task

    pack = bundled_pack("katas")
    return load_task(sorted(p for p in pack.iterdir() if (p / "task.toml").is_file())[0])


# --- sandboxes and executors ----------------------------------------------------------------------

PROGRAM = {"calc.py": "def add(a, b):\n    return a + b\n"}
SUITES = {  # name -> (files, the status a conforming backend reports)
    "passing": ({"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"}, "pass"),
    "failing": ({"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 4\n"}, "fail"),
    "collecting no test": ({"test_calc.py": "# no test here\n"}, "error"),
}


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


def exercise_executor(executor: Any, report: CheckReport, what: str) -> None:
    """Three tiny suites on a tiny program: pass, fail and error, each as expected; a repetition
    agrees. `executor` is what the seam made (the backend behind the outcome cache)."""
    from testhelix.execution.outcome import Limits, Outcome

    limits = Limits(wall_s=60, cpu_s=60)
    with tempfile.TemporaryDirectory(prefix="testhelix-plugin-check-") as tmp:
        program = _write(Path(tmp) / "program", PROGRAM)
        suites = {name: _write(Path(tmp) / f"suite{i}", files) for i, (name, (files, _)) in enumerate(SUITES.items())}
        ok, _ = report.attempt(f"{what}: prepare trees", lambda: executor.prepare([program, *suites.values()]))
        if not ok:
            return
        ok, outcomes = report.attempt(f"{what}: run_many", lambda: executor.run_many(
            [(suite, program) for suite in suites.values()], limits))
        if not ok:
            return
        for (name, (_, expected)), outcome in zip(SUITES.items(), outcomes):
            got = outcome.status if isinstance(outcome, Outcome) else repr(outcome)
            report.check(got == expected, f"{what}: a {name} suite is {expected}",
                         f"got {got}" + (f" ({outcome.reason})" if isinstance(outcome, Outcome) and outcome.reason else ""))
        ok, again = report.attempt(f"{what}: run_repeat", lambda: executor.run_repeat(
            suites["failing"], program, limits, 1))
        if ok:
            agrees = isinstance(again, Outcome) and again.status == "fail" and not again.cached
            report.check(agrees, f"{what}: a repetition runs again and agrees",
                         f"got {again.status if isinstance(again, Outcome) else repr(again)}")


def check_sandbox(spec: str, report: CheckReport) -> None:
    from testhelix.execution.seam import create_executor, select_sandbox

    sandbox = select_sandbox(spec)  # loads it and checks the Sandbox members (UserError: exit 2)
    report.check(True, f"sandbox {spec!r} loads and declares every Sandbox member", f"kind {sandbox.kind}")
    ok, executor = report.attempt("start the fork-server pool in it", lambda: create_executor(
        "forkserver", workers=1, sandbox=spec))
    if ok:
        with executor:
            exercise_executor(executor, report, f"sandbox {sandbox.kind}")


def check_executor(spec: str, report: CheckReport) -> None:
    from testhelix.execution.cached_executor import RunsDigested
    from testhelix.execution.environments import RunsEnvironments
    from testhelix.execution.protocols import Executor, RunsTrusted
    from testhelix.execution.seam import create_executor

    ok, executor = report.attempt(f"executor {spec!r} is made by its factory",
                                  lambda: create_executor(spec, workers=1))
    if not ok:
        return
    with executor:
        backend = executor.inner
        report.check(True, f"executor {spec!r} loads", type(backend).__name__)
        report.abilities(backend, {"trusted": RunsTrusted, "for_environment": RunsEnvironments,
                                   "run_digested": RunsDigested})
        if report.members(backend, Executor, "executor"):
            exercise_executor(executor, report, f"executor {spec}")


# --- simulated roles -------------------------------------------------------------------------------

def check_simulated_role(spec: str, report: CheckReport) -> None:
    from testhelix.core.agent_roles import CANDIDATE_PHASES
    from testhelix.llm.base import Message
    from testhelix.llm.role_prompts import SINGLE_CALL_ROLES
    from testhelix.llm.sim.contributed import SimulatedRole, load_role

    role = load_role(spec)  # checks the SimulatedRole members (UserError: exit 2)
    report.check(True, f"simulated role {spec!r} loads and declares every SimulatedRole member",
                 type(role).__name__)
    agent_roles = {*CANDIDATE_PHASES, *(name for _, name in SINGLE_CALL_ROLES)}
    report.check(isinstance(role.name, str) and bool(role.name) and role.name not in agent_roles,
                 "its name is its own (no agent role's)", repr(role.name))
    unrelated = (Message("system", "You write tests."), Message("user", "Say hello."))
    ok, claimed = report.attempt("recognises() reads a request", lambda: role.recognises(unrelated))
    if ok:
        report.check(claimed is False, "it does not claim a request that is not its package's",
                     "declined" if claimed is False else f"returned {claimed!r}")
    report.note(f"{SimulatedRole.__name__}: to exercise its answers, send it requests of its package "
                "(e.g. through a simulated model: --model sim:strong)")


KINDS: dict[str, Callable[..., None]] = {"provider": check_provider, "sandbox": check_sandbox,
                                         "executor": check_executor, "simulated-role": check_simulated_role}

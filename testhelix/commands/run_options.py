"""The command-line options every command that runs models or suites shares, in one place.

`setup_options(...)` adds the chosen groups of options to a click command and hands the command one
`RunOptions` (keyword `options`) instead of a parameter per option; `RunOptions.setup(models)`
builds the run's `RunSetup` (testhelix/run/setup.py). The same option has the same name, range and
default rule on `testhelix run`, `testhelix evaluate`, `autosaddler search|resume|gate` and
`gtdd experiment|run` (README, "Options every command shares"):

- models: `--call-timeout`, `--context-window`, `--rpm`, `--tpm`;
- execution: `--executor`, `--sandbox` (defaults: $TESTHELIX_EXECUTOR, $TESTHELIX_SANDBOX);
- concurrency: `--jobs` (tasks in flight), `--workers` (execution slots), `--backend`, `--ray-address`.

A command's `--model` options use `MODEL` as their type: the name is resolved once, while the
command line is parsed, into a `ModelRef` (testhelix/llm/modelref.py) that everything below carries;
a bad name is a UserError naming it (exit 2).

"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from testhelix.core.inputs import FiniteFloat, PluginName
from testhelix.llm.modelref import ModelRef
from testhelix.llm.registry import model_ref
from testhelix.parallel.jobs import BACKENDS, default_jobs
from testhelix.run.setup import Concurrency, ExecutionChoice, ModelSettings, RunSetup

JOBS_RANGE = click.IntRange(1, 256)
WORKERS_RANGE = click.IntRange(1, 64)

F = TypeVar("F", bound=Callable[..., Any])


class ModelName(click.ParamType):
    """A `--model` value, resolved once into a ModelRef (unknown names, bad options: UserError)."""

    name = "model"

    def convert(self, value: Any, param: click.Parameter | None,  # noqa: ARG002 - click's signature
                ctx: click.Context | None) -> ModelRef:  # noqa: ARG002 - click's signature
        return value if isinstance(value, ModelRef) else model_ref(str(value))


MODEL = ModelName()


@dataclass(frozen=True)
class RunOptions:
    """The shared options as given (None: not given)."""

    call_timeout: float | None = None
    context_window: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    executor: str | None = None
    sandbox: str | None = None
    jobs: int | None = None
    workers: int | None = None
    backend: str = "local"
    ray_address: str | None = None

    def models(self, refs: Sequence[ModelRef | str]) -> ModelSettings:
        return ModelSettings.for_models(list(refs), self.call_timeout, self.context_window, self.rpm, self.tpm)

    def execution(self) -> ExecutionChoice:
        """The executor and sandbox choice, checked and the environment read once per command."""
        return self._execution

    @functools.cached_property
    def _execution(self) -> ExecutionChoice:
        return ExecutionChoice.from_options(self.executor, self.sandbox)

    def sandbox_choice(self) -> str | None:
        """The sandbox alone (commands that run no executor, e.g. GTDD's trace isolation), checked."""
        return self.execution().sandbox

    def tasks_in_flight(self, refs: Sequence[ModelRef]) -> int:
        """`--jobs`, else what the models' providers suggest (testhelix.parallel.default_jobs)."""
        return self.jobs or default_jobs(refs)

    def setup(self, refs: Sequence[ModelRef], execution_slots: int | None = None) -> RunSetup:
        """The run's setup for these models. `execution_slots`: the default when --workers is not
        given (a search's settings); without either, one slot per core."""
        from testhelix.core.errors import UserError

        if self.ray_address and self.backend != "ray":
            raise UserError("--ray-address needs --backend ray")
        slots = self.workers or execution_slots
        concurrency = Concurrency(self.tasks_in_flight(refs)) if slots is None else \
            Concurrency(self.tasks_in_flight(refs), slots)
        return RunSetup(models=self.models(refs), execution=self.execution(), concurrency=concurrency,
                        backend=self.backend, ray_address=self.ray_address)


_MODEL_OPTIONS = [
    click.option("--call-timeout", "call_timeout", type=FiniteFloat(1, 86_400),
                 help="Upper bound (s) on one model call; the task's remaining working time bounds every call anyway."),
    click.option("--context-window", "context_window", type=click.IntRange(1024, 10_000_000),
                 help="The model's context window in tokens (for openai-compatible servers; models.toml knows the "
                      "others)."),
    click.option("--rpm", type=FiniteFloat(0.1, 1e7), help="Requests per minute allowed per model (shared by all work)."),
    click.option("--tpm", type=FiniteFloat(1, 1e12), help="Tokens per minute allowed per model (shared by all work)."),
]
_SANDBOX_OPTION = click.option(
    "--sandbox", "sandbox", default=None, type=PluginName(),
    help="Sandbox: namespaced, plain, package.module:CLASS or a testhelix.sandboxes entry point "
         "(default: $TESTHELIX_SANDBOX, else the strongest available).")
_EXECUTOR_OPTION = click.option(
    "--executor", "executor", default=None, type=PluginName(),
    help="Execution backend: forkserver, package.module:FACTORY or a testhelix.executors entry point "
         "(default: $TESTHELIX_EXECUTOR, else forkserver).")
_JOBS_OPTION = click.option(
    "--jobs", type=JOBS_RANGE, default=None,
    help="Task evaluations at once; above 1 the pairs of a task run concurrently too. Results are identical for "
         "every value. Default: by model kind (cores for simulated models, 8 for hosted APIs, 4 for an "
         "OpenAI-compatible server).")
_WORKERS_OPTION = click.option(
    "--workers", type=WORKERS_RANGE, default=None,
    help="Execution slots: suite executions at once (default: the search settings' `workers`, else one per core).")
_BACKEND_OPTIONS = [
    click.option("--backend", type=click.Choice(BACKENDS), default="local", show_default=True,
                 help="Where task evaluations run: threads here, or a Ray cluster (pip install -e '.[ray]')."),
    click.option("--ray-address", default=None,
                 help="Ray cluster to join (with --backend ray); without it a local cluster is started."),
]


def setup_options(*, models: bool = True, execution: bool = True, jobs: bool = True, workers: bool = True,
                  backend: bool = True, sandbox_only: bool = False) -> Callable[[F], F]:
    """Add the chosen shared options to a command; it receives them as one `options: RunOptions`."""
    chosen: list[Callable[[Any], Any]] = []
    if models:
        chosen += _MODEL_OPTIONS
    if execution:
        chosen += [_SANDBOX_OPTION] if sandbox_only else [_EXECUTOR_OPTION, _SANDBOX_OPTION]
    if jobs:
        chosen.append(_JOBS_OPTION)
    if workers:
        chosen.append(_WORKERS_OPTION)
    if backend:
        chosen += _BACKEND_OPTIONS
    names = _option_names(chosen)   # only the options added here (a command may have its own --jobs)

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {n: kwargs.pop(n) for n in names if n in kwargs}
            options = RunOptions(**given)
            if options.executor or options.sandbox:
                options.execution()   # a bad --executor / --sandbox stops the command before anything else
            return f(*args, options=options, **kwargs)

        out: Any = wrapper
        for option in reversed(chosen):
            out = option(out)
        return out

    return decorate


def _option_names(options: list[Callable[[Any], Any]]) -> list[str]:
    def probe() -> None:
        pass

    for option in options:
        option(probe)
    return [p.name for p in getattr(probe, "__click_params__", []) if p.name]

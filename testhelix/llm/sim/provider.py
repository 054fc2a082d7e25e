"""The simulated provider (`sim:NAME?seed=N&noise=P&latency=S`): test doubles that read the task's
simulation bank (this package). `resolve` parses the name and its options once; `create`, the
default concurrency and AutoSaddler's optimizer double read them from the resolved `ModelInfo`."""

from __future__ import annotations

from typing import Any

from testhelix.core.errors import UserError
from testhelix.llm.base import ChatModel
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.sim.options import SimOptions, parse_sim_name
from testhelix.llm.sim.profiles import get_profile


def sim_options(info: ModelInfo) -> SimOptions:
    return info.options if isinstance(info.options, SimOptions) else SimOptions()


class SimulatedProvider:
    name = "sim"
    credential_env_vars: tuple[str, ...] = ()
    simulated = True

    def concurrent_tasks(self, info: ModelInfo, cores: int) -> int:
        """Without latency a simulated model is CPU-bound (one task per core); with `?latency=` it
        stands in for a hosted API that mostly waits (8)."""
        return 8 if sim_options(info).latency > 0 else cores

    def create_optimizer(self, name: str, info: ModelInfo, *, seed: int) -> ChatModel:  # noqa: ARG002 - the hook's signature
        """A double that plays no task (so `create` cannot serve it) and answers the simulated roles
        other packages contribute: AutoSaddler's optimizer sessions (sim/contributed.py)."""
        from testhelix.llm.sim.contributed import ContributedRoleModel
        return ContributedRoleModel(info, seed=seed)

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        base, options = parse_sim_name(name)          # the one parse of `?seed=N&noise=P&latency=S`
        profile = get_profile(base[4:])
        return ModelInfo(name=base, provider="sim", model=profile.name, api="sim",
                         context_window=profile.context_window, max_output_tokens=profile.max_output_tokens,
                         prices=None, options=options)

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int,
               http_client: Any, max_retries: int, timeout_s: float | None,  # noqa: ARG002 - ModelProvider's signature
               max_retry_wait_s: float) -> ChatModel:  # noqa: ARG002 - ModelProvider's signature
        from testhelix.llm.sim.latency import LatencyModel
        from testhelix.llm.sim.model import SimulatedModel
        if task is None:
            raise UserError(f"{name}: a simulated model needs the task it plays (task=...)")
        options = sim_options(info)     # `?seed=N&noise=P` choose the agent and its sampling noise
        model: ChatModel = SimulatedModel(info, task=task, seed=seed, options=options)
        # `?latency=SECONDS`: the same answers, each after a delay
        return LatencyModel(model, options.latency) if options.latency > 0 else model


SIMULATED = SimulatedProvider()

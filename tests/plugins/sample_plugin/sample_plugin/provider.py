"""A model provider outside the project: `--model sample:PROFILE` (entry point) or
`--model sample_plugin.provider:PROVIDER/PROFILE` (dotted path).

It serves the project's simulated models under its own name, and behaves like a hosted provider
in the one way that matters for the seam: it needs a credential, read from the variable it
declares (SAMPLE_PLUGIN_API_KEY), which executed code must never see. Its models are test doubles,
and it says so (`simulated = True`), so every output they produce is labelled simulated.
"""

from __future__ import annotations

import os
from typing import Any

from testhelix.core.errors import UserError
from testhelix.llm.base import ChatModel, ModelAuthError
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.sim.profiles import get_profile

KEY_VAR = "SAMPLE_PLUGIN_API_KEY"


class SampleProvider:
    name = "sample"
    credential_env_vars: tuple[str, ...] = (KEY_VAR,)
    simulated = True  # it serves test doubles: every output says so (ModelRef.simulated)

    def resolve(self, name: str, model: str) -> ModelInfo:
        if not model:
            raise UserError(f"model {name!r}: expected sample:PROFILE")
        profile = get_profile(model)
        return ModelInfo(name=name, provider=self.name, model=profile.name, api="sim",
                         context_window=profile.context_window, max_output_tokens=profile.max_output_tokens,
                         prices=None)

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int, http_client: Any, max_retries: int,
               timeout_s: float | None, max_retry_wait_s: float) -> ChatModel:
        from testhelix.llm.sim.model import SimulatedModel

        if not os.environ.get(KEY_VAR):
            raise ModelAuthError(f"{KEY_VAR} is not set: export it to use {name}")
        if task is None:
            raise UserError(f"{name}: this provider plays a task (task=...)")
        return SimulatedModel(info, task=task, seed=seed)


PROVIDER = SampleProvider()

"""The built-in model providers, each one small object behind the `ModelProvider` protocol.

registry.py finds a provider by the part of a model name before the first ':' (a built-in name
here, a `testhelix.providers` entry point, or `package.module:OBJECT/MODEL`) and never branches on
which one it got. A provider outside the project implements the same protocol
(provider_protocol.py, with the optional abilities a provider may declare) and declares the
environment variables holding its credentials in `credential_env_vars`; no edit of models.toml
or of any tuple in the project is needed. `testhelix plugin check provider NAME` checks one.
"""

from __future__ import annotations

from typing import Any

from testhelix.errors import UserError
from testhelix.llm.base import ANTHROPIC_KEY_ENV, OPENAI_COMPATIBLE_KEY_ENV, OPENAI_KEY_ENV, ChatModel
from testhelix.llm.modeltable import provider_defaults
from testhelix.llm.provider_protocol import ModelInfo, ModelProvider
from testhelix.llm.registry import COMPATIBLE_NAME, REGISTRY_FILE, listed_model
from testhelix.llm.sdk_model import SdkChatModel


class _SdkProvider:
    """A vendor's models, any model id (prices and limits from the model table when listed there),
    served through its SDK (sdk_model.py)."""

    name: str
    credential_env_vars: tuple[str, ...]
    credentials_required = True   # NeedsCredentials: a hosted API answers nothing without its key

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        return listed_model(name)

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int,  # noqa: ARG002 - ModelProvider's signature
               http_client: Any, max_retries: int, timeout_s: float | None, max_retry_wait_s: float) -> ChatModel:
        return self._model_class()(info, http_client=http_client, max_retries=max_retries, timeout_s=timeout_s,
                                   max_retry_wait_s=max_retry_wait_s)

    # No `concurrent_tasks`: a hosted API gets registry.HOSTED_API_TASKS, the default for any provider.

    def _model_class(self) -> type[SdkChatModel]:
        """Imported on first use: a run without this vendor's models never loads its SDK."""
        raise NotImplementedError


class AnthropicProvider(_SdkProvider):
    name = "anthropic"
    credential_env_vars = (ANTHROPIC_KEY_ENV,)

    def _model_class(self) -> type[SdkChatModel]:
        from testhelix.llm.anthropic_provider import AnthropicModel
        return AnthropicModel


class OpenAIProvider(_SdkProvider):
    name = "openai"
    credential_env_vars = (OPENAI_KEY_ENV,)

    def _model_class(self) -> type[SdkChatModel]:
        from testhelix.llm.openai_provider import OpenAIModel
        return OpenAIModel


def url_problem(url: str) -> str | None:
    """What is wrong with a server URL, checked when it is given (not when the first request fails
    and would be recorded as a provider outage): scheme, host, port range, brackets of an IPv6 host."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port out of 0-65535 or not a number
    except ValueError as err:
        return f"does not parse ({err}): {url!r}"
    if parts.scheme not in ("http", "https"):
        return f"must start with http:// or https://, got {url!r}"
    if not parts.hostname:
        return f"has no host: {url!r}"
    if port == 0:
        return f"has port 0, which no server listens on: {url!r}"
    return None


class OpenAICompatibleProvider(OpenAIProvider):
    """Any server speaking Chat Completions (vLLM, Ollama, llama.cpp); cost unknown."""

    name = "openai-compatible"
    credential_env_vars = (OPENAI_COMPATIBLE_KEY_ENV,)
    credentials_required = False   # local servers usually take any key (openai_provider.py sends "no-key")

    def concurrent_tasks(self, name: str, cores: int) -> int:  # noqa: ARG002 - the optional hook's signature
        return 4  # such a server often runs on this machine or a small one: it shares its hardware

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        m = COMPATIBLE_NAME.match(name)
        if not m:
            raise UserError(f"model {name!r}: malformed OpenAI-compatible name; expected "
                            "openai-compatible:NAME@http://HOST:PORT/v1 (an http:// or https:// URL after '@')")
        problem = url_problem(m["url"])
        if problem:
            raise UserError(f"model {name!r}: the URL after '@' {problem}")
        d = provider_defaults("openai-compatible")
        return ModelInfo(name=name, provider="openai-compatible", model=m["model"], api=d["api"],
                         context_window=int(d["context_window"]), max_output_tokens=int(d["max_output_tokens"]),
                         prices=None, base_url=m["url"])


class SimulatedProvider:
    """Simulated models (test doubles reading the task's simulation bank), see testhelix/llm/sim."""

    name = "sim"
    credential_env_vars: tuple[str, ...] = ()
    simulated = True

    def concurrent_tasks(self, name: str, cores: int) -> int:
        """Without latency a simulated model is CPU-bound (one task per core); with `?latency=` it
        stands in for a hosted API that mostly waits (8)."""
        from testhelix.llm.sim.latency import split_sim_options
        return 8 if split_sim_options(name)[1] > 0 else cores

    def create_optimizer(self, name: str, info: ModelInfo, *, seed: int) -> ChatModel:  # noqa: ARG002 - the hook's signature
        """A double that plays no task (so `create` cannot serve it) and answers the simulated roles
        other packages contribute: AutoSaddler's optimizer sessions (sim/contributed.py)."""
        from testhelix.llm.sim.contributed import ContributedRoleModel
        return ContributedRoleModel(info, seed=seed)

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        from testhelix.llm.sim.latency import split_sim_options
        from testhelix.llm.sim.profiles import get_profile
        name = split_sim_options(name)[0]          # the options act in `create`
        profile = get_profile(name[4:])
        return ModelInfo(name=name, provider="sim", model=profile.name, api="sim",
                         context_window=profile.context_window, max_output_tokens=profile.max_output_tokens,
                         prices=None)

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int,
               http_client: Any, max_retries: int, timeout_s: float | None,  # noqa: ARG002 - ModelProvider's signature
               max_retry_wait_s: float) -> ChatModel:  # noqa: ARG002 - ModelProvider's signature
        from testhelix.llm.sim.latency import LatencyModel
        from testhelix.llm.sim.model import SimulatedModel
        from testhelix.llm.sim.options import parse_sim_name
        if task is None:
            raise UserError(f"{name}: a simulated model needs the task it plays (task=...)")
        options = parse_sim_name(name)[1]   # `?seed=N&noise=P` choose the agent and its sampling noise
        model: ChatModel = SimulatedModel(info, task=task, seed=seed, options=options)
        # `?latency=SECONDS`: the same answers, each after a delay
        return LatencyModel(model, options.latency) if options.latency > 0 else model


ANTHROPIC = AnthropicProvider()
OPENAI = OpenAIProvider()
OPENAI_COMPATIBLE = OpenAICompatibleProvider()
SIMULATED = SimulatedProvider()
__all__ = ["ModelProvider", "ANTHROPIC", "OPENAI", "OPENAI_COMPATIBLE", "SIMULATED", "REGISTRY_FILE"]

"""What a model provider is (`ModelProvider`) and what it may optionally declare.

A provider is found by the prefix of a model name (registry.py) and never branched on by name:
what differs between providers is declared here. The required members are `ModelProvider`'s; an
optional ability is a small runtime-checkable Protocol that registry.py tests with `isinstance`
(the member lists come from the Protocols themselves: `testhelix.core.plugins.protocol_members`).
This module imports nothing of the registry, so the registry and every provider module (anthropic.py,
openai.py, openai_compatible.py, local.py, sim/provider.py) can use it; it also holds what `resolve`
returns (`ModelInfo`, `Prices`) and what a call costs (`price_usage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from testhelix.llm.base import ChatModel


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; cache prices default to the input price when not listed."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True)
class ModelInfo:
    name: str                   # canonical, e.g. "anthropic:claude-opus-4-6"
    provider: str               # anthropic | openai | openai-compatible | local | sim
    model: str                  # the provider's own model id (or the sim profile name)
    api: str                    # messages | chat | responses | local | sim
    context_window: int
    max_output_tokens: int
    prices: Prices | None
    base_url: str | None = None
    requests_per_minute: float | None = None   # the shared limiter's defaults (see ratelimit.py)
    tokens_per_minute: float | None = None
    # What else the provider read from the name, parsed once by its `resolve` (frozen and picklable;
    # e.g. the simulated provider's `?seed=N&noise=P&latency=S` as sim/options.SimOptions). `create`
    # and the provider's optional hooks read it here instead of parsing the name again.
    options: Any = None


def price_usage(info: ModelInfo, input_tokens: int, output_tokens: int,
                cache_read_tokens: int = 0, cache_write_tokens: int = 0) -> float | None:
    """Cost of one call; `input_tokens` includes the cached parts (normalised usage)."""
    p = info.prices
    if p is None:
        return None
    fresh = max(0, input_tokens - cache_read_tokens - cache_write_tokens)
    read = p.cache_read if p.cache_read is not None else p.input
    write = p.cache_write if p.cache_write is not None else p.input
    return (fresh * p.input + cache_read_tokens * read + cache_write_tokens * write
            + output_tokens * p.output) / 1_000_000


class ModelProvider(Protocol):
    name: str  # the prefix of its model names, e.g. "anthropic" in anthropic:claude-opus-4-6
    credential_env_vars: tuple[str, ...]  # read by the provider only; never reach executed code

    def resolve(self, name: str, model: str) -> ModelInfo: ...  # name = "PREFIX:MODEL" after aliases

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int, http_client: Any, max_retries: int,
               timeout_s: float | None, max_retry_wait_s: float) -> ChatModel: ...


@runtime_checkable
class ServesTestDoubles(Protocol):
    """A provider whose models are test doubles (`simulated = True`): every output they produce is
    labelled simulated. The registry asks once, when it resolves a name (`ModelRef.simulated`)."""

    simulated: bool


@runtime_checkable
class NeedsCredentials(Protocol):
    """A provider whose models cannot answer without one of its `credential_env_vars` set (a hosted
    API), so a command refuses such a model before it creates any folder or store
    (`ModelRef.require_credentials`) rather than after the first request fails."""

    credentials_required: bool


@runtime_checkable
class SuggestsConcurrency(Protocol):
    """A provider that says how many tasks `--jobs` runs at once by default for a model it resolved
    (registry.model_ref asks once; a provider without it gets registry.HOSTED_API_TASKS)."""

    def concurrent_tasks(self, info: ModelInfo, cores: int) -> int: ...


@runtime_checkable
class MakesOptimizerModels(Protocol):
    """A provider that gives AutoSaddler's optimizer sessions a different model than `create`
    (registry.create_optimizer_model; the simulated provider: a double that plays no task)."""

    def create_optimizer(self, name: str, info: ModelInfo, *, seed: int) -> ChatModel: ...

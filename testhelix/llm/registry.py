"""Model names -> model objects, using the one registry file models.toml.

Public API:
    resolve(name) -> ModelInfo          # alias expansion, context window, prices, wire API
    create_model(name, ...) -> ChatModel
    price_usage(info, ...) -> float | None

Accepted names: `anthropic:MODEL`, `openai:MODEL` (listed in models.toml), aliases from its
[aliases] table, `openai-compatible:NAME@http://HOST:PORT/v1` (any server speaking the Chat
Completions protocol: vLLM, Ollama, llama.cpp; cost unknown), and `sim:NAME` (simulated models,
see testhelix/llm/sim). Unknown names raise UserError naming the registry file, so a typo never
silently reaches a provider.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from testhelix.errors import UserError
from testhelix.llm.base import ChatModel

REGISTRY_FILE = Path(__file__).with_name("models.toml")
_COMPATIBLE = re.compile(r"^openai-compatible:(?P<model>[^@\s]+)@(?P<url>https?://[^\s]+)$")


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
    provider: str               # anthropic | openai | openai-compatible | sim
    model: str                  # the provider's own model id (or the sim profile name)
    api: str                    # messages | chat | responses | sim
    context_window: int
    max_output_tokens: int
    prices: Prices | None
    base_url: str | None = None
    requests_per_minute: float | None = None   # the shared limiter's defaults (see ratelimit.py)
    tokens_per_minute: float | None = None


@lru_cache(maxsize=1)
def _registry() -> dict[str, Any]:
    try:
        return tomllib.loads(REGISTRY_FILE.read_text())
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{REGISTRY_FILE}: not valid TOML: {err}") from None


def _prices(entry: dict) -> Prices | None:
    if "input_usd_per_mtok" not in entry or "output_usd_per_mtok" not in entry:
        return None
    return Prices(input=float(entry["input_usd_per_mtok"]), output=float(entry["output_usd_per_mtok"]),
                  cache_read=entry.get("cache_read_usd_per_mtok"), cache_write=entry.get("cache_write_usd_per_mtok"))


def resolve(name: str) -> ModelInfo:
    reg = _registry()
    name = reg.get("aliases", {}).get(name, name)
    m = _COMPATIBLE.match(name)
    if m:
        d = reg["openai-compatible"]
        return ModelInfo(name=name, provider="openai-compatible", model=m["model"], api=d["api"],
                         context_window=int(d["context_window"]), max_output_tokens=int(d["max_output_tokens"]),
                         prices=None, base_url=m["url"])
    if name.startswith("openai-compatible:"):
        raise UserError(f"model {name!r}: malformed OpenAI-compatible name; expected "
                        "openai-compatible:NAME@http://HOST:PORT/v1 (an http:// or https:// URL after '@')")
    if name.startswith("sim:"):
        from testhelix.llm.sim.latency import split_sim_options
        from testhelix.llm.sim.profiles import get_profile
        name = split_sim_options(name)[0]          # `?latency=SECONDS` changes timing only (see create_model)
        profile = get_profile(name[4:])
        return ModelInfo(name=name, provider="sim", model=profile.name, api="sim",
                         context_window=profile.context_window, max_output_tokens=profile.max_output_tokens,
                         prices=None)
    entry = reg.get("models", {}).get(name)
    if entry is None:
        known = ", ".join(sorted(reg.get("models", {})) + sorted(reg.get("aliases", {})))
        raise UserError(f"unknown model {name!r}: add it to {REGISTRY_FILE} or use one of: {known}; "
                        "OpenAI-compatible servers are named openai-compatible:NAME@http://HOST:PORT/v1")
    provider, _, model = name.partition(":")
    return ModelInfo(name=name, provider=provider, model=model, api=entry["api"],
                     context_window=int(entry["context_window"]),
                     max_output_tokens=int(entry["max_output_tokens"]), prices=_prices(entry),
                     requests_per_minute=entry.get("requests_per_minute"),
                     tokens_per_minute=entry.get("tokens_per_minute"))


def model_label(name: str) -> str:
    """The name a run label uses: a compatible server without its URL (the port may change)."""
    m = _COMPATIBLE.match(name)
    return f"openai-compatible:{m['model']}" if m else name


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


def create_model(name: str, *, task: Any = None, seed: int = 0, http_client: Any = None,
                 max_retries: int = 2, timeout_s: float | None = None,
                 context_window: int | None = None, max_retry_wait_s: float = 30.0) -> ChatModel:
    """Build the model for `name`.

    `task` (a testhelix.tasks.task.Task) is required by simulated models only: they are test
    doubles that read the task's simulation bank. `http_client` lets tests inject an
    `httpx2.Client(transport=httpx2.MockTransport(...))`. `max_retries` is handed to the SDK, which
    is the single place where transient failures are retried.
    """
    info = resolve(name)
    context_window = context_window or _CONTEXT_OVERRIDES.get(name)
    if context_window is not None:
        info = ModelInfo(**{**info.__dict__, "context_window": int(context_window)})
    if info.provider == "sim":
        from testhelix.llm.sim.model import SimulatedModel
        if task is None:
            raise UserError(f"{name}: a simulated model needs the task it plays (task=...)")
        return _with_sim_latency(name, SimulatedModel(info, task=task, seed=seed))
    if info.provider == "anthropic":
        from testhelix.llm.anthropic_provider import AnthropicModel
        return AnthropicModel(info, http_client=http_client, max_retries=max_retries, timeout_s=timeout_s,
                              max_retry_wait_s=max_retry_wait_s)
    from testhelix.llm.openai_provider import OpenAIModel
    return OpenAIModel(info, http_client=http_client, max_retries=max_retries, timeout_s=timeout_s,
                       max_retry_wait_s=max_retry_wait_s)


# `--context-window` for compatible servers whose window models.toml cannot know: set once per
# process by the command, read by every create_model for that name.
_CONTEXT_OVERRIDES: dict[str, int] = {}


def set_context_window(name: str, tokens: int) -> None:
    if tokens < 1024:
        raise UserError(f"--context-window must be at least 1024 tokens, got {tokens}")
    _CONTEXT_OVERRIDES[name] = int(tokens)


def _with_sim_latency(name: str, model: ChatModel) -> ChatModel:
    """`sim:NAME?latency=SECONDS`: the same simulated answers, each after a delay (testhelix/llm/sim/latency.py)."""
    from testhelix.llm.sim.latency import LatencyModel, split_sim_options
    latency = split_sim_options(name)[1]
    return LatencyModel(model, latency) if latency > 0 else model


def create_optimizer_model(name: str, *, seed: int = 0, timeout_s: float | None = None) -> ChatModel:
    """The model for AutoSaddler's optimizer sessions (a simulated one needs no task)."""
    info = resolve(name)
    if info.provider == "sim":
        from testhelix.llm.sim.optimizer import SimulatedOptimizer
        return SimulatedOptimizer(info, seed=seed)
    return create_model(name, timeout_s=timeout_s)

"""Model names -> model objects, using the model table (models.toml and the user's file, modeltable.py).

Public API:
    resolve(name) -> ModelInfo          # alias expansion, context window, prices, wire API
    create_model(name, ...) -> ChatModel
    price_usage(info, ...) -> float | None

Accepted names: `anthropic:MODEL`, `openai:MODEL` (any model id: one listed in models.toml or in the
user's own file (modeltable.py) has its prices and limits, any other runs with its provider's
[unlisted] defaults and unpriced, said once on stderr), aliases from the [aliases] tables,
`openai-compatible:NAME@http://HOST:PORT/v1` (any server speaking the Chat Completions protocol:
vLLM, Ollama, llama.cpp; unpriced), `local:NAME` or `local:/path/model.gguf`
(a GGUF model on this machine's CPU, testhelix/llm/local.py; the `local` extra), and `sim:NAME`
(simulated models, see testhelix/llm/sim). A name with an unknown prefix raises UserError.

Providers are objects behind `provider_protocol.ModelProvider`, found by the name's prefix: the built-ins
(PROVIDERS), a `testhelix.providers` entry point (`--model PREFIX:MODEL`), or a dotted path
(`--model package.module:OBJECT/MODEL`). A provider declares its own credential variables
(`credential_env_vars()` lists them all) and its optional abilities as the capability Protocols of
provider_protocol.py (tested with isinstance); nothing here branches on which provider a name names.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import replace
from typing import Any

from testhelix.errors import UserError
from testhelix.llm.base import CREDENTIAL_ENV_VARS, ChatModel
from testhelix.llm.modeltable import PACKAGE_FILE, provider_defaults, table, user_models_file
from testhelix.llm.provider_protocol import (
    MakesOptimizerModels,
    ModelInfo,
    ModelProvider,
    NeedsCredentials,
    Prices,
    ServesTestDoubles,
    SuggestsConcurrency,
)
from testhelix.plugins import PROVIDERS_GROUP, entry_point_names, load_plugin, missing_members

REGISTRY_FILE = PACKAGE_FILE
COMPATIBLE_NAME = _COMPATIBLE = re.compile(r"^openai-compatible:(?P<model>[^@\s]+)@(?P<url>https?://[^\s]+)$")
_UNPRICED: set[str] = set()     # hosted models resolved without prices in this process
_NOTED: set[str] = set()        # ... and already said so on stderr (once per command)


def _prices(entry: dict) -> Prices | None:
    if "input_usd_per_mtok" not in entry or "output_usd_per_mtok" not in entry:
        return None
    return Prices(input=float(entry["input_usd_per_mtok"]), output=float(entry["output_usd_per_mtok"]),
                  cache_read=entry.get("cache_read_usd_per_mtok"), cache_write=entry.get("cache_write_usd_per_mtok"))


# Built-in providers (testhelix/llm/providers.py); others come from the `testhelix.providers` entry
# point group or a dotted path `package.module:OBJECT/MODEL` (see _provider).
PROVIDERS = {"anthropic": "testhelix.llm.providers:ANTHROPIC", "openai": "testhelix.llm.providers:OPENAI",
             "openai-compatible": "testhelix.llm.providers:OPENAI_COMPATIBLE",
             "sim": "testhelix.llm.providers:SIMULATED", "local": "testhelix.llm.local:LOCAL"}
_LOADED: dict[str, Any] = {}  # provider prefix -> provider object, for credential_env_vars()


def _unknown(name: str) -> UserError:
    reg = table()
    known = ", ".join(sorted(reg.get("models", {})) + sorted(reg.get("aliases", {})))
    plugins = entry_point_names(PROVIDERS_GROUP)
    more = f"; plug-in providers: {', '.join(p + ':MODEL' for p in plugins)}" if plugins else ""
    return UserError(f"unknown model {name!r}: use anthropic:MODEL or openai:MODEL (any model id) or one of: {known}; "
                     "OpenAI-compatible servers are named openai-compatible:NAME@http://HOST:PORT/v1; "
                     f"a provider outside the project is PROVIDER:MODEL (a {PROVIDERS_GROUP} entry point) "
                     f"or package.module:OBJECT/MODEL{more}")


def _provider(name: str) -> tuple[ModelProvider, str]:
    """(provider object, model id) for an alias-expanded name, without branching on which provider."""
    prefix, colon, rest = name.partition(":")
    if not colon:
        raise _unknown(name)
    if "." in prefix:  # package.module:OBJECT/MODEL
        obj, _, model = rest.partition("/")
        provider = load_plugin(f"{prefix}:{obj}", group=PROVIDERS_GROUP, builtins={}, option="--model",
                               what="model provider")
        key = f"{prefix}:{obj}"
    elif prefix in PROVIDERS or prefix in entry_point_names(PROVIDERS_GROUP):
        provider = load_plugin(prefix, group=PROVIDERS_GROUP, builtins=PROVIDERS, option="--model",
                               what="model provider")
        key, model = prefix, rest
    else:
        raise _unknown(name)
    missing = missing_members(provider, ModelProvider)
    if missing:
        raise UserError(f"--model {name!r}: the provider lacks {', '.join(missing)} "
                        "(see testhelix/llm/provider_protocol.py)")
    _LOADED[key] = provider
    return provider, model


def _canonical(name: str) -> str:
    """The name with an alias from models.toml's [aliases] expanded."""
    return table().get("aliases", {}).get(name, name)


def resolve(name: str) -> ModelInfo:
    """The model a name means, checked at a command's edge: a hosted model without prices is said
    once on stderr (its cost shows as unpriced wherever cost appears)."""
    name = _canonical(name)
    provider, model = _provider(name)
    info = provider.resolve(name, model)
    if name in _UNPRICED and name not in _NOTED:
        _NOTED.add(name)
        print(unpriced_note(name), file=sys.stderr)
    return info


def unpriced_note(name: str) -> str:
    listed = table().get("models", {})
    close = difflib.get_close_matches(name, [n for n in listed if n.startswith(name.partition(":")[0] + ":")], n=1)
    hint = f" (did you mean {close[0]}?)" if close and close[0] != name else ""
    return (f"note: {name} has no known prices{hint}: it runs unpriced and its cost is shown as unpriced; "
            f"prices and limits go in {user_models_file()}")


def listed_model(name: str) -> ModelInfo:
    """A hosted model (the Anthropic and OpenAI providers): its entry in the model table, laid over
    its provider's [unlisted.PROVIDER] defaults; any model id is accepted."""
    provider, _, model = name.partition(":")
    defaults = provider_defaults(f"unlisted.{provider}")
    entry = {**defaults, **table().get("models", {}).get(name, {})}
    if not model or "api" not in entry:
        raise _unknown(name)
    if _prices(entry) is None:
        _UNPRICED.add(name)
    return ModelInfo(name=name, provider=provider, model=model, api=entry["api"],
                     context_window=int(entry["context_window"]),
                     max_output_tokens=int(entry["max_output_tokens"]), prices=_prices(entry),
                     requests_per_minute=entry.get("requests_per_minute"),
                     tokens_per_minute=entry.get("tokens_per_minute"))


def credential_env_vars() -> tuple[str, ...]:
    """Every environment variable a known provider reads credentials from: the built-ins, the
    installed `testhelix.providers` entry points and any provider loaded by dotted path. None of
    them may reach executed code (the sandbox environment is an allow-list; tests check this)."""
    names = list(CREDENTIAL_ENV_VARS)
    for prefix in [*PROVIDERS, *entry_point_names(PROVIDERS_GROUP)]:
        try:
            _provider(f"{prefix}:")
        except UserError:
            continue  # a broken plug-in is reported when it is used
    for provider in list(_LOADED.values()):
        names += [n for n in provider.credential_env_vars if n not in names]
    return tuple(names)


def require_credentials(name: str) -> None:
    """Refuse a model whose provider needs a credential that no variable holds, before a command makes
    any folder or store (a refused start leaves nothing behind). The model itself checks again when it
    is built, for callers that skip this."""
    provider, _ = _provider(_canonical(name))
    if not (isinstance(provider, NeedsCredentials) and provider.credentials_required):
        return
    if not any(os.environ.get(var) for var in provider.credential_env_vars):
        raise UserError(f"{' or '.join(provider.credential_env_vars)} is not set: export it to use {name} "
                        "(nothing was created)")


def is_simulated(name: str) -> bool:
    """Whether a model name (or a run label starting with one) names a test double rather than a real
    model: its provider declares `simulated = True` (the built-in `sim:` models, or a plug-in that
    serves its own doubles). Reports call this on stored names, so a name that no longer resolves (a
    plug-in not installed here) counts as real."""
    name = str(name or "")
    try:
        provider, _ = _provider(_canonical(name))
    except UserError:
        return False
    return isinstance(provider, ServesTestDoubles) and bool(provider.simulated)


# What a provider without its own `concurrent_tasks` gets: a hosted API mostly waits on the network.
HOSTED_API_TASKS = 8


def concurrent_tasks(name: str, cores: int) -> int:
    """Tasks to run at once for this model when --jobs is not given, as its provider suggests
    (an optional `concurrent_tasks(name, cores)` method); HOSTED_API_TASKS when it has none."""
    name = _canonical(name)
    provider, _ = _provider(name)
    if isinstance(provider, SuggestsConcurrency):
        return int(provider.concurrent_tasks(name, cores))
    return HOSTED_API_TASKS


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
                 context_window: int | None = None, max_retry_wait_s: float = 30.0,
                 requests_per_minute: float | None = None, tokens_per_minute: float | None = None) -> ChatModel:
    """Build the model for `name`.

    `task` (a testhelix.tasks.task.Task) is required by simulated models only: they are test
    doubles that read the task's simulation bank. `http_client` lets tests inject an
    `httpx2.Client(transport=httpx2.MockTransport(...))`. `max_retries` is handed to the SDK, which
    is the single place where transient failures are retried. `context_window` and the rate limits
    replace what models.toml says (a run's settings, testhelix/runsetup.py `ModelSettings`).
    """
    name = _canonical(name)
    provider, model = _provider(name)
    info = _with_settings(provider.resolve(name, model), context_window, requests_per_minute, tokens_per_minute)
    return provider.create(name, info, task=task, seed=seed, http_client=http_client, max_retries=max_retries,
                           timeout_s=timeout_s, max_retry_wait_s=max_retry_wait_s)


def _with_settings(info: ModelInfo, context_window: int | None, rpm: float | None, tpm: float | None) -> ModelInfo:
    """`info` with a run's context window and rate limits (each None: the registry's value)."""
    if context_window is not None and int(context_window) < 1024:
        raise UserError(f"--context-window must be at least 1024 tokens, got {context_window}")
    changes: dict[str, Any] = {}
    if context_window is not None:
        changes["context_window"] = int(context_window)
    if rpm or tpm:  # --rpm/--tpm set the limiter's limits together, as one setting
        changes.update(requests_per_minute=rpm, tokens_per_minute=tpm)
    return replace(info, **changes) if changes else info


def create_optimizer_model(name: str, *, seed: int = 0, timeout_s: float | None = None,
                           context_window: int | None = None, requests_per_minute: float | None = None,
                           tokens_per_minute: float | None = None) -> ChatModel:
    """The model for AutoSaddler's optimizer sessions: the provider's optional
    `create_optimizer(name, info, seed=...)` when it has one (the simulated provider: a double that
    needs no task and answers the simulated roles AutoSaddler contributes, sim/contributed.py),
    otherwise its ordinary model."""
    name = _canonical(name)
    provider, model = _provider(name)
    if isinstance(provider, MakesOptimizerModels):
        return provider.create_optimizer(name, _with_settings(provider.resolve(name, model), context_window,
                                                              requests_per_minute, tokens_per_minute), seed=seed)
    return create_model(name, timeout_s=timeout_s, context_window=context_window,
                        requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)

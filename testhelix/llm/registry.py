"""Model names -> model references -> model objects, using the model table (modeltable.py).

Public API:
    model_ref(name) -> ModelRef         # the one resolution, at a command's edge (modelref.py)
    create_model(ref, ...) -> ChatModel
    create_optimizer_model(ref, ...) -> ChatModel
    credential_env_vars()               # every provider's credential variables (the sandbox's deny list)

Accepted names: `anthropic:MODEL`, `openai:MODEL` (any model id: one listed in models.toml or in the
user's own file (modeltable.py) has its prices and limits, any other runs with its provider's
[unlisted] defaults and unpriced, said once on stderr), aliases from the [aliases] tables,
`openai-compatible:NAME@http://HOST:PORT/v1` (any server speaking the Chat Completions protocol:
vLLM, Ollama, llama.cpp; unpriced), `local:NAME` or `local:/path/model.gguf`
(a GGUF model on this machine's CPU, testhelix/llm/local.py; the `local` extra), and `sim:NAME`
(simulated models, see testhelix/llm/sim). A name with an unknown prefix raises UserError.

The registry holds provider objects behind `provider_protocol.ModelProvider`, found by the name's
prefix: the built-ins (`PROVIDERS`, one module per vendor), a `testhelix.providers` entry point
(`--model PREFIX:MODEL`), or a dotted path (`--model package.module:OBJECT/MODEL`). A provider
declares its own credential variables and its optional abilities as the capability Protocols of
provider_protocol.py (tested with isinstance, once, in `model_ref`); nothing here branches on which
provider a name names, and no provider module imports this one.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import replace
from typing import Any

from testhelix.core.errors import UserError
from testhelix.core.plugins import PROVIDERS_GROUP, entry_point_names, load_plugin, missing_members
from testhelix.llm.anthropic import ANTHROPIC
from testhelix.llm.base import ChatModel
from testhelix.llm.local import LOCAL
from testhelix.llm.modelref import ModelRef
from testhelix.llm.modeltable import UNPRICED, table, unknown_model, user_models_file
from testhelix.llm.openai import OPENAI
from testhelix.llm.openai_compatible import OPENAI_COMPATIBLE, label
from testhelix.llm.provider_protocol import (
    MakesOptimizerModels,
    ModelInfo,
    ModelProvider,
    NeedsCredentials,
    ServesTestDoubles,
    SuggestsConcurrency,
)
from testhelix.llm.sim.provider import SIMULATED

# The built-in providers, one module per vendor; others come from the `testhelix.providers` entry
# point group or a dotted path `package.module:OBJECT/MODEL` (see _provider).
PROVIDERS: dict[str, ModelProvider] = {p.name: p for p in (ANTHROPIC, OPENAI, OPENAI_COMPATIBLE, SIMULATED, LOCAL)}
_LOADED: dict[str, ModelProvider] = {}  # plug-in providers loaded in this process, by key
_NOTED: set[str] = set()                # unpriced models already said on stderr (once per command)
# What a provider without its own `concurrent_tasks` gets: a hosted API mostly waits on the network.
HOSTED_API_TASKS = 8


def _provider(name: str) -> tuple[str, ModelProvider, str]:
    """(key, provider object, model id) for an alias-expanded name, without branching on which provider."""
    prefix, colon, rest = name.partition(":")
    if not colon:
        raise unknown_model(name)
    if "." in prefix:  # package.module:OBJECT/MODEL
        obj, _, model = rest.partition("/")
        key = f"{prefix}:{obj}"
    elif prefix in PROVIDERS or prefix in entry_point_names(PROVIDERS_GROUP):
        key, model = prefix, rest
    else:
        raise unknown_model(name)
    return key, provider_for(key, name), model


def provider_for(key: str, name: str | None = None) -> ModelProvider:
    """The provider object a ModelRef's `provider` key names (loaded once per process)."""
    if key in PROVIDERS:
        return PROVIDERS[key]
    if key not in _LOADED:
        provider = load_plugin(key, group=PROVIDERS_GROUP, builtins=PROVIDERS, option="--model", what="model provider")
        missing = missing_members(provider, ModelProvider)
        if missing:
            raise UserError(f"--model {name or key!r}: the provider lacks {', '.join(missing)} "
                            "(see testhelix/llm/provider_protocol.py)")
        _LOADED[key] = provider
    return _LOADED[key]


def model_ref(name: str) -> ModelRef:
    """The model a name means, resolved once at a command's edge: aliases expanded, the provider
    found and asked everything later layers need. A hosted model without prices is said once on
    stderr (its cost shows as unpriced wherever cost appears). Bad names are a UserError naming them."""
    canonical = table().get("aliases", {}).get(name, name)
    key, provider, model = _provider(canonical)
    info = provider.resolve(canonical, model)
    if canonical in UNPRICED and canonical not in _NOTED:
        _NOTED.add(canonical)
        print(unpriced_note(canonical), file=sys.stderr)
    cores = os.cpu_count() or 1
    return ModelRef(given=name, info=info, provider_key=key,
                    simulated=_serves_doubles(provider),
                    credential_env_vars=tuple(provider.credential_env_vars),
                    credentials_required=isinstance(provider, NeedsCredentials) and bool(provider.credentials_required),
                    label=label(name),
                    suggested_tasks=int(provider.concurrent_tasks(info, cores))
                    if isinstance(provider, SuggestsConcurrency) else HOSTED_API_TASKS)


def unpriced_note(name: str) -> str:
    listed = table().get("models", {})
    close = difflib.get_close_matches(name, [n for n in listed if n.startswith(name.partition(":")[0] + ":")], n=1)
    hint = f" (did you mean {close[0]}?)" if close and close[0] != name else ""
    return (f"note: {name} has no known prices{hint}: it runs unpriced and its cost is shown as unpriced; "
            f"prices and limits go in {user_models_file()}")


def credential_env_vars() -> tuple[str, ...]:
    """Every environment variable a known provider reads credentials from: the built-ins, the
    installed `testhelix.providers` entry points and any provider loaded by dotted path. None of
    them may reach executed code (the sandbox environment is an allow-list; tests check this)."""
    for prefix in entry_point_names(PROVIDERS_GROUP):
        try:
            provider_for(prefix)
        except UserError:
            continue  # a broken plug-in is reported when it is used
    names: list[str] = []
    for provider in [*PROVIDERS.values(), *_LOADED.values()]:
        names += [n for n in provider.credential_env_vars if n not in names]
    return tuple(names)


def is_simulated(stored_name: str) -> bool:
    """Whether a model name read back from a store or a run label names a test double. Only readers
    of stored records ask this (reports, the HTML pages, tracking): a command resolves its --model
    once into a ModelRef and reads `ModelRef.simulated`. A name that no longer resolves (a plug-in
    not installed here) counts as real."""
    name = str(stored_name or "")
    try:
        _, provider, _ = _provider(table().get("aliases", {}).get(name, name))
    except UserError:
        return False
    return _serves_doubles(provider)


def _serves_doubles(provider: ModelProvider) -> bool:
    return isinstance(provider, ServesTestDoubles) and bool(provider.simulated)


def create_model(ref: ModelRef, *, task: Any = None, seed: int = 0, http_client: Any = None,
                 max_retries: int = 2, timeout_s: float | None = None,
                 context_window: int | None = None, max_retry_wait_s: float = 30.0,
                 requests_per_minute: float | None = None, tokens_per_minute: float | None = None) -> ChatModel:
    """Build the model `ref` names.

    `task` (a testhelix.tasks.task.Task) is required by simulated models only: they are test
    doubles that read the task's simulation bank. `http_client` lets tests inject an
    `httpx2.Client(transport=httpx2.MockTransport(...))`. `max_retries` is handed to the SDK, which
    is the single place where transient failures are retried. `context_window` and the rate limits
    replace what models.toml says (a run's settings, testhelix/run/setup.py `ModelSettings`).
    """
    info = _with_settings(ref.info, context_window, requests_per_minute, tokens_per_minute)
    return provider_for(ref.provider_key).create(ref.name, info, task=task, seed=seed, http_client=http_client,
                                             max_retries=max_retries, timeout_s=timeout_s,
                                             max_retry_wait_s=max_retry_wait_s)


def _with_settings(info: ModelInfo, context_window: int | None, rpm: float | None, tpm: float | None) -> ModelInfo:
    """`info` with a run's context window and rate limits (each None: the registry's value; both are
    checked by the options that carry them, testhelix/commands/run_options.py)."""
    changes: dict[str, Any] = {}
    if context_window is not None:
        changes["context_window"] = int(context_window)
    if rpm or tpm:  # --rpm/--tpm set the limiter's limits together, as one setting
        changes.update(requests_per_minute=rpm, tokens_per_minute=tpm)
    return replace(info, **changes) if changes else info


def create_optimizer_model(ref: ModelRef, *, seed: int = 0, timeout_s: float | None = None,
                           context_window: int | None = None, requests_per_minute: float | None = None,
                           tokens_per_minute: float | None = None) -> ChatModel:
    """The model for AutoSaddler's optimizer sessions: the provider's optional
    `create_optimizer(name, info, seed=...)` when it has one (the simulated provider: a double that
    needs no task and answers the simulated roles AutoSaddler contributes, sim/contributed.py),
    otherwise its ordinary model."""
    provider = provider_for(ref.provider_key)
    if isinstance(provider, MakesOptimizerModels):
        return provider.create_optimizer(ref.name, _with_settings(ref.info, context_window, requests_per_minute,
                                                                  tokens_per_minute), seed=seed)
    return create_model(ref, timeout_s=timeout_s, context_window=context_window,
                        requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)

"""The table of known models: the package's models.toml, with the user's own file laid over it.

    testhelix/llm/models.toml                 the known defaults (shipped, never edited by users)
    $XDG_CONFIG_HOME/testhelix/models.toml    the user's additions (default ~/.config/testhelix/)

The user's file has the same two tables as the package's, and only those:

    [aliases]
    mini = "openai:gpt-4.1-mini"

    [models."openai:gpt-4.1-mini"]      # any field left out keeps the package's or the provider's default
    input_usd_per_mtok = 0.4
    output_usd_per_mtok = 1.6
    context_window = 1047576

A hosted model needs no entry at all to run (`anthropic:NAME`, `openai:NAME`): it takes its
provider's defaults from the package file's [unlisted.PROVIDER] table and runs unpriced. The user's
file is read once per process through the bounded reader (testhelix/core/readers.py); a field of the
wrong kind is a UserError naming the file and the field.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError
from testhelix.core.plugins import PROVIDERS_GROUP, entry_point_names
from testhelix.core.readers import read_toml
from testhelix.llm.provider_protocol import ModelInfo, Prices

PACKAGE_FILE = Path(__file__).with_name("models.toml")
USER_FILE_MAX_BYTES = 256 * 1024   # a price list of a few hundred models fits in a tenth of this
_NUMBERS = ("context_window", "max_output_tokens", "input_usd_per_mtok", "output_usd_per_mtok",
            "cache_read_usd_per_mtok", "cache_write_usd_per_mtok", "requests_per_minute", "tokens_per_minute")
_APIS = ("messages", "chat", "responses")
UNPRICED: set[str] = set()     # hosted models resolved without prices in this process (registry notes them)


def user_models_file() -> Path:
    """Where the user's own model table lives (it may not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "testhelix" / "models.toml"


def table() -> dict[str, Any]:
    """The merged table: {"aliases": ..., "models": ..., and the package's provider defaults}."""
    return _merged(str(user_models_file()))


def provider_defaults(section: str) -> dict[str, Any]:
    """A provider's defaults from the package file (`openai-compatible`, `local`, `unlisted.openai`)."""
    found: Any = _package()
    for part in section.split("."):
        found = found.get(part, {}) if isinstance(found, dict) else {}
    return dict(found)


def unknown_model(name: str) -> UserError:
    """The error for a name no provider takes: what the table knows and how other names are spelled."""
    reg = table()
    known = ", ".join(sorted(reg.get("models", {})) + sorted(reg.get("aliases", {})))
    plugins = entry_point_names(PROVIDERS_GROUP)
    more = f"; plug-in providers: {', '.join(p + ':MODEL' for p in plugins)}" if plugins else ""
    return UserError(f"unknown model {name!r}: use anthropic:MODEL or openai:MODEL (any model id) or one of: {known}; "
                     "OpenAI-compatible servers are named openai-compatible:NAME@http://HOST:PORT/v1; "
                     f"a provider outside the project is PROVIDER:MODEL (a {PROVIDERS_GROUP} entry point) "
                     f"or package.module:OBJECT/MODEL{more}")


def _prices(entry: dict) -> Prices | None:
    if "input_usd_per_mtok" not in entry or "output_usd_per_mtok" not in entry:
        return None
    return Prices(input=float(entry["input_usd_per_mtok"]), output=float(entry["output_usd_per_mtok"]),
                  cache_read=entry.get("cache_read_usd_per_mtok"), cache_write=entry.get("cache_write_usd_per_mtok"))


def listed_model(name: str) -> ModelInfo:
    """A hosted model (the Anthropic and OpenAI providers): its entry in the model table, laid over
    its provider's [unlisted.PROVIDER] defaults; any model id is accepted."""
    provider, _, model = name.partition(":")
    defaults = provider_defaults(f"unlisted.{provider}")
    entry = {**defaults, **table().get("models", {}).get(name, {})}
    if not model or "api" not in entry:
        raise unknown_model(name)
    if _prices(entry) is None:
        UNPRICED.add(name)
    return ModelInfo(name=name, provider=provider, model=model, api=entry["api"],
                     context_window=int(entry["context_window"]),
                     max_output_tokens=int(entry["max_output_tokens"]), prices=_prices(entry),
                     requests_per_minute=entry.get("requests_per_minute"),
                     tokens_per_minute=entry.get("tokens_per_minute"))


@lru_cache(maxsize=1)
def _package() -> dict[str, Any]:
    try:
        return tomllib.loads(PACKAGE_FILE.read_text())
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{PACKAGE_FILE}: not valid TOML: {err}") from None


@lru_cache(maxsize=4)
def _merged(user_path: str) -> dict[str, Any]:
    package = _package()
    merged = {**package, "aliases": dict(package.get("aliases", {})),
              "models": {name: dict(entry) for name, entry in package.get("models", {}).items()}}
    path = Path(user_path)
    if not path.is_file():
        return merged
    user = _checked(read_toml(path, USER_FILE_MAX_BYTES), path)
    merged["aliases"].update(user.get("aliases", {}))
    for name, entry in user.get("models", {}).items():
        merged["models"][name] = {**merged["models"].get(name, {}), **entry}
    return merged


def _checked(user: dict[str, Any], path: Path) -> dict[str, Any]:
    """The user's file, refused with the first field that is wrong."""
    for key in user:
        if key not in ("aliases", "models"):
            raise UserError(f"{path}: unknown table [{key}]; a user's model file has [aliases] and "
                            "[models.\"PROVIDER:MODEL\"] only")
    for alias, target in user.get("aliases", {}).items():
        if not isinstance(target, str) or ":" not in target:
            raise UserError(f"{path}: [aliases] {alias} must be a model name PROVIDER:MODEL, got {target!r}")
    for name, entry in user.get("models", {}).items():
        where = f"{path}: [models.\"{name}\"]"
        if ":" not in name or not isinstance(entry, dict):
            raise UserError(f"{where} must be a table named PROVIDER:MODEL")
        for field, value in entry.items():
            if field == "api":
                if value not in _APIS:
                    raise UserError(f"{where} api must be one of {', '.join(_APIS)}, got {value!r}")
            elif field not in _NUMBERS:
                raise UserError(f"{where} unknown field {field!r}; known: api, {', '.join(_NUMBERS)}")
            elif field in ("context_window", "max_output_tokens"):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise UserError(f"{where} {field} must be a whole number of tokens, at least 1, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise UserError(f"{where} {field} must be a number of at least 0, got {value!r}")
        if ("input_usd_per_mtok" in entry) != ("output_usd_per_mtok" in entry):
            raise UserError(f"{where} gives one of input_usd_per_mtok and output_usd_per_mtok: a price needs both")
    return user

"""The OpenAI-compatible provider (`openai-compatible:NAME@http://HOST:PORT/v1`): any server speaking
Chat Completions (vLLM, Ollama, llama.cpp), through the OpenAI model class (openai_model.py) at the
server's URL. Its key variable is optional (local servers usually take any key) and its cost is
unknown (unpriced).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from testhelix.core.errors import UserError
from testhelix.llm.modeltable import provider_defaults
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.sdk_model import SdkProvider

if TYPE_CHECKING:
    from testhelix.llm.sdk_model import SdkChatModel

KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"   # optional; read by the model only, never reaches executed code
NAME = re.compile(r"^openai-compatible:(?P<model>[^@\s]+)@(?P<url>https?://[^\s]+)$")


def url_problem(url: str) -> str | None:
    """What is wrong with a server URL, checked when it is given (not when the first request fails
    and would be recorded as a provider outage): scheme, host, port range, brackets of an IPv6 host."""
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


class OpenAICompatibleProvider(SdkProvider):
    name = "openai-compatible"
    credential_env_vars: tuple[str, ...] = (KEY_ENV,)
    credentials_required = False   # local servers usually take any key (the model sends "no-key")

    def concurrent_tasks(self, info: ModelInfo, cores: int) -> int:  # noqa: ARG002 - the optional hook's signature
        return 4  # such a server often runs on this machine or a small one: it shares its hardware

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        m = NAME.match(name)
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

    def model_class(self) -> type[SdkChatModel]:
        from testhelix.llm.openai_model import OpenAIModel
        return OpenAIModel


def label(name: str) -> str:
    """The name a run label uses: the server's model without its URL (the port may change)."""
    m = NAME.match(name)
    return f"openai-compatible:{m['model']}" if m else name


OPENAI_COMPATIBLE = OpenAICompatibleProvider()

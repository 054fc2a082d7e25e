"""The Anthropic provider (`anthropic:MODEL`): its prefix, its credential variable, and its model class
(anthropic_model.py: the Messages API through the `anthropic` SDK, imported on first use).

Any model id runs; one listed in the model table (models.toml or the user's file) has its prices and
limits, any other its [unlisted.anthropic] defaults and no price (modeltable.listed_model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from testhelix.llm.sdk_model import SdkProvider

if TYPE_CHECKING:
    from testhelix.llm.sdk_model import SdkChatModel

KEY_ENV = "ANTHROPIC_API_KEY"   # read by the model only; never reaches executed code


class AnthropicProvider(SdkProvider):
    name = "anthropic"
    credential_env_vars: tuple[str, ...] = (KEY_ENV,)

    def model_class(self) -> type[SdkChatModel]:
        from testhelix.llm.anthropic_model import AnthropicModel
        return AnthropicModel


ANTHROPIC = AnthropicProvider()

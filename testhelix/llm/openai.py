"""The OpenAI provider (`openai:MODEL`): its prefix, its credential variable, and its model class
(openai_model.py: Chat Completions or the Responses API through the `openai` SDK, imported on first
use; the model table's `api` says which).

Any model id runs; one listed in the model table (models.toml or the user's file) has its prices and
limits, any other its [unlisted.openai] defaults and no price (modeltable.listed_model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from testhelix.llm.sdk_model import SdkProvider

if TYPE_CHECKING:
    from testhelix.llm.sdk_model import SdkChatModel

KEY_ENV = "OPENAI_API_KEY"   # read by the model only; never reaches executed code


class OpenAIProvider(SdkProvider):
    name = "openai"
    credential_env_vars: tuple[str, ...] = (KEY_ENV,)

    def model_class(self) -> type[SdkChatModel]:
        from testhelix.llm.openai_model import OpenAIModel
        return OpenAIModel


OPENAI = OpenAIProvider()

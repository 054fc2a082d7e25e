"""What the SDK-backed providers and ChatModels share (anthropic.py / anthropic_model.py,
openai.py / openai_model.py, openai_compatible.py).

Both vendor SDKs are built alike: the same client pieces (`DefaultHttpxClient`, `APITimeoutError`,
`max_retries`, `timeout`) and one exception hierarchy (mapped in sdk_errors.py). So one base class
sets up the model's rate limiter and `CallWatch`, reads the API key from the variable its provider
names, builds the SDK client, and makes each watched call, turning SDK failures into the neutral
ModelError family. A subclass creates its SDK client from the keyword arguments given and
translates requests and replies. `SdkProvider` is the provider side: the model table's entry for
any model id, and the model class imported on first use (a run without a vendor's models never
loads its SDK, which takes seconds to import).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar, Generic, TypeVar

from testhelix.llm.base import (
    ChatModel,
    Completion,
    ModelAuthError,
    ModelError,
    ModelOutputError,
    ModelRequest,
    ModelUnavailable,
)
from testhelix.llm.callwatch import CallWatch
from testhelix.llm.modeltable import listed_model
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.ratelimit import limiter_for

T = TypeVar("T")
ClientT = TypeVar("ClientT")


def served_metadata(served_model: object, served_simulated: bool) -> dict[str, Any]:
    """Completion metadata naming the model that actually answered. A reply a served test double gave
    (`testhelix serve` marks it with base.SIMULATED_HEADER) is marked `simulated`, so a run through
    it is labelled simulated in the ledger, the report and the HTML page."""
    meta: dict[str, Any] = {"served_model": served_model}
    if served_simulated:
        meta["simulated"] = True
    return meta


class SdkProvider:
    """A vendor's models, any model id (prices and limits from the model table when listed there),
    served through its SDK. A subclass names its prefix, its credential variable (the first of
    `credential_env_vars` is the one its models read) and imports its model class on first use."""

    name: str
    credential_env_vars: tuple[str, ...]
    credentials_required = True   # NeedsCredentials: a hosted API answers nothing without its key

    def resolve(self, name: str, model: str) -> ModelInfo:  # noqa: ARG002 - ModelProvider's signature
        return listed_model(name)

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int,  # noqa: ARG002 - ModelProvider's signature
               http_client: Any, max_retries: int, timeout_s: float | None, max_retry_wait_s: float) -> ChatModel:
        return self.model_class()(info, key_env=self.credential_env_vars[0], key_required=self.credentials_required,
                                  http_client=http_client, max_retries=max_retries, timeout_s=timeout_s,
                                  max_retry_wait_s=max_retry_wait_s)

    # No `concurrent_tasks`: a hosted API gets registry.HOSTED_API_TASKS, the default for any provider.

    def model_class(self) -> type[SdkChatModel]:
        raise NotImplementedError


class SdkChatModel(Generic[ClientT]):
    """Base of the ChatModels that call a vendor SDK; `ClientT` is the SDK's client class."""

    sdk: ModuleType                          # the SDK's package
    sdk_error: ClassVar[type[Exception]]     # the root of its exception hierarchy

    def __init__(self, info: ModelInfo, *, key_env: str, key_required: bool = True, api_key: str | None = None,
                 http_client: Any = None, max_retries: int = 2, timeout_s: float | None = None,
                 max_retry_wait_s: float = 30.0):
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.timeout_s = timeout_s
        self.key_env = key_env                # the provider's credential variable (its module names it)
        key = self._api_key(api_key, key_required)   # first: without a key nothing else is set up
        sdk = self.sdk
        self.rate_limiter = limiter_for(info.name, info.requests_per_minute, info.tokens_per_minute)
        self.watch = CallWatch(lambda request: sdk.APITimeoutError(request=request),
                               max_retry_wait_s=max_retry_wait_s, limiter=self.rate_limiter)
        client = self.watch.install(http_client if http_client is not None else sdk.DefaultHttpxClient())
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": max_retries, "http_client": client}
        if timeout_s is not None:
            kwargs["timeout"] = timeout_s
        self._client: ClientT = self._connect(kwargs)

    def complete(self, request: ModelRequest) -> Completion:
        raise NotImplementedError

    def _api_key(self, given: str | None, required: bool) -> str:
        """The key to use (`given`, else the provider's environment variable); ModelAuthError if none
        is there and the provider requires one, else a placeholder (local servers usually accept any
        key; the SDKs insist on a non-empty one)."""
        key = given or os.environ.get(self.key_env)
        if key:
            return key
        if required:
            raise ModelAuthError(f"{self.key_env} is not set: export it to use {self.name}")
        return "no-key"

    def _connect(self, client_kwargs: dict[str, Any]) -> ClientT:
        """The SDK client, from the keyword arguments built here."""
        raise NotImplementedError

    def _map_error(self, err: Exception) -> ModelError:
        """An SDK exception (after the SDK's retries) -> the neutral error."""
        raise NotImplementedError

    def _watched(self, timeout: float | None, send: Callable[[], T]) -> tuple[T, dict, bool]:
        """`send()` (one SDK request, its retries included) under the call watch; returns what it
        returned, the summary of its retries and whether a served test double answered."""
        with self.watch.call(timeout) as rec:
            try:
                result = send()
            except self.sdk_error as err:
                failure = self._map_error(err)
                failure.retries = rec.summary()
                if rec.stopped_by_deadline and isinstance(failure, ModelUnavailable):
                    failure.cause = "deadline"
                raise failure from err
            except ValueError as err:       # a 200 whose body is not valid JSON
                raise ModelOutputError(f"{self.name} returned a body that is not valid JSON: {err}",
                                       billed=None) from err
        return result, rec.summary(), rec.served_simulated

    def _not_a_response(self, reply: object, what: str) -> ModelOutputError:
        """An HTML page or other text answered with HTTP 200 reaches us as a str, not a response."""
        return ModelOutputError(f"{self.name} returned something that is not a {what} response: "
                                f"{str(reply)[:120]!r}", billed=None)

"""What the SDK-backed ChatModels (anthropic_provider.py, openai_provider.py) share.

Both vendor SDKs are built alike: the same client pieces (`DefaultHttpxClient`, `APITimeoutError`,
`max_retries`, `timeout`) and one exception hierarchy (mapped in sdk_errors.py). So one base class
sets up the model's rate limiter and `CallWatch`, builds the SDK client, and makes each watched
call, turning SDK failures into the neutral ModelError family. A subclass finds its API key,
creates its SDK client from the keyword arguments given, and translates requests and replies.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar, Generic, TypeVar

from testhelix.llm.base import Completion, ModelError, ModelOutputError, ModelRequest, ModelUnavailable
from testhelix.llm.callwatch import CallWatch
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.ratelimit import limiter_for
from testhelix.llm.registry import is_simulated

T = TypeVar("T")
ClientT = TypeVar("ClientT")


def served_metadata(served_model: object) -> dict[str, Any]:
    """Completion metadata naming the model that actually answered. A reply whose model id names a
    simulated model (`testhelix serve` answers with `sim:...`) is marked `simulated`, so a run through
    a served test double is labelled simulated in the ledger, the report and the HTML page."""
    meta: dict[str, Any] = {"served_model": served_model}
    if served_model and is_simulated(str(served_model)):
        meta["simulated"] = True
    return meta


class SdkChatModel(Generic[ClientT]):
    """Base of the ChatModels that call a vendor SDK; `ClientT` is the SDK's client class."""

    sdk: ModuleType                          # the SDK's package
    sdk_error: ClassVar[type[Exception]]     # the root of its exception hierarchy

    def __init__(self, info: ModelInfo, *, api_key: str | None = None, http_client: Any = None,
                 max_retries: int = 2, timeout_s: float | None = None, max_retry_wait_s: float = 30.0):
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.timeout_s = timeout_s
        key = self._api_key(api_key)          # first: without a key nothing else is set up
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

    def _api_key(self, given: str | None) -> str:
        """The key to use (`given`, else the provider's environment variable); ModelAuthError if none."""
        raise NotImplementedError

    def _connect(self, client_kwargs: dict[str, Any]) -> ClientT:
        """The SDK client, from the keyword arguments built here."""
        raise NotImplementedError

    def _map_error(self, err: Exception) -> ModelError:
        """An SDK exception (after the SDK's retries) -> the neutral error."""
        raise NotImplementedError

    def _watched(self, timeout: float | None, send: Callable[[], T]) -> tuple[T, dict]:
        """`send()` (one SDK request, its retries included) under the call watch; returns what it
        returned and the summary of its retries."""
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
        return result, rec.summary()

    def _not_a_response(self, reply: object, what: str) -> ModelOutputError:
        """An HTML page or other text answered with HTTP 200 reaches us as a str, not a response."""
        return ModelOutputError(f"{self.name} returned something that is not a {what} response: "
                                f"{str(reply)[:120]!r}", billed=None)

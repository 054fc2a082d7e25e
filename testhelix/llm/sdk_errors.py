"""SDK exceptions -> the neutral ModelError family, for providers whose SDKs share one exception
hierarchy (the Anthropic and OpenAI SDKs name their exceptions alike). Called after the SDK's own
retries, so a retryable status here means the provider kept failing."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from testhelix.llm.base import (
    ContextOverflowError,
    ModelAuthError,
    ModelBadRequest,
    ModelConfigError,
    ModelError,
    ModelOutputError,
    ModelUnavailable,
    unavailable_cause,
)


def map_sdk_error(sdk: ModuleType, err: Exception, who: str, *, auth_hint: str, not_found: str,
                  overflow: Callable[[int | None, object, str], bool]) -> ModelError:
    """`auth_hint` ends the credentials message, `not_found` opens the 404 message, and
    `overflow(status, code, lowered text)` says whether a status error is a context overflow."""
    status = getattr(err, "status_code", None)
    text = str(err)
    if isinstance(err, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
        return ModelAuthError(f"{who} rejected the credentials (HTTP {status}): {auth_hint}", status=status)
    if isinstance(err, sdk.NotFoundError):
        return ModelConfigError(f"{not_found}: {text[:200]}", status=status)
    if isinstance(err, sdk.APITimeoutError):
        return ModelUnavailable(f"{who} request timed out after retries: {text}", billed=None, cause="timeout")
    if isinstance(err, sdk.APIConnectionError):
        return ModelUnavailable(f"{who} connection failed after retries: {text}", billed=None, cause="connection")
    if isinstance(err, sdk.APIStatusError):
        if overflow(status, getattr(err, "code", None), text.lower()):
            return ContextOverflowError(f"{who}: the request exceeds the context window: {text}", status=status)
        if status in (408, 409, 429) or (status or 0) >= 500:
            return ModelUnavailable(f"{who} still failing after retries (HTTP {status}): {text[:300]}", status=status,
                                    cause=unavailable_cause(status))
        return ModelBadRequest(f"{who} rejected the request (HTTP {status}): {text}", status=status)
    if isinstance(err, sdk.APIResponseValidationError):
        return ModelOutputError(f"{who} returned an unreadable response: {text}", billed=None)
    return ModelError(f"{who} call failed: {text}", billed=None)

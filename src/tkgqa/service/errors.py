"""The service's errors and their one JSON shape, ``{"error": message, "type": name}`` (plus
``suggestions`` for a NotFoundError), with the HTTP status of each. No FastAPI here: the request guard (plain
ASGI) and the app both answer with :func:`error_body`.

=======  ==========================  ================================================================
status   type                        when
=======  ==========================  ================================================================
400      ConfigError                 a bad method spec or option value, an empty question
401      Unauthorized                the server has an API token and the request did not send it
403      NotAllowed                  a method, LLM or option the server does not allow clients to pick
404      NotFoundError / NotFound    an unknown entity or relation / an unknown path
405      MethodNotAllowed            e.g. GET on ``/api/ask``
413      PayloadTooLarge             a body over the limit (64 KB by default)
422      ValidationError             invalid JSON, not UTF-8, nested too deep, fields out of range
429      Busy                        the method's queue (or the server's) is full; see ``Retry-After``
499      Cancelled                   the question was stopped between steps (its client went away)
500      InternalError               a bug: the message names the exception type only
502      LLMError                    the method's LLM backend failed
503      ShuttingDown                the server is stopping
504      Timeout                     no answer within the request's deadline
=======  ==========================  ================================================================
"""

from __future__ import annotations

import math
from typing import Any

from ..credentials import redact
from ..errors import ConfigError, DataError, LLMError, NotFoundError, ParseError, TKGQAError
from ..methods.base import StepCancelled
from ..sanitize import clean_json

#: The longest message an error body carries; longer ones are cut (input is never echoed unbounded).
MAX_ERROR_CHARS = 500


class NotAllowedError(ConfigError):
    """The request picks a method, LLM or option the server's allow-list does not hold (HTTP 403)."""


class BusyError(TKGQAError):
    """The method's queue (or the whole server's) is full (HTTP 429 with ``Retry-After``)."""

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = max(1, min(60, math.ceil(retry_after)))


class DeadlineError(TKGQAError):
    """No answer within the request's deadline (HTTP 504); a question still queued was cancelled."""


class ShuttingDownError(TKGQAError):
    """The server is stopping; queued questions are cancelled (HTTP 503)."""


def clip(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``message`` cut to ``limit`` characters, saying how long it was."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… (cut; {len(message):,} characters)"


def status_for(exc: TKGQAError) -> int:
    """The HTTP status of a project error (the table in the module docstring)."""
    match exc:
        case NotAllowedError():
            return 403
        case NotFoundError():
            return 404
        case DataError() | ParseError():
            return 422
        case LLMError():
            return 502
        case BusyError():
            return 429
        case DeadlineError():
            return 504
        case ShuttingDownError():
            return 503
        case StepCancelled():
            return 499
        case _:
            return 400


def type_name(exc: TKGQAError) -> str:
    """The ``type`` of the error body: the class name, with the service's own errors named for clients."""
    names = {
        NotAllowedError: "NotAllowed",
        BusyError: "Busy",
        DeadlineError: "Timeout",
        ShuttingDownError: "ShuttingDown",
        StepCancelled: "Cancelled",
    }
    return names.get(type(exc), type(exc).__name__)


def error_body(message: str, kind: str, **extra: Any) -> dict[str, Any]:
    """The one error shape: ``{"error", "type"}`` (and ``extra`` fields), message clipped, secrets masked,
    text UTF-8-safe."""
    body = {"error": clip(message), "type": kind, **extra}
    return dict(redact(clean_json(body)))


def exception_body(exc: TKGQAError) -> dict[str, Any]:
    """:func:`error_body` of a project error (a NotFoundError adds its ``suggestions``)."""
    extra: dict[str, Any] = {}
    if isinstance(exc, NotFoundError):
        extra["suggestions"] = [clip(s, 200) for s in exc.suggestions[:20]]
    return error_body(str(exc), type_name(exc), **extra)


def headers_for(exc: TKGQAError) -> dict[str, str]:
    """Extra response headers: ``Retry-After`` for :class:`BusyError` and :class:`ShuttingDownError`."""
    if isinstance(exc, BusyError):
        return {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, ShuttingDownError):
        return {"Retry-After": "5", "Connection": "close"}
    return {}

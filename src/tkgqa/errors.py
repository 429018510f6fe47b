"""Error hierarchy: every error raised on purpose by tkgqa derives from :class:`TKGQAError`.

Messages say what is wrong *and* how to fix it, so the CLI can print them as one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a leaf module; imported for the annotations only, so `import tkgqa` stays light
    from .usage import Usage


class TKGQAError(Exception):
    """Root of all tkgqa errors."""


class ConfigError(TKGQAError):
    """A configuration value, backend spec or option is invalid."""


class DataError(TKGQAError):
    """Input data (a KG file, a question file) is malformed.

    ``path``/``line`` locate the problem when known; ``str()`` renders ``path:line: message``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class NotFoundError(TKGQAError):
    """An entity, relation, file or name could not be found; ``suggestions`` lists near matches."""

    def __init__(self, message: str, *, suggestions: Sequence[str] = ()) -> None:
        self.suggestions = list(suggestions)
        if self.suggestions:
            message = f"{message}; did you mean: " + ", ".join(repr(s) for s in self.suggestions)
        super().__init__(message)


class ParseError(TKGQAError):
    """Text (usually LLM output) could not be parsed into what was expected; keeps the raw text.

    ``usage`` is the LLM usage spent producing the text when known (set by
    :func:`tkgqa.llm.complete_parsed` and by backends that validate replies themselves), else ``None``.

    Unlike :class:`LLMError` it is an outcome of the model, not of the infrastructure: the model answered,
    after the retries with the error shown to it, in a form that cannot be read. Methods record it as an
    abstention with the reason (the same request at temperature 0 would give the same text from the cache,
    so retrying the question would not change it).
    """

    def __init__(
        self, message: str, *, raw: str = "", expected: str = "", usage: Usage | None = None
    ) -> None:
        self.raw = raw
        self.expected = expected
        self.usage: Usage | None = usage
        detail = message
        if expected:
            detail += f" (expected {expected})"
        if raw:
            shown = raw if len(raw) <= 500 else raw[:500] + "…"
            detail += f"; raw text: {shown!r}"
        super().__init__(detail)


class LLMError(TKGQAError):
    """A call to an LLM backend failed: the server answered an error (HTTP 5xx, 401, 404…), timed out, could
    not be reached or sent a reply of the wrong shape. This is an *infrastructure* failure, never a judgement
    on the question: methods let it propagate (``tkgqa eval`` records an error row and retries it on resume;
    ``tkgqa ask`` exits non-zero); only :class:`ContextWindowError` may become an abstention.

    ``retryable`` says whether trying again may help. ``usage`` is what the failed step spent, the failed call
    included (calls and tokens of earlier attempts and steps: set by :class:`~tkgqa.llm.CachedLLM`, by
    :func:`~tkgqa.llm.complete_parsed` and by methods through :func:`~tkgqa.llm.charge`), ``None`` when
    unknown (read it through :func:`~tkgqa.llm.error_usage`, which counts one failed call then).
    ``backend``/``model`` name the LLM that failed (set by ``CachedLLM``; they price ``usage``).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        usage: Usage | None = None,
        backend: str | None = None,
        model: str | None = None,
    ) -> None:
        self.retryable = retryable
        self.usage: Usage | None = usage
        self.backend = backend
        self.model = model
        super().__init__(message)


class RateLimitError(LLMError):
    """The backend refused the call for rate limiting (HTTP 429); retryable."""

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message, retryable=True, usage=usage)


class ContextWindowError(LLMError):
    """The prompt does not fit the model's context window; not retryable as is. Unlike other LLM errors it
    is a property of the question's prompt, so a method may turn it into an abstention."""

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message, retryable=False, usage=usage)


class ReplayMiss(LLMError):
    """The ``replay:`` backend holds no recorded reply for a request (neither its prompt nor its question id
    and stage is in the cassette). Not retryable: the file will not change between attempts. Like every LLM
    error it makes an error row, never an abstention."""

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message, retryable=False, usage=usage, backend="replay")


class MissingInputWarning(UserWarning):
    """An optional input that changes results was not found (a label file, retrieved facts, the KG): the run
    goes on without it and says so (``tkgqa eval --strict`` makes it an error)."""

"""Error hierarchy: every error raised on purpose by tkgqa derives from :class:`TKGQAError`.

Messages say what is wrong *and* how to fix it, so the CLI can print them as one line.
"""

from __future__ import annotations

from collections.abc import Sequence


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
    """Text (usually LLM output) could not be parsed into what was expected; keeps the raw text."""

    def __init__(self, message: str, *, raw: str = "", expected: str = "") -> None:
        self.raw = raw
        self.expected = expected
        detail = message
        if expected:
            detail += f" (expected {expected})"
        if raw:
            shown = raw if len(raw) <= 500 else raw[:500] + "…"
            detail += f"; raw text: {shown!r}"
        super().__init__(detail)


class LLMError(TKGQAError):
    """A call to an LLM backend failed. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        self.retryable = retryable
        super().__init__(message)


class RateLimitError(LLMError):
    """The backend refused the call for rate limiting (HTTP 429); retryable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class ContextWindowError(LLMError):
    """The prompt does not fit the model's context window; not retryable as is."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)

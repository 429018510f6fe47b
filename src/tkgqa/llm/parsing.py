"""Robust parsing of LLM output, and :func:`complete_parsed` (call, parse, retry once with the error).

Lists (answer lists included) are read by the one list parser of :mod:`.lists`, re-exported here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ..errors import LLMError, ParseError
from ..usage import Usage
from .base import LLMBackend, Message, make_request
from .helpers import charge
from .lists import (
    ListForm,
    ListReading,
    clean_answer,
    parse_answer_list,
    parse_string_list,
    read_answer_list,
    read_list,
)

__all__ = [
    "ListForm",
    "ListReading",
    "ParsedResponse",
    "clean_answer",
    "complete_parsed",
    "error_reason",
    "extract_choice",
    "extract_json",
    "extract_json_list",
    "extract_json_object",
    "parse_answer_list",
    "parse_string_list",
    "read_answer_list",
    "read_list",
]

T = TypeVar("T")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_STRIP = " \t\r\n\"'`.,;:!*"


class ParsedResponse(Generic[T]):
    """A parsed value with the raw text, summed usage over all attempts, and the attempt count."""

    __slots__ = ("attempts", "text", "usage", "value")

    def __init__(self, value: T, text: str, usage: Usage, attempts: int) -> None:
        self.value = value
        self.text = text
        self.usage = usage
        self.attempts = attempts

    def __repr__(self) -> str:
        return f"ParsedResponse(value={self.value!r}, attempts={self.attempts})"


def complete_parsed(
    llm: LLMBackend,
    messages: Sequence[Message] | str,
    parser: Callable[[str], T],
    *,
    retries: int = 1,
    **request_kw: Any,
) -> ParsedResponse[T]:
    """Call ``llm`` and parse the text with ``parser`` (which raises :class:`ParseError`).

    On a parse failure, retries up to ``retries`` times with the model's output and the error appended to
    the conversation; then raises :class:`ParseError` carrying the last raw text and, in ``usage``, the
    usage of all attempts. Each failure counts in ``usage.parse_failures`` and is logged when ``llm`` has
    ``record_parse_failure``. A backend that rejects its own reply (a ParseError with ``usage``, e.g. a
    reply outside ``choices``) counts that call's usage too. An :class:`LLMError` is not retried here (the
    backend has its own retries): it propagates with the usage of the earlier attempts added to its own.
    """
    msgs = [Message.user(messages)] if isinstance(messages, str) else list(messages)
    usage = Usage()
    last: ParseError | None = None
    text = ""
    for attempt in range(1, retries + 2):
        try:
            resp = llm.complete(make_request(msgs, **request_kw))
        except ParseError as exc:  # the backend validated its reply itself (e.g. choices)
            last, text = exc, exc.raw
            usage = usage + (exc.usage or Usage())
        except LLMError as exc:  # infrastructure: propagates, carrying what the earlier attempts spent
            charge(exc, usage)
            raise
        else:
            usage = usage + resp.usage
            text = resp.text
            try:
                return ParsedResponse(parser(text), text, usage, attempt)
            except ParseError as exc:
                last = exc
        usage = usage + Usage(parse_failures=1)
        record = getattr(llm, "record_parse_failure", None)
        if callable(record):
            record()
        hint = f" Expected {last.expected}." if last.expected else ""
        msgs = [
            *msgs,
            Message.assistant(text),
            Message.user(f"Your answer could not be parsed: {error_reason(last)}.{hint} "
                         "Reply again with only the answer in the required format."),
        ]  # fmt: skip
    assert last is not None
    raise ParseError(
        f"could not parse the model's output after {retries + 1} attempt(s): {error_reason(last)}",
        raw=text,
        expected=last.expected,
        usage=usage,
    )


def error_reason(exc: ParseError) -> str:
    """The bare message of a ParseError (without the expected/raw parts ``str()`` adds)."""
    msg = str(exc).split("; raw text:", 1)[0]
    if exc.expected:
        msg = msg.removesuffix(f" (expected {exc.expected})")
    return msg.splitlines()[0] if msg else type(exc).__name__


# ---------------------------------------------------------------- JSON


def extract_json(text: str) -> Any:
    """The first JSON object or list in ``text``: whole text, fenced code blocks, then embedded in prose."""
    stripped = text.strip()
    candidates = [stripped] + [m.group(2).strip() for m in _FENCE.finditer(text)]
    for cand in candidates:
        try:
            value = json.loads(cand)
        except (ValueError, RecursionError):  # deep nesting or a >4300-digit int
            continue
        if isinstance(value, dict | list):
            return value
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):
                continue
            return value
    raise ParseError("no JSON object or list found", raw=text, expected="JSON")


def extract_json_object(text: str) -> dict[str, Any]:
    """Like :func:`extract_json` but the value must be an object."""
    value = extract_json(text)
    if isinstance(value, dict):
        return value
    for item in value:
        if isinstance(item, dict):
            return item
    raise ParseError("JSON found but it is not an object", raw=text, expected="a JSON object")


def extract_json_list(text: str) -> list[Any]:
    """Like :func:`extract_json` but must be a list (an object holding exactly one list is unwrapped)."""
    value = extract_json(text)
    if isinstance(value, list):
        return value
    lists = [v for v in value.values() if isinstance(v, list)]
    if len(lists) == 1:
        return lists[0]
    raise ParseError("JSON found but it is not a list", raw=text, expected="a JSON list")


# ---------------------------------------------------------------- choices


def extract_choice(text: str, choices: Sequence[str]) -> str:
    """The one of ``choices`` that ``text`` names: exactly, up to case and surrounding punctuation, or as a
    mention (the longest, then the earliest). A reply naming none is refused — never matched to a similar
    choice it does not name."""
    if not choices:
        raise ParseError("no choices to pick from", raw=text)
    expected = "one of: " + ", ".join(repr(c) for c in choices[:20]) + (" …" if len(choices) > 20 else "")
    raw = text.strip()
    for cand in (raw, raw.strip(_STRIP), raw.splitlines()[0].strip(_STRIP) if raw else ""):
        if cand in choices:
            return cand
    folded = {c.casefold().strip(_STRIP): c for c in choices}
    for cand in (raw.casefold(), raw.casefold().strip(_STRIP)):
        if cand in folded:
            return folded[cand]
    low = raw.casefold()
    found = [c for c in choices if c.strip() and _contains_word(low, c.casefold())]
    if found:
        # Prefer the longest (\"New York City\" over \"New York\"), then the earliest mention.
        return max(found, key=lambda c: (len(c), -low.find(c.casefold())))
    raise ParseError("the answer is not one of the choices", raw=text, expected=expected)


def _contains_word(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` not glued to other word characters."""
    pattern = (r"(?<!\w)" if needle[0].isalnum() or needle[0] == "_" else "") + re.escape(needle)
    pattern += r"(?!\w)" if needle[-1].isalnum() or needle[-1] == "_" else ""
    return re.search(pattern, haystack) is not None

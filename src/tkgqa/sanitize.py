"""Text that is safe to write: lone surrogates and over-long echoes made harmless at the boundaries.

A Python ``str`` may hold a lone surrogate (``"\\ud800"``): JSON's ``\\ud800`` escape, a command-line argument
that was not valid UTF-8 (decoded with ``surrogateescape``), an LLM reply. Such a string cannot be encoded to
UTF-8, so writing it (a ``results.jsonl`` row, a cache key, an HTTP reply) fails. :func:`clean_text` replaces
each lone surrogate with U+FFFD; questions coming in and LLM text coming in go through it (and
:func:`clean_json` for nested values). :func:`shorten` bounds what an error message echoes of its input.

A root module (like :mod:`tkgqa.errors`): every layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: How much of an offending value a message quotes (``shorten``).
ECHO_CHARS = 80


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it cannot be encoded to UTF-8)."""
    return _SURROGATE.search(text) is not None


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``text`` itself when there is none).

    A valid pair written as two code units (``"\\ud83d\\ude00"``, as some JSON decoders leave it) is joined
    into its character first."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def clean_json(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with :func:`clean_text` applied to every string,
    keys included; other values unchanged."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_json(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def shorten(text: str, limit: int = ECHO_CHARS) -> str:
    """``repr``-quoted ``text``, cut to about ``limit`` characters with the full length noted, for error
    messages that name a bad value (a 5 MB time value is not echoed in full)."""
    text = clean_text(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"

"""Text that is safe to write: lone surrogates and over-long echoes made harmless at the boundaries.

A Python ``str`` may hold a lone surrogate (``"\\ud800"``): JSON's ``\\ud800`` escape, a command-line argument
that was not valid UTF-8 (decoded with ``surrogateescape``), an LLM reply. Such a string cannot be encoded to
UTF-8, so writing it (a ``results.jsonl`` row, a cache key, an HTTP reply) fails. :func:`clean_text` replaces
each lone surrogate with U+FFFD; questions coming in and LLM text coming in go through it (and
:func:`clean_json` for nested values). :func:`shorten` bounds what an error message echoes of its input.

Text shown on a terminal (model replies, KG labels, error messages quoting them) goes through
:func:`terminal_text`: ANSI/ECMA-48 escape sequences and the other C0/C1 control characters (all but newline
and tab) are removed, so a reply cannot recolour, retitle, rewrite or hyperlink the user's terminal; JSON
printed on a terminal goes through :func:`terminal_json` (control characters as ``\\uXXXX`` escapes).

A root module (like :mod:`tkgqa.errors`): every layer may use it.
"""

from __future__ import annotations

import json
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


#: ECMA-48 sequences in their 7-bit (``ESC …``) and 8-bit (C1) forms: CSI (``ESC [`` parameters, final
#: byte), the string commands OSC/DCS/SOS/PM/APC up to their terminator (BEL or ST), and two-character
#: escapes (``ESC c``, ``ESC ( B``…). Bodies exclude ESC and C1, so matching stays linear.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
#: C0 controls but tab and newline, DEL and the C1 controls.
_TERMINAL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029]")


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: escape sequences (colours, cursor moves, window titles, OSC 8
    hyperlinks, clipboard writes) removed whole, every other control character but newline and tab removed
    (an unterminated sequence loses its introducer, its printable rest stays visible), lone surrogates
    replaced (:func:`clean_text`). The one place terminal output is made safe (the CLI's console uses it)."""
    text = clean_text(text)
    if _TERMINAL_CONTROL.search(text) is None:
        return text
    return _TERMINAL_CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def terminal_json(value: Any) -> str:
    """``value`` as one line of JSON for a terminal: non-ASCII text kept readable, but DEL, the C1 controls
    and the line/paragraph separators written as ``\\uXXXX`` escapes (JSON's own encoder escapes only
    C0), so the line means the same to a JSON reader and nothing to the terminal."""
    line = json.dumps(clean_json(value), ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


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

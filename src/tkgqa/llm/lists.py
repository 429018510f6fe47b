"""Reading a list out of what a model wrote — the one list parser every method uses (never ``eval``).

:func:`read_list` finds the list in a reply and returns its items verbatim (:class:`ListReading`): a
bracketed list in JSON, Python or bare syntax (``["a", 'b', c]``), else bullet or numbered lines, else one
item per line, else a comma-separated line. Model text is not always valid syntax, so the bracketed reader
is lenient where the meaning is still clear:

* a quote opens a string only at the start of an item, and closes it only when a ``,`` or ``]`` follows:
  ``[People's Republic of China, Palau]`` is two items, ``['Giuseppe 'Nino' Farina']`` one;
* a quoted item whose closing quote is missing before the next ``, '`` ends at that comma
  (``['2000, '1996]`` is two items);
* a list cut off by the token limit keeps its complete items and says it was truncated (``truncated``);
  so does a list whose opening was lost (``Stratford']``);
* a bracket inside a bullet line does not turn the bullets into a bracketed list.

:func:`read_answer_list` adds the meaning of an *answer* list on top: an ``Answer:`` line is read first,
free-text items lose a sentence's final period and stray quotes, "none"-like items are dropped (a reply
that only says so is ``declined``) and repeats are removed. :func:`parse_answer_list` is its list form.
JSON and Python-repr lists read back exactly (see the tests' round trips).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from ..errors import ParseError

EXPECTED_LIST = 'a list of strings like ["a", "b"]'
_QUOTES = "\"'"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "0": "\0",
            "\\": "\\", "'": "'", '"': '"', "/": "/", "\n": ""}  # fmt: skip
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(.*\S)\s*$")


class ListForm(StrEnum):
    """How the list was written."""

    BRACKETED = "bracketed"  # ["a", 'b', c]
    BULLETS = "bullets"  # "- a" / "1. a" lines
    LINES = "lines"  # one item per line
    COMMAS = "commas"  # a, b, c
    SINGLE = "single"  # one free-text item


@dataclass(frozen=True)
class ListReading:
    """The items read, how they were written, and whether the list was cut off (``truncated``: only its
    complete items are kept) or says there is no answer (``declined``: ``[None]``, "I don't know")."""

    items: tuple[str, ...]
    form: ListForm
    truncated: bool = False
    declined: bool = False

    @property
    def note(self) -> str:
        """What a reader should know beyond the items ("" when nothing)."""
        if self.truncated:
            return f"the list was cut off: kept its {len(self.items)} complete item(s)"
        if self.declined:
            return "the reply says there is no answer"
        return ""


# ---------------------------------------------------------------- verbatim items


def read_list(text: str, *, separator: str | None = None) -> ListReading:
    """The list in ``text`` (see the module docstring), items verbatim; ``separator`` (e.g. ``"#"``)
    also splits bare bracketed items. :class:`ParseError` when there is nothing to read."""
    bracket = _list_start(text)
    if bracket is None and _head_cut(text):  # "Nathan Deal', 'Sonny Perdue']": the opening was lost
        items, _ = _scan_bracketed("[" + text.strip(), 0, separator)
        if items and items[0] and items[0][-1] in _QUOTES and items[0].count(items[0][-1]) == 1:
            items[0] = items[0][:-1].rstrip()  # the first item's opening quote was lost with the bracket
        return ListReading(tuple(i for i in items if i), ListForm.BRACKETED, truncated=True)
    if bracket is not None:
        items, complete = _scan_bracketed(text, bracket, separator)
        return ListReading(tuple(items), ListForm.BRACKETED, truncated=not complete)
    return _read_unbracketed(text)


def parse_string_list(text: str) -> list[str]:
    """The items of the list in ``text`` (:func:`read_list`), verbatim."""
    return list(read_list(text).items)


def _list_start(text: str) -> int | None:
    """Where the bracketed list starts, or ``None`` when there is none or bullets come first (a bracket
    inside a bullet line is part of that bullet, unless the bullet is only the list)."""
    start = text.find("[")
    if start < 0:
        return None
    offset = 0
    for line in text.splitlines(keepends=True):
        m = _BULLET.match(line)
        if m is not None:
            body_is_list = m.group(1).startswith("[") and len(_bullets(text)) == 1
            return start if start < offset or body_is_list else None
        offset += len(line)
        if offset > start:
            return start
    return start


def _head_cut(text: str) -> bool:
    body = text.strip()
    return body.endswith("]") and "[" not in body and "\n" not in body


def _scan_bracketed(text: str, start: int, separator: str | None) -> tuple[list[str], bool]:
    """Items of the list opening at ``text[start]`` and whether its ``]`` was reached."""
    items: list[str] = []
    i, n = start + 1, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return items, False
        ch = text[i]
        if ch == "]":
            return items, True
        if ch == ",":
            i += 1
            continue
        if ch in _QUOTES:
            value, end = _read_quoted(text, i)
            if end >= 0:
                items.append(value)
                i = end
                while i < n and text[i].isspace():
                    i += 1
                if i < n and text[i] == "]":
                    return items, True
                i += 1  # the comma
                continue
            if "]" not in text[i:]:
                return items, False  # cut off inside a string: that item is incomplete
        j = _item_end(text, i)
        if j < 0:
            return items, False  # a bare item at the end of a cut list may be cut itself
        word = text[i:j].strip()
        parts = word.split(separator) if separator else [word]
        items.extend(p.strip() for p in parts if p.strip())
        if text[j] == "]":
            return items, True
        i = j + 1


def _item_end(text: str, i: int) -> int:
    comma, close = text.find(",", i), text.find("]", i)
    ends = [e for e in (comma, close) if e >= 0]
    return min(ends) if ends else -1


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """The string opening at ``text[i]`` and the index after its closing quote (-1: never closed).

    A quote closes the string only when ``,`` or ``]`` (or the end of the text) follows it; otherwise it
    is part of the item (``'Giuseppe 'Nino' Farina'``). A quote right after ``, `` inside the string means
    the previous item lost its closing quote: the item ends at that comma."""
    quote, j, n = text[i], i + 1, len(text)
    out: list[str] = []
    comma: tuple[int, int] | None = None  # (len(out), index) of an unescaped comma followed only by spaces
    while j < n:
        ch = text[j]
        if ch == "\\" and j + 1 < n:
            j = _read_escape(text, j, out)
            comma = None
            continue
        if ch == quote:
            k = j + 1
            while k < n and text[k].isspace():
                k += 1
            if k >= n or text[k] in ",]":
                return _join_surrogates(out), j + 1
            if comma is not None:
                return _join_surrogates(out[: comma[0]]), comma[1]
        if ch == ",":
            comma = (len(out), j)
        elif not ch.isspace():
            comma = None
        out.append(ch)
        j += 1
    return "", -1


def _read_escape(text: str, j: int, out: list[str]) -> int:
    esc = text[j + 1]
    if esc in _HEX_LEN:
        digits = text[j + 2 : j + 2 + _HEX_LEN[esc]]
        try:
            out.append(chr(int(digits, 16)))
            return j + 2 + _HEX_LEN[esc]
        except (ValueError, OverflowError):
            pass
    if esc in _ESCAPES:
        out.append(_ESCAPES[esc])
        return j + 2
    out.append("\\")
    return j + 1


def _join_surrogates(chars: list[str]) -> str:
    """Join characters, combining JSON-style ``\\ud83d\\ude00`` surrogate pairs."""
    s = "".join(chars)
    if not any("\ud800" <= c <= "\udfff" for c in s):
        return s
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _bullets(text: str) -> list[str]:
    return [m.group(1).strip() for m in map(_BULLET.match, text.splitlines()) if m]


def _read_unbracketed(text: str) -> ListReading:
    bullets = _bullets(text)
    if bullets:
        return ListReading(tuple(bullets), ListForm.BULLETS)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        raise ParseError("no list found", raw=text, expected=EXPECTED_LIST)
    if len(lines) > 1:
        return ListReading(tuple(lines), ListForm.LINES)
    if "," in lines[0]:
        return ListReading(tuple(p.strip() for p in lines[0].split(",") if p.strip()), ListForm.COMMAS)
    return ListReading((lines[0],), ListForm.SINGLE)


# ---------------------------------------------------------------- answers

_PREFIX = re.compile(
    r"^\s*(?:[*_]{1,2})?(?:the\s+)?(?:final\s+)?answers?(?:\s+is|\s+are)?(?:[*_]{1,2})?\s*[:：]\s*(?:[*_]{1,2}\s*)?",
    re.IGNORECASE | re.MULTILINE,
)
_NONE_ITEM = re.compile(
    r"^(?:none|null|n/a|unknown|no answer|not sure|no information(?: available)?|not available"
    r"|i (?:do not|don't|cannot|can't) (?:know|answer|tell)|answer unknown)[.!]?$",
    re.IGNORECASE,
)
_REFUSAL = re.compile(r"\b(i\s+(?:do\s+not|don't|cannot|can't)|unknown|no answer|not sure)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]]{2})\.$")  # "… Thailand." but not "D.C." or "F.C."
_WORDISH = re.compile(r"\w")
_PAIRS = frozenset({("[", "]"), ('"', '"'), ("'", "'"), ("`", "`"), ("“", "”"), ("‘", "’")})


def read_answer_list(
    text: str, *, separator: str | None = None, max_answers: int | None = None
) -> ListReading:
    """The answers in ``text``: :func:`read_list` of the ``Answer:`` line when there is one (else of the
    whole reply), items cleaned (:func:`clean_answer`), "none"-like items dropped (a reply of only those,
    or ``[]``, is ``declined``), repeats removed, at most ``max_answers``."""
    reading = read_list(_answer_part(text), separator=separator)
    if reading.form is ListForm.SINGLE and _REFUSAL.search(reading.items[0]):
        return replace(reading, items=(), declined=True)
    cleaned = [clean_answer(v) for v in reading.items]
    nones = sum(1 for v in cleaned if _NONE_ITEM.match(v))
    kept = [v for v in cleaned if _WORDISH.search(v) and not _NONE_ITEM.match(v)]
    declined = not kept and not reading.truncated and (nones > 0 or not reading.items)
    items = tuple(dict.fromkeys(kept))[:max_answers]
    return replace(reading, items=items, declined=declined)


def says_no_answer(item: str) -> bool:
    """Whether an answer item only says there is none ("None", "N/A", "Unknown", "I don't know", …)."""
    return bool(_NONE_ITEM.match(clean_answer(item)))


def parse_answer_list(
    text: str, *, separator: str | None = None, max_answers: int | None = None, allow_empty: bool = False
) -> list[str]:
    """The answers of :func:`read_answer_list`. :class:`ParseError` when none are found — also when the
    reply says there is none, unless ``allow_empty`` (then ``[]``)."""
    reading = read_answer_list(text, separator=separator, max_answers=max_answers)
    if not reading.items and not (allow_empty and reading.declined):
        why = "the reply gives no answer" if reading.declined else "no answer found in the reply"
        raise ParseError(why, raw=text, expected='a list like ["answer"]')
    return list(reading.items)


def _answer_part(text: str) -> str:
    """What follows an ``Answer:`` line start (that line only when it holds a one-line answer)."""
    m = _PREFIX.search(text)
    if m is None:
        return text
    rest = text[m.end() :]
    line = rest.split("\n", 1)[0]
    if not line.strip():
        return rest
    return rest if "[" in line else line


def clean_answer(value: str) -> str:
    """One answer as written, without surrounding space, a pair of wrapping quotes or brackets, and a
    sentence's final period ("Thailand." → "Thailand"; "D.C." stays)."""
    item = value.strip()
    for _ in range(2):
        if len(item) >= 2 and (item[0], item[-1]) in _PAIRS:
            item = item[1:-1].strip()
        item = _SENTENCE_END.sub("", item).strip()
    return item

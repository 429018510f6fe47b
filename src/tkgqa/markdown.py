"""Markdown written from data, escaped in one place (a leaf module: it imports nothing from tkgqa).

Every report renderer (``report.md`` of ``tkgqa eval``, ``reproduce.md`` and the dry run's table of
``tkgqa reproduce``) writes values that come from data — question types, method names, error messages,
model replies — through these helpers, so a value cannot break a table, add a heading or a list, or put raw
HTML into the report:

* :func:`md_text` — inline text: ``&``, ``<`` and ``>`` as HTML entities, a backslash before ``\\``,
  ``|``, a backtick, ``[`` and ``]`` and before a leading ``#``, ``-``, ``+``, ``*``, ``=`` (a heading,
  a list, a rule), every line break (``\\n``, ``\\r``, U+2028…) a space;
* :func:`md_code` — an inline code span (verbatim, fenced so no backtick inside can close it);
* :func:`md_cell` — a table cell: :func:`md_text` (``|`` included, so the row keeps its columns);
* :func:`md_row` — a table row of cells; :func:`md_rule` — the delimiter row under a header (``|---|…``:
  a row of ``"---"`` cells would be escaped to ``\\---``, which is no delimiter).

The same shapes are printed on a terminal, where a backslash escape would show as a backslash: a renderer
takes a :class:`Flavour` — :data:`MARKDOWN` (these helpers: a ``.md`` file) or :data:`PLAIN` (for reading on
a terminal: values as they are, line breaks as spaces, so a ``|`` in a value is not kept in its cell; the
CLI makes the text terminal-safe) — and writes through it.

Headings are never built from data: a renderer writes its own fixed words there and puts the data in a
line below it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SYNTAX = re.compile(r"([\\`\[\]|])")
_LEADING = re.compile(r"^(\s*)([#\-+*=])")


def md_text(value: object) -> str:
    """``value`` as one line of inline Markdown that shows exactly its text (see the module docstring)."""
    text = _BREAKS.sub(" ", str(value))
    text = "".join(_ENTITIES.get(c, c) for c in text) if any(c in text for c in "&<>") else text
    return _LEADING.sub(r"\1\\\2", _SYNTAX.sub(r"\\\1", text))


def md_code(value: object) -> str:
    """``value`` as an inline code span (shown verbatim, ``<`` and ``>`` included): one line, fenced by more
    backticks than any run inside it, ``|`` escaped (a GFM table splits cells on it even in code)."""
    text = _BREAKS.sub(" ", str(value)).replace("|", "\\|")
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_cell(value: object) -> str:
    """``value`` as the text of one table cell (no ``|`` or line break left unescaped)."""
    return md_text(value).strip()


def md_row(values: Iterable[object]) -> str:
    """One table row: ``| a | b |`` with every cell escaped by :func:`md_cell`."""
    return MARKDOWN.row(values)


def md_rule(n: int) -> str:
    """The delimiter row under a header of ``n`` columns."""
    return "|" + "---|" * n


def plain_text(value: object) -> str:
    """``value`` as one line of plain text: line breaks as spaces, nothing escaped (for a terminal)."""
    return _BREAKS.sub(" ", str(value))


def plain_code(value: object) -> str:
    """``value`` between backticks, as plain text (nothing escaped)."""
    return f"`{plain_text(value)}`"


@dataclass(frozen=True)
class Flavour:
    """How a renderer writes values from data: escaped for a Markdown file (:data:`MARKDOWN`) or as they are,
    for a terminal (:data:`PLAIN`); headings, table rows and delimiter rows have the same shape in both."""

    text: Callable[[object], str]
    code: Callable[[object], str]

    def row(self, values: Iterable[object]) -> str:
        """One table row, ``| a | b |``."""
        return "| " + " | ".join(self.text(v).strip() for v in values) + " |"

    def rule(self, n: int) -> str:
        """The delimiter row under a header of ``n`` columns."""
        return md_rule(n)


MARKDOWN = Flavour(md_text, md_code)
PLAIN = Flavour(plain_text, plain_code)

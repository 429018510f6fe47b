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
* :func:`md_row` — a table row of cells.

Headings are never built from data: a renderer writes its own fixed words there and puts the data in a
line below it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
    return "| " + " | ".join(md_cell(v) for v in values) + " |"


def md_rule(n: int) -> str:
    """The delimiter row under a header of ``n`` columns."""
    return "|" + "---|" * n

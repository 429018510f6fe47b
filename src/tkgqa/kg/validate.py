"""The one rule for the names a KG stores, shared by every way facts come in: the file loaders
(:class:`~tkgqa.kg.builder.FactBuilder`), the Parquet importer, the stores' ``add``/``append`` and the
service's append endpoint (which parses its lines with the loaders' own code).

A name (subject, relation or object) is text of 1..:data:`MAX_NAME_CHARS` characters, not only spaces, in
Unicode NFC form, without control characters (C0/C1, e.g. a tab or newline inside a field), format
characters (invisible ones such as U+200B ZERO WIDTH SPACE, U+200E, U+FEFF, bidi overrides), line or
paragraph separators (U+2028, U+2029) or lone surrogates: "Barack\\u200bObama" would otherwise be a second,
invisible-different entity. Loaders, per-question context facts and the append endpoint normalise text
to NFC and drop invisible format characters at a name's ends (:func:`clean_name`);
the stores refuse a name that is not NFC already (:func:`check_name`), so a name is stored in one spelling.
Labels (display text) are not names and are not checked.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Any

from ..errors import DataError
from ..sanitize import shorten
from .fact import Fact

#: The longest name a KG takes (longer text in a name column is a broken file, not a name).
MAX_NAME_CHARS = 1000
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def name_problem(name: Any, *, nfc: bool = True) -> str | None:
    """Why ``name`` cannot be stored, or ``None``. With ``nfc=False`` a name not in NFC form is also
    refused (the stores' rule; loaders normalise it instead)."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not text"
    if not name or name.isspace():
        return "is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"has {len(name):,} characters (at most {MAX_NAME_CHARS:,}): {shorten(name, 40)}"
    if name.isascii():
        bad = _ASCII_CONTROL.search(name)
        if bad is None:
            return None
        chars = [bad.group()]
    else:
        chars = [ch for ch in name if unicodedata.category(ch) in _BAD_CATEGORIES]
    if chars:
        ch = chars[0]
        what = unicodedata.name(ch, unicodedata.category(ch))
        return (
            f"{shorten(name, 60)} holds the invisible or control character U+{ord(ch):04X} ({what}); "
            "remove it"
        )
    if not nfc and not unicodedata.is_normalized("NFC", name):
        return (
            f"{shorten(name, 60)} is not in Unicode NFC form; normalise it (unicodedata.normalize('NFC', …))"
        )
    return None


def _trim_invisible(name: str) -> str:
    """``name`` without the invisible format characters at its ends (Wikidata labels often carry a trailing
    U+200E LEFT-TO-RIGHT MARK): they change nothing a reader sees, so the name is the same entity's."""
    start, end = 0, len(name)
    while start < end and unicodedata.category(name[start]) == "Cf":
        start += 1
    while end > start and unicodedata.category(name[end - 1]) == "Cf":
        end -= 1
    return name[start:end]


def clean_name(name: Any, what: str = "name") -> str:
    """``name`` as stored (NFC, invisible format characters at its ends dropped); DataError naming ``what``
    if it breaks the rule (module docstring) — an invisible character inside a name is refused."""
    if isinstance(name, str) and not name.isascii():
        name = _trim_invisible(name)
    problem = name_problem(name)
    if problem is not None:
        raise DataError(f"the {what} {problem}")
    assert isinstance(name, str)
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def check_name(name: str, what: str = "name") -> str:
    """``name`` unchanged if a store may hold it (NFC already); DataError otherwise."""
    problem = name_problem(name, nfc=False)
    if problem is not None:
        raise DataError(f"the {what} {problem}")
    return name


def stored_fact(fact: Fact) -> Fact:
    """``fact`` with its names as a store holds them (:func:`clean_name`); DataError naming a name that breaks
    the rule. For facts that come with a question rather than through a loader (per-question context)."""
    names = (clean_name(fact.subject, "subject"), clean_name(fact.relation, "relation"))
    obj = clean_name(fact.object, "object")
    if names == (fact.subject, fact.relation) and obj == fact.object:
        return fact
    return replace(fact, subject=names[0], relation=names[1], object=obj)

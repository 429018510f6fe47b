"""Question frame: what is asked (entity or time, at which granularity), ordinals and temporal references.

These are surface rules over tokens, shared by the parser for large KGs and the one for per-question
contexts.

Whether a question asks for a time is read here, and only here, in three documented meanings:

* :func:`find_target` — the parser's full reading over tokens: a wh-word anywhere ("Name the country which
  …"), "the month in which …", templated items ("point in time of …"), the asked granularity;
* :func:`asks_time` / :func:`asked_granularity` — the question's *opening words* only, for callers that
  hold a string (LPKG's value kinds, ARI's answer granularity): "When …", "(In/On/At/During) what/which
  year|month|day|date|time …", "How long …". ``asks_time`` says the answer is a time or a duration (any of
  those openings); ``asked_granularity`` is the point in time asked for, so "How long" (a duration) and a bare
  "Which time …" (an occasion: "Which time did X visit Y first?") are not read as one;
* :func:`interrogative_when` — whether a "when" asks for the time ("When did …", "the month when …") rather
  than linking a clause ("… after X, when Y …"): TimeR4's rewrite reads the latter as an implicit time.

All three are total over arbitrary text (they never raise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...time import Extreme, Granularity, TemporalRelation
from .mentions import EntityMention
from .timeref import GRANULARITY_WORDS
from .words import Token, wordset

WH = frozenset({"who", "whom", "whose", "which", "what", "when", "where", "why", "how"})
AUX = wordset("did does do would will has have had was were is are can could should might may shall")
FIRST_WORDS = {"first": 1, "earliest": 1, "1st": 1, "initially": 1, "originally": 1, "firstly": 1}
LAST_WORDS = {"last": 1, "latest": 1, "final": 1, "finally": 1, "lastly": 1, "recent": 1, "recently": 1}
NTH_WORDS = {"second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}
BEFORE_WORDS = frozenset({"before", "prior", "preceding", "earlier"})
AFTER_WORDS = frozenset({"after", "following", "since", "later", "succeeding"})
ANSWER_NOUNS = wordset(
    "country countries person people one ones organization entity group nation state leader who else"
)
RECEIVE_WORDS = frozenset(
    {"receive", "received", "receiving", "receives", "get", "got", "obtain", "obtained"}
)


@dataclass(frozen=True, slots=True)
class Ordinal:
    which: Extreme
    n: int
    position: int  # token index of the ordinal word


@dataclass(frozen=True, slots=True)
class TemporalReference:
    """A temporal reference ("before/after/same time as <entity>"): the mention and the operator."""

    mention: EntityMention
    op: TemporalRelation  # before | after | in
    granularity: Granularity | None = None


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # entity | time
    granularity: Granularity | None
    wh_position: int
    use_end: bool = False


def first_wh(tokens: list[Token]) -> int:
    for k, t in enumerate(tokens):
        if t.text in WH:
            return k
    return -1


_END_WORDS = wordset(
    "end ended ending ends finish finished stop stopped leave left until retire retired dissolve "
    "dissolved close closed graduate graduated graduation degree divorce divorced cease ceased resign "
    "resigned lose lost"
)
_TIME_ITEMS = (
    ("point", "in", "time"),
    ("date", "of", "birth"),
    ("date", "of", "death"),
    ("start", "time"),
    ("end", "time"),
)


def _asks_time_item(texts: list[str]) -> bool:
    """Templated questions asking for a time item ("what is X and point in time of …") rather than
    constraining by one ("… that is point in time is 2005")."""
    for k in range(len(texts)):
        for item in _TIME_ITEMS:
            n = len(item)
            if tuple(texts[k : k + n]) == item:
                nxt = texts[k + n] if k + n < len(texts) else ""
                if nxt != "is" and not nxt.isdigit():
                    return True
    return False


_TIME_LEADS = wordset(
    "exact specific particular precise the was is were are start starting beginning begin end ending finish "
    "of first last"
)


def find_target(tokens: list[Token]) -> Target:
    """Entity or time question, and the asked granularity ("In which month …" → month)."""
    texts = [t.text for t in tokens]
    w = first_wh(tokens)
    use_end = any(t in _END_WORDS for t in texts)
    if w < 0 or (texts[w] not in {"when"} and any(t in GRANULARITY_WORDS for t in texts[:w])):
        if texts and texts[-1] == "when":
            return Target("time", None, len(texts) - 1, use_end)
        for k in range(min(len(texts), 6 if w < 0 else w)):
            if texts[k] in GRANULARITY_WORDS and (k == 0 or texts[k - 1] in {"the", "what", "which"}):
                return Target("time", GRANULARITY_WORDS[texts[k]], k, use_end)
        if w < 0:
            return Target("entity", None, -1)
    if texts[w] == "when":
        gran = None
        for k in range(max(0, w - 3), w):
            gran = GRANULARITY_WORDS.get(texts[k], gran)
        return Target("time", gran, w, use_end)
    if texts[w] in {"which", "what"}:
        for k in range(w + 1, min(len(texts), w + 6)):
            if texts[k] in GRANULARITY_WORDS:
                return Target("time", GRANULARITY_WORDS[texts[k]], w, use_end)
            if texts[k] in {"time", "period"} or (
                texts[k] == "point" and texts[k + 1 : k + 3] == ["in", "time"]
            ):
                return Target("time", None, w, use_end)
            if texts[k] not in _TIME_LEADS:
                break
    if texts[w] in {"what", "which"} and _asks_time_item(texts):
        return Target("time", None, w, use_end)
    # "the (exact) month in which …"
    for k in range(max(0, w - 4), w):
        if texts[k] in GRANULARITY_WORDS and texts[k] not in {"days"}:
            return Target("time", GRANULARITY_WORDS[texts[k]], w, use_end)
    return Target("entity", None, w)


# The opening words of a question that asks for a time (see the module docstring).
_TIME_OPENING = re.compile(
    r"^\s*(?:(?P<when>when)\b"
    r"|(?P<prep>in|on|at|during)?(?P<gap>\s*)(?P<wh>what|which)\s+(?P<unit>year|month|day|date|time)\b"
    r"|(?P<span>how long)\b)",
    re.IGNORECASE,
)
_UNIT_WHEN = re.compile(r"\b(?:month|year|day|date|time)\s+when\b", re.IGNORECASE)


def asks_time(question: str) -> bool:
    """Whether ``question`` opens by asking for a time or a duration ("When …", "In which year …", "On what
    date …", "How long …")."""
    return _TIME_OPENING.match(question) is not None


def asked_granularity(question: str) -> Granularity | None:
    """The granularity of the point in time ``question`` opens by asking for ("In which month …" → MONTH,
    "When …" → DAY), ``None`` when it asks for none (nor for "How long …" or a bare "Which time …")."""
    m = _TIME_OPENING.match(question)
    if m is None or m.group("span") or (m.group("prep") and not m.group("gap")):
        return None
    if not m.group("prep") and (m.group("wh") or "").lower() == "which" and m.group("unit").lower() == "time":
        return None  # a bare "Which time …" asks for an occasion
    low = m.group(0).lower()
    if "year" in low:
        return Granularity.YEAR
    if "month" in low:
        return Granularity.MONTH
    return Granularity.DAY


def interrogative_when(text: str) -> bool:
    """Whether ``text`` opens with "when" or holds "<unit> when" ("the month when …"): a "when" that asks
    for the time (TimeR4's rewrite passes the question up to a "when" it found)."""
    m = _TIME_OPENING.match(text)
    return (m is not None and m.group("when") is not None) or _UNIT_WHEN.search(text) is not None


def find_ordinal(tokens: list[Token], covered: set[int]) -> Ordinal | None:
    for k, t in enumerate(tokens):
        if k in covered or (k > 0 and tokens[k - 1].text in {"a", "an"}):
            continue  # "meet at a third location" is no ordinal
        if t.text in FIRST_WORDS:
            return Ordinal(Extreme.FIRST, 1, k)
        if t.text in LAST_WORDS:
            if t.text in {"recent", "recently"} and not (k > 0 and tokens[k - 1].text == "most"):
                continue
            return Ordinal(Extreme.LAST, 1, k)
        if t.text in NTH_WORDS:
            nxt = tokens[k + 1].text if k + 1 < len(tokens) else ""
            if nxt in {"to", "last"}:
                return Ordinal(Extreme.LAST, NTH_WORDS[t.text], k)
            return Ordinal(Extreme.FIRST, NTH_WORDS[t.text], k)
    return None


_REFERENCE_FILLERS = frozenset({"the", "that", "of", "a", "an", "other", "these", "those"})


def reference_op(tokens: list[Token], mention: EntityMention) -> TemporalRelation | None:
    """``before``/``after`` when the mention follows such a word ("Before the Danish ministry, …"), also
    through one gerund naming the reference event ("after leaving Manchester United")."""
    k = mention.start - 1
    while k >= 0 and tokens[k].text in _REFERENCE_FILLERS:
        k -= 1
    if k > 0 and len(tokens[k].text) > 4 and tokens[k].text.endswith("ing"):
        k -= 1
    if k < 0:
        return None
    w = tokens[k].text
    if w in BEFORE_WORDS or (w == "to" and k > 0 and tokens[k - 1].text == "prior"):
        return TemporalRelation.BEFORE
    if w in AFTER_WORDS:
        return TemporalRelation.AFTER
    return None


def same_time(tokens: list[Token]) -> tuple[int, Granularity | None] | None:
    """Position and granularity of "the same day/month/year (as …)"."""
    for k, t in enumerate(tokens):
        if t.text == "same":
            gran = None
            for j in range(k + 1, min(len(tokens), k + 3)):
                gran = GRANULARITY_WORDS.get(tokens[j].text, gran)
            return k, gran
        if t.text in {"simultaneously", "concurrently"}:
            return k, None
    return None


def find_references(
    tokens: list[Token], mentions: list[EntityMention]
) -> tuple[list[EntityMention], TemporalReference | None]:
    """Split mentions into main ones and (at most) one temporal reference."""
    ref: TemporalReference | None = None
    mains: list[EntityMention] = []
    for m in mentions:
        op = reference_op(tokens, m)
        if op is not None and ref is None:
            ref = TemporalReference(m, op)
        else:
            mains.append(m)
    if ref is None and len(mains) >= 2:
        same = same_time(tokens)
        if same is not None:
            pos, gran = same
            nearest = min(mains[1:], key=lambda m: min(abs(m.start - pos), abs(m.end - 1 - pos)))
            ref = TemporalReference(nearest, TemporalRelation.IN, gran or Granularity.DAY)
            mains = [m for m in mains if m is not nearest]
    return mains, ref

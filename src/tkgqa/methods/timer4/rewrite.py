"""When a question needs TimeR4's rewrite (§4.3), and whether a rewrite is acceptable.

:func:`needs_rewrite` spots an *implicit* temporal reference: a temporal signal (``before``, ``after``,
``prior to``, ``following``, ``during``, ``while``, a relative ``when``, ``the same day/month/year as``) whose
argument is not an explicit time ("After the Danish Ministry, …" yes; "Before 14 October 2015, …" no;
"When did X visit Y?" no — an interrogative ``when`` asks for the time). Questions without one keep their
text and cost no LLM call (policy ``"detect"``); policy ``"always"`` sends every question, as the paper does.

:func:`accept_rewrite` keeps the model's rewrite only if it is a plausible question that now carries an
explicit time the original lacked; otherwise the original stays (the Figure 5 prompt asks the model to
return the original question when unsure, which this also enforces).
"""

from __future__ import annotations

import re

from ..symbolic.timeref import find_times
from ..symbolic.words import tokenize

_SIGNAL = re.compile(
    r"\b(before|after|prior to|following|during|while|until|since|when|"
    r"(?:on|in|at) the same (?:day|month|year|time)(?: as| of)?|same (?:day|month|year|time) as)\b",
    re.IGNORECASE,
)
_INTERROGATIVE_WHEN = re.compile(r"^\s*when\b|\b(?:month|year|day|date|time)\s+when\b", re.IGNORECASE)
_ARGUMENT_END = re.compile(r"[,?.;!]")


def _times_in(text: str) -> list[str]:
    return [m.text for m in find_times(text, tokenize(text))]


def _explicit_argument(after: str) -> bool:
    """Whether the words following a signal start with an explicit time."""
    arg = _ARGUMENT_END.split(after, maxsplit=1)[0].strip()
    arg = re.sub(r"^(?:the\s+)?(?:(?:year|month|day|date)\s+)?(?:of\s+)?", "", arg, flags=re.IGNORECASE)
    if not arg:
        return True  # "… in the same year?" with nothing after: the time is elsewhere in the question
    mentions = find_times(arg, tokenize(arg))
    return bool(mentions) and mentions[0].start <= 1


def needs_rewrite(question: str) -> bool:
    """True if ``question`` refers to a time only through an event or entity (see the module docstring)."""
    for m in _SIGNAL.finditer(question):
        word = m.group(1).lower()
        if word == "when" and _INTERROGATIVE_WHEN.search(question[: m.end()]):
            continue
        if word.startswith(("on the same", "in the same", "at the same", "same")) and _times_in(question):
            continue  # "in the same month as … in 2012": the time is given
        if not _explicit_argument(question[m.end() :]):
            return True
    return False


def accept_rewrite(original: str, rewritten: str) -> bool:
    """Keep ``rewritten`` only if it is question-like, not much longer, and adds an explicit time."""
    new = rewritten.strip()
    if not new or new == original.strip() or new.startswith(("[", "{")):
        return False
    if len(new) > 2 * len(original) + 60:
        return False
    before = set(_times_in(original))
    return any(t not in before for t in _times_in(new))

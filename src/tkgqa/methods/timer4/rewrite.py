"""TimeR4's rewrite stage (§4.3): when a question needs it, and the two ways of doing it.

:func:`needs_rewrite` spots an *implicit* temporal reference: a temporal signal (``before``, ``after``,
``prior to``, ``following``, ``during``, ``while``, a relative ``when``, ``the same day/month/year as``) whose
argument is not an explicit time ("After the Danish Ministry, …" yes; "Before 14 October 2015, …" no;
"When did X visit Y?" no — an interrogative ``when`` asks for the time). Questions without one keep their
text and cost no LLM call (policy ``"detect"``); policy ``"always"`` sends every question, as the paper does.

Which rewrite runs is a :class:`RewriteMode`: ``llm`` (the paper's Figure 5 prompt over the FKS facts),
``kg`` (offline, below), ``auto`` (``llm`` when the method has an LLM, else ``kg``) or ``off``.

* **LLM** — :func:`check_rewrite` keeps the model's rewrite only if it is a question about the same thing
  that now carries an explicit time the original lacked; an answer sentence, an apology, a list or an
  unrelated question is refused with its :class:`RewriteVerdict`, and the original stays (the Figure 5
  prompt asks the model to return the original question when unsure, which this also enforces).
* **KG** (:func:`kg_rewrite`) — the shared offline :class:`~tkgqa.query.Reasoner` parses the question; a
  temporal reference ("after the Danish ministry [visited Iraq]", "before X did", "on the same day as X")
  becomes a ``Filter(rows, op, TimeOf(reference rows))`` node, and the :class:`~tkgqa.query.Executor`
  evaluates the ``TimeOf`` over the KG — the anchor event's time. :func:`place_time` then writes that time
  in place of the reference ("After 2005-03-14, who was the first to visit Iraq?"). The resolved relation and
  time are kept (:class:`KGRewrite`) so φ_t uses them directly, at the time's own granularity (an interval
  from a per-question context stays an interval), instead of re-reading them from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import assert_never

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg import Fact, KGStore
from ...llm import Usage
from ...query import Executor, Filter, Program, Reasoner, Rows, TimeOf, find_times, pretty
from ...query.program.nodes import Combine, Compare, Entities, Exclude, Fallback, Hop, Match, Select, Times
from ...query.text.frame import interrogative_when
from ...query.text.words import tokenize
from ...retrieval.temporal import TimeConstraint
from ...time import Granularity, Interval, TemporalRelation, TimePoint
from .steps import KGRewriteStep, RewriteStep

_SIGNAL = re.compile(
    r"\b(before|after|prior to|following|during|while|until|since|when|"
    r"(?:on|in|at) the same (?:day|month|year|time)(?: as| of)?|same (?:day|month|year|time) as)\b",
    re.IGNORECASE,
)
_ARGUMENT_END = re.compile(r"[,?;!]|\.\s*$|\.\s+(?=[A-Z])")  # "William J. Fallon" keeps its inner period


class RewriteMode(StrEnum):
    """Which rewrite runs: ``auto`` (the LLM when the method has one, else the KG), ``llm``, ``kg`` or
    ``off``."""

    AUTO = "auto"
    LLM = "llm"
    KG = "kg"
    OFF = "off"

    @classmethod
    def parse(cls, value: object) -> RewriteMode:
        """A mode from its name; ``True``/``False`` (the old boolean setting) mean ``auto``/``off``."""
        if isinstance(value, RewriteMode):
            return value
        text = str(value).strip().lower()
        legacy = {
            "true": cls.AUTO,
            "1": cls.AUTO,
            "yes": cls.AUTO,
            "false": cls.OFF,
            "0": cls.OFF,
            "no": cls.OFF,
        }
        if text in legacy:
            return legacy[text]
        try:
            return cls(text)
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise ConfigError(f"unknown TimeR4 rewrite mode {value!r}; use one of: {valid}") from None


class RewriteAnchor(StrEnum):
    """Which KG facts may stand for the reference event of the offline rewrite: only the asked relation
    (with its converse/reverse readings and the lexicon's second-best relation) — ``asked`` — or, when none
    of those is in the KG, also any relation between the same two entities — ``any`` (the parser's
    ``any_relation`` fallback; the trace then says ``relaxed``)."""

    ASKED = "asked"
    ANY = "any"


def _times_in(text: str) -> list[str]:
    return [m.text for m in find_times(text, tokenize(text))]


def _argument(after: str) -> str:
    """The words a signal governs: up to the end of its clause."""
    return _ARGUMENT_END.split(after, maxsplit=1)[0]


def _explicit_argument(after: str) -> bool:
    """Whether the words following a signal start with an explicit time ("July, 2013" included)."""
    if not _argument(after).strip():
        return True  # "… in the same year?" with nothing after: the time is elsewhere in the question
    rest = re.sub(r"^\s*(?:the\s+)?(?:(?:year|month|day|date)\s+)?(?:of\s+)?", "", after, flags=re.IGNORECASE)
    mentions = find_times(rest, tokenize(rest))
    return bool(mentions) and mentions[0].start <= 1


def _implicit_signals(question: str) -> list[re.Match[str]]:
    out = []
    for m in _SIGNAL.finditer(question):
        word = m.group(1).lower()
        if word == "when" and interrogative_when(question[: m.end()]):
            continue
        if word.startswith(("on the same", "in the same", "at the same", "same")) and _times_in(question):
            continue  # "in the same month as … in 2012": the time is given
        if not _explicit_argument(question[m.end() :]):
            out.append(m)
    return out


def needs_rewrite(question: str) -> bool:
    """True if ``question`` refers to a time only through an event or entity (see the module docstring)."""
    return bool(_implicit_signals(question))


class RewriteVerdict(StrEnum):
    """What a proposed rewrite is: ``accepted``, or why it is not a rewrite of the question."""

    ACCEPTED = "accepted"
    EMPTY = "empty"
    UNCHANGED = "unchanged"  # the original question itself (the prompt's answer when unsure)
    STRUCTURED = "structured"  # a list or JSON, not a question
    APOLOGY = "apology"  # "I'm sorry, …", "As an AI …"
    NOT_A_QUESTION = "not_a_question"  # a statement, typically the answer ("The first book … was …")
    UNRELATED = "unrelated"  # a question, but about something else
    TOO_LONG = "too_long"
    NO_NEW_TIME = "no_new_time"  # a question that adds no explicit time


@dataclass(frozen=True)
class RewriteCheck:
    """The verdict on a proposed rewrite, with a few words on it (``detail``)."""

    verdict: RewriteVerdict
    detail: str = ""

    @property
    def accepted(self) -> bool:
        return self.verdict is RewriteVerdict.ACCEPTED

    def reason(self) -> str:
        return f"{self.verdict}: {self.detail}" if self.detail else str(self.verdict)


_INTERROGATIVE = re.compile(
    r"^(?:(?:in|on|at|during|from|for|to|by|with|of|after|before|since|until)\s+(?:what|which|whom|whose)"
    r"|what|when|who|whom|whose|which|where|why|how|name|list|give|tell|is|are|was|were|did|does|do"
    r"|can|could|has|have|had|will|would)\b",
    re.IGNORECASE,
)
_APOLOGY = re.compile(
    r"^(?:i(?:'m| am) sorry|sorry|i apologi[sz]e|unfortunately|as an ai"
    r"|i(?:'m| am) (?:not sure|unable|not aware)"
    r"|i (?:cannot|can't|could not|couldn't|do not|don't)\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+")
_SENTENCE = re.compile(r"(?<=[a-z0-9)\"'”][a-z0-9)\"'”][.!?:])\s+(?=[A-Z\"'“])|\n")  # not after "U.S."
_STOP = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "are",
    "was", "were", "be", "been", "did", "does", "do", "what", "when", "who", "whom", "whose", "which",
    "where", "why", "how", "that", "this", "as", "it", "its", "his", "her", "their", "after", "before",
    "during", "since", "until", "while", "first", "last", "s",
})  # fmt: skip


def _content_words(text: str) -> set[str]:
    return {
        w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP and not w.isdigit()
    }


def _asks(text: str) -> bool:
    """Whether ``text`` is a question: its first sentence ends with ``?``, or opens like a question and does
    not end like a statement ("When X was prime minister, the following … held:" does)."""
    first = _SENTENCE.split(text, maxsplit=1)[0].strip()
    return first.endswith("?") or (bool(_INTERROGATIVE.match(first)) and not first.endswith((".", ":", "!")))


def check_rewrite(original: str, rewritten: str) -> RewriteCheck:
    """Whether ``rewritten`` is a rewrite of ``original``: a question (see :func:`_asks`),
    about the same thing (at least half of the original's content words), not much longer, that adds an
    explicit time. Answer sentences, apologies, lists and unrelated questions are refused (see
    :class:`RewriteVerdict`)."""
    new, old = rewritten.strip(), original.strip()
    if not _WORD.search(new):  # nothing, or only punctuation ("?" continuing the question)
        return RewriteCheck(RewriteVerdict.EMPTY, new[:80])
    if new.casefold().rstrip("?. ") == old.casefold().rstrip("?. "):
        return RewriteCheck(RewriteVerdict.UNCHANGED)
    if new.startswith(("[", "{")):
        return RewriteCheck(RewriteVerdict.STRUCTURED)
    if _APOLOGY.match(new):
        return RewriteCheck(RewriteVerdict.APOLOGY, new[:80])
    if not _asks(new):
        return RewriteCheck(RewriteVerdict.NOT_A_QUESTION, new[:80])
    if len(new) > 2 * len(old) + 60:
        return RewriteCheck(
            RewriteVerdict.TOO_LONG, f"{len(new)} characters for a {len(old)}-character question"
        )
    words = _content_words(old)
    kept = words & _content_words(new)
    if words and len(kept) * 2 < len(words):
        return RewriteCheck(
            RewriteVerdict.UNRELATED, f"keeps {len(kept)} of the question's {len(words)} words"
        )
    before = set(_times_in(original))
    if not any(t not in before for t in _times_in(new)):
        return RewriteCheck(RewriteVerdict.NO_NEW_TIME)
    return RewriteCheck(RewriteVerdict.ACCEPTED)


def accept_rewrite(original: str, rewritten: str) -> bool:
    """Whether :func:`check_rewrite` accepts ``rewritten``."""
    return check_rewrite(original, rewritten).accepted


# --- the offline (KG) rewrite -----------------------------------------------------------------------------
_BEFORE_SIGNALS = frozenset({"before", "prior to"})
_AFTER_SIGNALS = frozenset({"after", "following", "since"})
_ORDERED = (TemporalRelation.BEFORE, TemporalRelation.AFTER)


def _signal_relation(word: str) -> TemporalRelation:
    w = word.lower()
    if w in _BEFORE_SIGNALS:
        return TemporalRelation.BEFORE
    if w in _AFTER_SIGNALS:
        return TemporalRelation.AFTER
    return TemporalRelation.IN  # same day/month/year as, when, while, during, until


def time_text(time: TimePoint | Interval) -> str:
    """How a resolved time is written into the question: ISO at its granularity; an interval as a range."""
    if isinstance(time, TimePoint):
        return time.iso()
    if time.is_point and time.start is not None:
        return time.start.iso()
    start = time.start.iso() if time.start is not None else "…"
    end = time.end.iso() if time.end is not None else "now"
    return f"{start} to {end}"


def place_time(question: str, relation: TemporalRelation, time: TimePoint | Interval) -> str | None:
    """``question`` with the implicit reference that asks for ``relation`` replaced by ``time``:
    "After the Danish ministry, who …" → "After 2005-03-14, who …"; "… on the same day as X?" →
    "… on 2010-03-16?". ``None`` when no implicit signal of that relation is found."""
    for m in _implicit_signals(question):
        word = m.group(1)
        found = _signal_relation(word)
        if found is not (relation if relation in _ORDERED else TemporalRelation.IN):
            continue
        rest = question[m.end() :]
        arg = _argument(rest)
        # an explicit time inside the clause stays ("after X did in 2012" → "after <t> in 2012")
        mentions = find_times(arg, tokenize(arg))
        if mentions:
            arg = arg[: tokenize(arg)[mentions[0].start].start]
        arg_end = m.end() + len(arg.rstrip())
        if found is TemporalRelation.IN:
            coarse = isinstance(time, TimePoint) and time.granularity is not Granularity.DAY
            cue = "from" if isinstance(time, Interval) else ("in" if coarse else "on")  # from 1990 to 1995
            cue = cue.capitalize() if word[:1].isupper() else cue
        else:
            cue = word
        return f"{question[: m.start()]}{cue} {time_text(time)}{question[arg_end:]}"
    return None


@dataclass(frozen=True)
class KGRewrite:
    """An implicit time resolved through the KG: the rewritten text, the relation and the anchor's time."""

    text: str
    relation: TemporalRelation
    time: TimePoint | Interval
    reference: str  # the TimeOf node that was evaluated
    facts: list[Fact] = field(default_factory=list)  # the anchor event(s)
    relaxed: bool = False  # the anchor is a fact of another relation between the same entities

    @property
    def constraint(self) -> TimeConstraint:
        """φ_t's constraint: before/after the anchor's time, else *equal* (in) it."""
        return TimeConstraint.relative_to(self.relation, self.time)

    def step(self, mode: str, policy: str, original: str) -> KGRewriteStep:
        """The rewrite trace step (``mode``, ``policy``, ``original``: the stage's common fields)."""
        return KGRewriteStep(
            mode,
            policy,
            original,
            relation=str(self.relation),
            time=time_text(self.time),
            constraint=str(self.constraint),
            reference=self.reference,
            anchor_facts=[str(f) for f in self.facts],
            relaxed=self.relaxed,
            rewritten=self.text,
        )


@dataclass(frozen=True)
class RewriteOutcome:
    """What TimeR4's rewrite stage produced: the question TKS retrieves with, which rewrite ran (``None``:
    none did), the φ_t constraint it resolved (``None``: read from ``text``), its trace step and usage."""

    text: str
    mode: RewriteMode | None
    constraint: TimeConstraint | None
    step: RewriteStep
    usage: Usage = field(default_factory=Usage)

    @property
    def rewritten(self) -> bool:
        return self.text != self.step.original


def _relations(node: Rows) -> set[str]:
    """Relation names (and converses) the matches under ``node`` ask for."""
    match node:
        case Match():
            return {r for r in (node.relation, node.inverse) if r}
        case Filter() | Select() | Exclude():
            return _relations(node.rows)
        case Hop():
            return {node.relation} | _relations(node.rows)
        case Fallback():
            return _relations(node.primary) | _relations(node.alternative)
        case Combine():
            return set().union(*(_relations(part) for part in node.parts))
        case Compare():
            return set().union(*(_relations(rows) for _, rows in node.candidates))
        case _:
            assert_never(node)


def _references(node: Program | Rows) -> list[tuple[TemporalRelation, TimeOf]]:
    """The ``Filter(…, TimeOf(…))`` nodes of a program, outermost first (each ``TimeOf`` once)."""
    out: list[tuple[TemporalRelation, TimeOf]] = []
    stack: list[Program | Rows] = [node]
    while stack:
        n = stack.pop(0)
        match n:
            case Filter():
                if isinstance(n.time, TimeOf) and all(t is not n.time for _, t in out):
                    out.append((n.op, n.time))
                stack.append(n.rows)
            case Entities() | Times() | Select() | Exclude() | Hop():
                stack.append(n.rows)
            case Fallback():
                stack.extend([n.primary, n.alternative])
            case Combine():
                stack.extend(n.parts)
            case Compare():
                stack.extend(rows for _, rows in n.candidates)
            case Match():
                pass
            case _:
                assert_never(n)
    return out


def kg_rewrite(question: Question | str, kg: KGStore, reasoner: Reasoner) -> tuple[KGRewrite | None, str]:
    """Resolve ``question``'s implicit time through ``kg`` (see the module docstring); the rewrite, or
    ``None`` and why not. ``question`` is a :class:`~tkgqa.datasets.base.Question` or its text."""
    q = question if isinstance(question, Question) else Question(qid="adhoc", text=str(question))
    text = q.text
    parse = reasoner.parse(q, kg)
    if parse.program is None:
        return None, f"no parse: {parse.reason}"
    refs = _references(parse.program)
    if not refs:
        return None, "no temporal reference to an event"
    executor = Executor(reasoner.store_for(q, kg))
    for relation, ref in refs:
        time = executor.time(ref)
        if time is None:
            continue
        new = place_time(text, relation, time)
        if new is None:
            return None, f"resolved {relation} {time_text(time)} but found no implicit reference to replace"
        anchors = list(executor.reference_facts)
        relaxed = bool(anchors) and anchors[-1].relation not in _relations(ref.rows)
        return KGRewrite(new, relation, time, pretty(ref), anchors, relaxed), ""
    return None, f"the reference event is not in the KG ({pretty(refs[0][1])})"

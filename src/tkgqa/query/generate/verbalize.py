"""Verbalisation of KG-derived questions, shared by both generators: relation labels read as verb phrases
(past tense, base form, a trailing preposition) or noun phrases, times as text ("on 15 March 2013", "in April
2005", "2012"), the question templates of one projection, and the complex question of a grounded pattern
instance (:class:`PatternVerbalizer`).

Users: the MultiTQ-style generator (:mod:`.questions`: :func:`past_tense`, :func:`base_form`,
:func:`time_text`) and LPKG's planning data (:mod:`tkgqa.methods.lpkg.verbalize`, which adds the
sub-questions and gold plans: :class:`RelationPhrase`, :class:`PatternVerbalizer`). Month names come from the
one table in :mod:`tkgqa.time` (:data:`~tkgqa.time.MONTH_NAMES`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import assert_never

from ...kg.base import KGStore
from ...time import MONTH_NAMES, Extreme, Granularity, TemporalRelation, TimePoint
from ..program.answer_sets import CompareMode
from ..program.nodes import SetOperation
from . import patterns
from .patterns import Compare, PatternNode, PatternType, Pick, Projection, SetOp, TimeFilter, WhenQ

# --- verbs ----------------------------------------------------------------------------------------------
_IRREGULAR = {
    "make": "made", "give": "gave", "bring": "brought", "meet": "met", "fight": "fought",
    "forgive": "forgave", "take": "took", "hold": "held", "win": "won", "lead": "led", "send": "sent",
    "seek": "sought", "find": "found", "ban": "banned", "halt": "halted", "expel": "expelled",
    "veto": "vetoed", "be": "was", "have": "had",
}  # fmt: skip
#: Words that start a verbal relation label (ICEWS/CAMEO: "Make a visit", "Criticize or denounce").
VERBS = frozenset({
    "abduct", "accede", "accuse", "acknowledge", "allow", "apologize", "appeal", "arrest", "assassinate",
    "attack", "attempt", "ban", "bring", "carry", "coerce", "complain", "conduct", "confiscate", "consider",
    "consult", "cooperate", "criticize", "declare", "decline", "defend", "defy", "demand", "demobilize",
    "demonstrate", "denounce", "deny", "destroy", "detonate", "discuss", "ease", "employ", "endorse",
    "engage", "expel", "express", "fight", "forgive", "give", "grant", "halt", "host", "impose", "increase",
    "investigate", "kill", "make", "mediate", "meet", "mobilize", "obstruct", "occupy", "praise", "protest",
    "provide", "rally", "receive", "reduce", "refuse", "reject", "release", "retreat", "return", "seize",
    "share", "sign", "threaten", "torture", "use", "veto", "violate", "yield", "hijack", "take", "detain",
})  # fmt: skip
_ADVERBS = frozenset({"physically", "sexually", "violently", "formally"})
_WITH = ("cooperat", "negotiat", "meet", "mediat", "agreement", "relation", "talk", "dispute", "settle",
         "discuss")  # fmt: skip
_AGAINST = ("force", "fight", "attack", "violence", "assault", "kill", "bomb", "protest", "coerce", "torture")


def past(verb: str) -> str:
    """The past tense of one verb as written (``make`` → ``made``, ``deny`` → ``denied``)."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    return verb + "ed"


def _label_words(label: str) -> list[str]:
    """The words of a relation label, the first lower-cased (and every lower-case one kept; names keep
    their case)."""
    words = label.replace("_", " ").split()
    return [w.lower() if i == 0 or w.islower() else w for i, w in enumerate(words)]


def base_form(label: str) -> str:
    """A relation label as a verb phrase: ``Make_a_visit`` → ``make a visit`` (names keep their case)."""
    return " ".join(_label_words(label))


def past_tense(label: str) -> str:
    """A relation label as a past-tense verb phrase: ``Make a visit`` → ``made a visit``,
    ``Criticize or denounce`` → ``criticized or denounced``."""
    out = _label_words(label)
    if not out:
        return label
    out[0] = past(out[0])
    if len(out) == 3 and out[1] == "or" and out[2].isalpha():  # "criticize or denounce": both verbs
        out[2] = past(out[2])
    return " ".join(out)


@dataclass(frozen=True)
class RelationPhrase:
    """How a relation reads in a question: ``base``/``past`` verb phrases (with a trailing preposition) or
    a noun ``label``."""

    label: str
    verbal: bool
    base: str = ""
    past: str = ""

    @classmethod
    def of(cls, label: str) -> RelationPhrase:
        text = re.sub(r"\s*\([^)]*\)", "", label.replace("_", " ")).strip()
        words = text.split()
        if not words:
            return cls(label, False)
        lead = 1 if words[0].lower() in _ADVERBS and len(words) > 1 else 0
        if words[lead].lower().strip(",") not in VERBS:
            return cls(text.lower() if text[:1].isupper() and not text[1:2].isupper() else text, False)
        base_words = [w.lower() if i <= lead else w for i, w in enumerate(words)]
        past_words = list(base_words)
        past_words[lead] = _past_word(base_words[lead])
        for i in range(lead + 1, len(past_words)):  # "criticize or denounce" → "criticized or denounced"
            prev = past_words[i - 1]
            if (prev == "or" or prev.endswith(",")) and past_words[i].strip(",") in VERBS:
                past_words[i] = _past_word(past_words[i])
        prep = _preposition(" ".join(base_words))
        base = " ".join(base_words) + (f" {prep}" if prep else "")
        return cls(text, True, base, " ".join(past_words) + (f" {prep}" if prep else ""))


def _past_word(word: str) -> str:
    """:func:`past` of a word that may end with a comma (kept)."""
    return past(word.strip(",")) + ("," if word.endswith(",") else "")


def _preposition(phrase: str) -> str:
    words = phrase.split()
    if len(words) == 1 or words[-1] in {"to", "with", "for", "of", "against", "on", "about", "by"}:
        return ""
    if words[-1] == "visit":
        return "by" if words[0] == "host" else "to"
    if any(k in phrase for k in _WITH):
        return "with"
    if "sanction" in phrase or "embargo" in phrase:
        return "on"
    if any(k in phrase for k in _AGAINST):
        return "against"
    if "statement" in phrase or "comment" in phrase:
        return "about"
    return "to"


# --- times ----------------------------------------------------------------------------------------------
def date_text(t: TimePoint) -> str:
    """``2012`` / ``May 2012`` / ``3 May 2012``."""
    if t.month is None:
        return str(t.year)
    if t.day is None:
        return f"{MONTH_NAMES[t.month - 1]} {t.year}"
    return f"{t.day} {MONTH_NAMES[t.month - 1]} {t.year}"


def time_text(t: TimePoint, prep: str = "in") -> str:
    """``on 19 November 2015`` / ``in April 2005`` / ``in 2012`` (``prep`` ``before``/``after`` kept)."""
    return f"{'on' if prep == 'in' and t.day is not None else prep} {date_text(t)}"


# --- one projection -------------------------------------------------------------------------------------
def ask(r: RelationPhrase, src: str, inverse: bool, v: int = 0) -> str:
    """The question of one projection: who/what is one ``r`` step from ``src``."""
    if r.verbal:
        if inverse:
            return [f"Who {r.past} {src}?", f"Which entities {r.past} {src}?"][v % 2]
        return [f"Whom did {src} {r.base}?", f"Who did {src} {r.base}?"][v % 2]
    if inverse:
        return [f"Whose {r.label} is {src}?", f"Which entities have {src} as {r.label}?"][v % 2]
    return [f"What is the {r.label} of {src}?", f"Which entity is the {r.label} of {src}?"][v % 2]


def describe(r: RelationPhrase, src: str, inverse: bool) -> str:
    """A noun phrase for the answers of one projection."""
    if r.verbal:
        return f"those who {r.past} {src}" if inverse else f"those whom {src} {r.past}"
    return f"those whose {r.label} is {src}" if inverse else f"the {r.label} of {src}"


def clause(r: RelationPhrase, src: str, inverse: bool) -> str:
    """A relative clause for "the entities …"."""
    if r.verbal:
        return f"that {r.past} {src}" if inverse else f"that {src} {r.past}"
    return f"whose {r.label} is {src}" if inverse else f"that are the {r.label} of {src}"


def ask_when(r: RelationPhrase, s: str, o: str, gran: Granularity | None, v: int = 0) -> str:
    lead = {None: "When", Granularity.YEAR: "In which year", Granularity.MONTH: "In which month",
            Granularity.DAY: "On which day"}[gran]  # fmt: skip
    if r.verbal:
        return f"{lead} did {s} {r.base} {o}?"
    return [f"{lead} was {o} the {r.label} of {s}?", f"{lead} did {s} have {o} as {r.label}?"][v % 2]


# --- pattern instances ----------------------------------------------------------------------------------
class PatternVerbalizer:
    """The complex question of a grounded pattern instance, by templates over one store's labels (seeded:
    the opening of set questions is drawn from ``rng``; ``v`` picks a paraphrase)."""

    def __init__(self, kg: KGStore, *, seed: int = 0) -> None:
        self.kg = kg
        self.rng = random.Random(seed)
        self._phrases: dict[str, RelationPhrase] = {}

    def phrase(self, relation: str) -> RelationPhrase:
        if relation not in self._phrases:
            self._phrases[relation] = RelationPhrase.of(self.kg.label(relation))
        return self._phrases[relation]

    def name(self, entity: str) -> str:
        return self.kg.label(entity)

    def _np(self, nodes: tuple[PatternNode, ...], i: int) -> str:
        """A noun phrase for the answers of projection node ``i`` (nested projections described inside)."""
        node = nodes[i]
        if isinstance(node, Projection):
            src = self.name(node.source) if isinstance(node.source, str) else self._np(nodes, node.source)
            return describe(self.phrase(node.relation), src, node.inverse)
        if isinstance(node, SetOp):
            joiner = " and " if node.op is SetOperation.AND else " or "
            return "the entities " + joiner.join(self._clause(nodes, k) for k in node.inputs)
        return "them"

    def _clause(self, nodes: tuple[PatternNode, ...], i: int) -> str:
        node = nodes[i]
        assert isinstance(node, Projection)
        src = self.name(node.source) if isinstance(node.source, str) else self._np(nodes, node.source)
        return clause(self.phrase(node.relation), src, node.inverse)

    def question(self, inst: patterns.Instance, v: int = 0) -> str:
        nodes = inst.nodes
        lead = ["What are the entities", "Which entities are the ones", "Name the entities"][
            self.rng.randrange(3)
        ]
        match inst.pattern:
            case PatternType.P1 | PatternType.P2 | PatternType.P3 | PatternType.IP:
                last = nodes[-1]
                assert isinstance(last, Projection)
                src = self.name(last.source) if isinstance(last.source, str) else self._np(nodes, last.source)
                return ask(self.phrase(last.relation), src, last.inverse, v)
            case PatternType.I2 | PatternType.I3 | PatternType.PI | PatternType.U2:
                setop = nodes[-1]
                assert isinstance(setop, SetOp)
                parts = [self._clause(nodes, k) for k in setop.inputs]
                joiner = " and " if setop.op is SetOperation.AND else " or "
                body = ", ".join(parts[:-1]) + joiner + parts[-1] if len(parts) > 2 else joiner.join(parts)
                return f"{lead} {body}?"
            case PatternType.COMPARE:
                return self._ask_compare(nodes, v)
            case PatternType.TIME:
                w = nodes[0]
                assert isinstance(w, WhenQ)
                return ask_when(
                    self.phrase(w.relation), self.name(w.subject), self.name(w.object), w.granularity, v
                )
            case PatternType.IN | PatternType.BETWEEN:
                proj, tf = nodes[0], nodes[-1]
                assert isinstance(proj, Projection) and isinstance(tf, TimeFilter)
                assert isinstance(tf.time, TimePoint)
                when = f"in {date_text(tf.time)}"
                if tf.end is not None:
                    when = f"between {date_text(tf.time)} and {date_text(tf.end)}"
                return self._ask_at(proj, when, v)
            case PatternType.FIRST | PatternType.LAST:
                return self._ask_first_last(nodes, v)
            case PatternType.BEFORE | PatternType.AFTER | PatternType.AFTER_FIRST | PatternType.BEFORE_LAST:
                return self._ask_anchored(inst.pattern, nodes, v)
            case _:
                assert_never(inst.pattern)

    def _ask_compare(self, nodes: tuple[PatternNode, ...], v: int) -> str:
        a, cmp = nodes[0], nodes[-1]
        assert isinstance(a, WhenQ) and isinstance(cmp, Compare)
        r = self.phrase(a.relation)
        words = {CompareMode.EARLIER: ["earlier", "first"], CompareMode.LATER: ["later", "more recently"]}
        adv = words.get(cmp.mode, ["more", "more"])[v % 2]
        c1, c2 = (self.name(c) for c in cmp.candidates)
        if r.verbal:
            return f"Who {r.past} {self.name(a.object)} {adv}, {c1} or {c2}?"
        return f"Who had {self.name(a.object)} as {r.label} {adv}, {c1} or {c2}?"

    def _ask_first_last(self, nodes: tuple[PatternNode, ...], v: int) -> str:
        base, pk = nodes[0], nodes[-1]
        assert isinstance(pk, Pick)
        word = "first" if pk.which is Extreme.FIRST else "last"
        if isinstance(base, WhenQ):
            r = self.phrase(base.relation)
            s, o = self.name(base.subject), self.name(base.object)
            if r.verbal:
                return f"When did {s} {word} {r.base} {o}?"
            return f"When was {o} the {r.label} of {s} for the {word} time?"
        assert isinstance(base, Projection)
        return self._ask_extreme(base, word, "", v)

    def _ask_anchored(self, pattern: PatternType, nodes: tuple[PatternNode, ...], v: int) -> str:
        """Before/after an anchor event (and the first/last of those)."""
        anchor, proj, tf = nodes[0], nodes[1], nodes[2]
        assert isinstance(anchor, WhenQ) and isinstance(proj, Projection) and isinstance(tf, TimeFilter)
        other = anchor.subject if proj.inverse else anchor.object
        rel = "before" if tf.relation is TemporalRelation.BEFORE else "after"
        ref = f"{rel} {self.name(other)}" + (
            " did" if proj.inverse and self.phrase(proj.relation).verbal else ""
        )
        if pattern in (PatternType.BEFORE, PatternType.AFTER):
            return self._ask_at(proj, ref, v)
        word = "first" if pattern is PatternType.AFTER_FIRST else "last"
        return self._ask_extreme(proj, word, ref, v)

    def _ask_at(self, proj: Projection, when: str, v: int) -> str:
        assert isinstance(proj.source, str)
        q = ask(self.phrase(proj.relation), self.name(proj.source), proj.inverse, v)
        return q[:-1] + f" {when}?"

    def _ask_extreme(self, proj: Projection, word: str, ref: str, v: int) -> str:
        assert isinstance(proj.source, str)
        r, src = self.phrase(proj.relation), self.name(proj.source)
        tail = f" {ref}" if ref else ""
        if r.verbal:
            if proj.inverse:
                return [f"Who was the {word} to {r.base} {src}{tail}?", f"Who {word} {r.past} {src}{tail}?"][
                    v % 2
                ]
            return f"Whom did {src} {r.base} {word}{tail}?"
        if proj.inverse:
            return f"Who {word} had {src} as {r.label}{tail}?"
        return f"What was the {word} {r.label} of {src}{tail}?"

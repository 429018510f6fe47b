"""Verbalisation of grounded pattern instances (LPKG §3.2): sub-questions, the complex question and the gold
code-formatted plan.

Offline, by templates over relation labels (:class:`TemplateVerbalizer`): a relation is read as a verb
phrase (ICEWS/CAMEO labels such as "Make a visit", conjugated: "made a visit to") or as a noun phrase
(Wikidata labels such as "member of sports team"); each pattern has a few question templates chosen at
random (seeded) for light paraphrase variety. Sub-question ``k`` of a node fed by an earlier answer holds
the placeholder ``{Ans_j}`` (LPKG §3.3), filled in at execution. The gold plan follows the paper's planning
templates (:func:`gold_plan`); the LLM path (:func:`llm_verbalize`) asks a model to write the questions from
the instance as in the paper (Appendix C.1) and keeps the same plan skeleton.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import assert_never

from ...kg.base import KGStore
from ...query.generate.patterns import (
    Compare,
    Hop,
    Instance,
    Node,
    PatternType,
    Pick,
    SetOp,
    SetOperation,
    TimeFilter,
    WhenQ,
)
from ...query.program.answer_sets import CompareMode
from ...time import Extreme, Granularity, TemporalRelation, TimePoint
from .plan import (
    AnswerStep,
    Call,
    CompareStep,
    FinishStep,
    PickStep,
    Plan,
    Ref,
    SearchStep,
    SetStep,
    Step,
    Text,
    TimeStep,
)

_IRREGULAR = {
    "make": "made", "give": "gave", "bring": "brought", "meet": "met", "fight": "fought",
    "forgive": "forgave",
    "take": "took", "hold": "held", "win": "won", "lead": "led", "send": "sent", "seek": "sought",
    "ban": "banned", "halt": "halted", "expel": "expelled", "veto": "vetoed", "be": "was", "have": "had",
}  # fmt: skip
_VERBS = frozenset(
    [
        "abduct",
        "accede",
        "accuse",
        "acknowledge",
        "allow",
        "apologize",
        "appeal",
        "arrest",
        "assassinate",
        "attack",
        "attempt",
        "ban",
        "bring",
        "carry",
        "coerce",
        "complain",
        "conduct",
        "confiscate",
        "consider",
        "consult",
        "cooperate",
        "criticize",
        "declare",
        "decline",
        "defend",
        "defy",
        "demand",
        "demobilize",
        "demonstrate",
        "denounce",
        "deny",
        "destroy",
        "detonate",
        "discuss",
        "ease",
        "employ",
        "endorse",
        "engage",
        "expel",
        "express",
        "fight",
        "forgive",
        "give",
        "grant",
        "halt",
        "host",
        "impose",
        "increase",
        "investigate",
        "kill",
        "make",
        "mediate",
        "meet",
        "mobilize",
        "obstruct",
        "occupy",
        "praise",
        "protest",
        "provide",
        "rally",
        "receive",
        "reduce",
        "refuse",
        "reject",
        "release",
        "retreat",
        "return",
        "seize",
        "share",
        "sign",
        "threaten",
        "torture",
        "use",
        "veto",
        "violate",
        "yield",
        "hijack",
        "take",
        "detain",
    ]
)
_ADVERBS = frozenset({"physically", "sexually", "violently", "formally"})
_WITH = (
    "cooperat",
    "negotiat",
    "meet",
    "mediat",
    "agreement",
    "relation",
    "talk",
    "dispute",
    "settle",
    "discuss",
)
_AGAINST = ("force", "fight", "attack", "violence", "assault", "kill", "bomb", "protest", "coerce", "torture")


def past(verb: str) -> str:
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("e"):
        return v + "d"
    if len(v) > 2 and v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ied"
    return v + "ed"


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
        if words[lead].lower().strip(",") not in _VERBS:
            return cls(text.lower() if text[:1].isupper() and not text[1:2].isupper() else text, False)
        base_words = [w.lower() if i <= lead else w for i, w in enumerate(words)]
        past_words = list(base_words)
        past_words[lead] = past(base_words[lead].strip(",")) + ("," if base_words[lead].endswith(",") else "")
        for i in range(lead + 1, len(past_words)):  # "criticize or denounce" → "criticized or denounced"
            prev = past_words[i - 1]
            if (prev == "or" or prev.endswith(",")) and past_words[i].strip(",") in _VERBS:
                w = past_words[i]
                past_words[i] = past(w.strip(",")) + ("," if w.endswith(",") else "")
        prep = _preposition(" ".join(base_words))
        base = " ".join(base_words) + (f" {prep}" if prep else "")
        return cls(text, True, base, " ".join(past_words) + (f" {prep}" if prep else ""))


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


def time_text(t: TimePoint) -> str:
    """``2012`` / ``May 2012`` / ``3 May 2012``."""
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
              "October", "November", "December"]  # fmt: skip
    if t.month is None:
        return str(t.year)
    if t.day is None:
        return f"{months[t.month - 1]} {t.year}"
    return f"{t.day} {months[t.month - 1]} {t.year}"


# --- sub-questions and descriptions ---------------------------------------------------------------------
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


@dataclass(frozen=True)
class Verbalized:
    """A verbalised instance: the complex question, its sub-questions (one per search node, in order) and
    the gold plan."""

    question: str
    sub_questions: tuple[str, ...]
    plan: Plan


class TemplateVerbalizer:
    """Template verbalisation over one store's labels, seeded."""

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

    def __call__(self, inst: Instance) -> Verbalized:
        v = self.rng.randrange(2)
        subs = self.sub_questions(inst, v)
        question = self.question(inst, v)
        return Verbalized(question, tuple(subs), gold_plan(inst, subs))

    def sub_questions(self, inst: Instance, v: int = 0) -> list[str]:
        names = plan_names(inst.nodes)
        out = []
        for node in inst.nodes:
            if isinstance(node, Hop):
                src = (
                    self.name(node.source) if isinstance(node.source, str) else "{" + names[node.source] + "}"
                )
                out.append(ask(self.phrase(node.relation), src, node.inverse, v))
            elif isinstance(node, WhenQ):
                r = self.phrase(node.relation)
                out.append(ask_when(r, self.name(node.subject), self.name(node.object), node.granularity, v))
        return out

    def _np(self, nodes: tuple[Node, ...], i: int) -> str:
        """A noun phrase for the answers of projection node ``i`` (nested projections described inside)."""
        node = nodes[i]
        if isinstance(node, Hop):
            src = self.name(node.source) if isinstance(node.source, str) else self._np(nodes, node.source)
            return describe(self.phrase(node.relation), src, node.inverse)
        if isinstance(node, SetOp):
            joiner = " and " if node.op is SetOperation.AND else " or "
            return "the entities " + joiner.join(self._clause(nodes, k) for k in node.inputs)
        return "them"

    def _clause(self, nodes: tuple[Node, ...], i: int) -> str:
        node = nodes[i]
        assert isinstance(node, Hop)
        src = self.name(node.source) if isinstance(node.source, str) else self._np(nodes, node.source)
        return clause(self.phrase(node.relation), src, node.inverse)

    def question(self, inst: Instance, v: int = 0) -> str:
        nodes = inst.nodes
        lead = ["What are the entities", "Which entities are the ones", "Name the entities"][
            self.rng.randrange(3)
        ]
        match inst.pattern:
            case PatternType.P1 | PatternType.P2 | PatternType.P3 | PatternType.IP:
                last = nodes[-1]
                assert isinstance(last, Hop)
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
                a, cmp = nodes[0], nodes[-1]
                assert isinstance(a, WhenQ) and isinstance(cmp, Compare)
                r = self.phrase(a.relation)
                words = {
                    CompareMode.EARLIER: ["earlier", "first"],
                    CompareMode.LATER: ["later", "more recently"],
                }
                adv = words.get(cmp.mode, ["more", "more"])[v % 2]
                c1, c2 = (self.name(c) for c in cmp.candidates)
                if r.verbal:
                    return f"Who {r.past} {self.name(a.object)} {adv}, {c1} or {c2}?"
                return f"Who had {self.name(a.object)} as {r.label} {adv}, {c1} or {c2}?"
            case PatternType.TIME:
                w = nodes[0]
                assert isinstance(w, WhenQ)
                return ask_when(
                    self.phrase(w.relation), self.name(w.subject), self.name(w.object), w.granularity, v
                )
            case PatternType.IN | PatternType.BETWEEN:
                hop, tf = nodes[0], nodes[-1]
                assert isinstance(hop, Hop) and isinstance(tf, TimeFilter) and isinstance(tf.time, TimePoint)
                when = f"in {time_text(tf.time)}"
                if tf.end is not None:
                    when = f"between {time_text(tf.time)} and {time_text(tf.end)}"
                return self._ask_at(hop, when, v)
            case PatternType.FIRST | PatternType.LAST:
                base, pk = nodes[0], nodes[-1]
                assert isinstance(pk, Pick)
                word = "first" if pk.which is Extreme.FIRST else "last"
                if isinstance(base, WhenQ):
                    r = self.phrase(base.relation)
                    s, o = self.name(base.subject), self.name(base.object)
                    if r.verbal:
                        return f"When did {s} {word} {r.base} {o}?"
                    return f"When was {o} the {r.label} of {s} for the {word} time?"
                assert isinstance(base, Hop)
                return self._ask_extreme(base, word, "", v)
            case PatternType.BEFORE | PatternType.AFTER | PatternType.AFTER_FIRST | PatternType.BEFORE_LAST:
                anchor, hop, tf = nodes[0], nodes[1], nodes[2]
                assert isinstance(anchor, WhenQ) and isinstance(hop, Hop) and isinstance(tf, TimeFilter)
                other = anchor.subject if hop.inverse else anchor.object
                rel = "before" if tf.relation is TemporalRelation.BEFORE else "after"
                ref = f"{rel} {self.name(other)}" + (
                    " did" if hop.inverse and self.phrase(hop.relation).verbal else ""
                )
                if inst.pattern in (PatternType.BEFORE, PatternType.AFTER):
                    return self._ask_at(hop, ref, v)
                word = "first" if inst.pattern is PatternType.AFTER_FIRST else "last"
                return self._ask_extreme(hop, word, ref, v)
            case _:
                assert_never(inst.pattern)

    def _ask_at(self, hop: Hop, when: str, v: int) -> str:
        assert isinstance(hop.source, str)
        q = ask(self.phrase(hop.relation), self.name(hop.source), hop.inverse, v)
        return q[:-1] + f" {when}?"

    def _ask_extreme(self, hop: Hop, word: str, ref: str, v: int) -> str:
        assert isinstance(hop.source, str)
        r, src = self.phrase(hop.relation), self.name(hop.source)
        tail = f" {ref}" if ref else ""
        if r.verbal:
            if hop.inverse:
                return [f"Who was the {word} to {r.base} {src}{tail}?", f"Who {word} {r.past} {src}{tail}?"][
                    v % 2
                ]
            return f"Whom did {src} {r.base} {word}{tail}?"
        if hop.inverse:
            return f"Who {word} had {src} as {r.label}{tail}?"
        return f"What was the {word} {r.label} of {src}{tail}?"


# --- gold plans ------------------------------------------------------------------------------------------
def plan_names(nodes: tuple[Node, ...]) -> list[str]:
    """The plan variable of each node: ``Ans_k`` for the k-th sub-question (and for a comparison, as in the
    paper), ``Inter_Results``/``Union_Results``/``Temp_Results`` numbered per kind."""
    names: list[str] = []
    counts = {"ans": 0, "inter": 0, "union": 0, "temp": 0}
    for node in nodes:
        match node:
            case Hop() | WhenQ() | Compare():
                counts["ans"] += 1
                names.append(f"Ans_{counts['ans']}")
            case SetOp():
                key = "inter" if node.op is SetOperation.AND else "union"
                counts[key] += 1
                names.append(f"{'Inter' if key == 'inter' else 'Union'}_Results{counts[key]}")
            case TimeFilter() | Pick():
                counts["temp"] += 1
                names.append(f"Temp_Results{counts['temp']}")
            case _:
                assert_never(node)
    return names


def gold_plan(inst: Instance, sub_questions: list[str] | tuple[str, ...]) -> Plan:
    """The plan of ``inst`` in the paper's planning templates, with ``sub_questions`` (one per search node,
    placeholders ``{Ans_j}`` for fed answers) filled in."""
    names = plan_names(inst.nodes)
    steps: list[Step] = []
    subs = iter(sub_questions)
    qvar: dict[int, str] = {}
    for i, node in enumerate(inst.nodes):
        var = names[i]
        match node:
            case Hop() | WhenQ():
                k = var.split("_")[1]
                text = next(subs)
                earlier = set(names[:i])
                refs = tuple(dict.fromkeys(r for r in re.findall(r"\{(\w+)\}", text) if r in earlier))
                qvar[i] = f"Sub_Question_{k}"
                steps += [
                    Text(qvar[i], text, refs, fstring=bool(refs)),
                    SearchStep(f"Info_{k}", qvar[i]),
                    AnswerStep(var, qvar[i], f"Info_{k}"),
                ]
            case SetOp():
                steps.append(SetStep(var, node.op, tuple(names[k] for k in node.inputs)))
            case Compare():
                steps.append(
                    CompareStep(
                        var, tuple(qvar[k] for k in node.inputs), tuple(names[k] for k in node.inputs)
                    )
                )
            case TimeFilter():
                time: Ref | TimePoint = Ref(names[node.time]) if isinstance(node.time, int) else node.time
                if node.end is not None:
                    op = Call.BETWEEN
                elif node.relation is TemporalRelation.BEFORE:
                    op = Call.BEFORE
                elif node.relation is TemporalRelation.AFTER:
                    op = Call.AFTER
                else:
                    op = Call.DURING
                steps.append(TimeStep(var, op, names[node.input], time, node.end))
            case Pick():
                steps.append(PickStep(var, node.which, names[node.input]))
            case _:
                assert_never(node)
    steps.append(FinishStep("Final_Answer", names[-1]))
    return Plan(tuple(steps))

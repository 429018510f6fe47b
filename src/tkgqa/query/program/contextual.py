"""Questions over a small per-question KG (retrieved facts with Wikidata-style relation labels).

The KG is tiny (a dozen facts), so instead of a fixed relation vocabulary the parser scores every *fact
pattern* ``(anchor entity, relation, direction)`` it holds: how well the anchor is mentioned, how well the
relation label (and, for time questions, the other side's label: "significant event — date of birth")
matches the question's words, whether the other side is mentioned too (wanted for time questions, unwanted
for entity questions) and whether the facts meet the question's explicit time. The best pattern becomes a
``match`` node; explicit times, ordinals ("first", "second", "last", "current") and implicit references
("before Auburn", "during World War II", "when he won the Heisman Trophy") become filters and selections.
Templated questions that name relations word for word ("what is R of X that is R2 is Y") take the first
named relation as the asked one and the fact ``(X, R2, Y)`` as the time qualifier; time questions over
undated facts linking to events named with a year ("1983 World Series") answer with those events; see
:mod:`.contextual_rules` for the surface rules.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ...kg.fact import Fact
from ...time import Extreme, TemporalRelation, TimePoint, holds
from ..text.frame import AFTER_WORDS, AUX, BEFORE_WORDS, Ordinal, Target, find_ordinal, find_target
from ..text.mentions import EntityMention, MentionIndex
from ..text.timeref import TimeMention, find_times
from ..text.words import STOPWORDS, Token, concepts_of, stem, tokenize, words
from .contextual_rules import alias_mentions, exact_spans, phrase_positions, refine_target, year_in_name
from .nodes import (
    Const,
    Entities,
    Exclude,
    Fallback,
    Filter,
    Match,
    Program,
    ReferenceTime,
    Rows,
    Select,
    TimeOf,
    Times,
)
from .parser import Parse

_WH_CONCEPTS = {
    "where": ("place", "location", "locate", "country", "headquarters", "residence", "venue"),
    "who": (),
    "when": (),
}
_NOW_WORDS = frozenset({"current", "currently", "now", "present", "today", "nowadays"})
_DURING_WORDS = frozenset({"during", "while", "when", "within", "throughout", "amid"})
_IGNORE = STOPWORDS | frozenset({"name", "named", "called", "tell", "me", "list", "give"})


@dataclass(frozen=True)
class _Pattern:
    anchor: str
    relation: str
    anchor_is_subject: bool
    score: float
    best_rank: int
    facts: list[Fact]


class ContextParser:
    """Parses a question against a small context KG (see module doc)."""

    def __init__(self, index: MentionIndex) -> None:
        self.index = index
        self.kg = index.kg
        self._facts = list(self.kg.facts())
        self._rank = {f: k for k, f in enumerate(self._facts)}

    def set_order(self, ordered: list[Fact]) -> None:
        """Retrieval order of the facts (earlier = more relevant), used to break ties."""
        self._rank = {f: k for k, f in enumerate(ordered)}

    def parse(self, text: str, given_entities: list[str] | None = None) -> Parse:
        tokens = tokenize(text)
        times = find_times(text, tokens)
        time_tokens = {k for t in times for k in range(t.start, t.end)}
        mentions = self._mentions(tokens, set(), given_entities)
        for name, m in alias_mentions(tokens, self.kg.entities).items():
            if name not in mentions and not any(m.overlaps(o) for o in mentions.values()):
                mentions[name] = m
        mentions = exact_spans(tokens, mentions)
        target = refine_target(tokens, find_target(tokens))
        info: dict[str, object] = {
            "entities": sorted(mentions, key=lambda e: -mentions[e].score)[:5],
            "times": [f"{t.relation or 'at'} {t.point.iso()}" for t in times],
            "target": target.kind,
        }
        if not mentions:
            return Parse(None, "no entity of the context is mentioned in the question", info)
        covered = set(time_tokens)
        for m in mentions.values():
            covered.update(range(m.start, m.end))
        ordinal = find_ordinal(tokens, covered)
        qwords = [t.text for k, t in enumerate(tokens) if k not in covered and t.text not in _IGNORE]
        wh = tokens[target.wh_position].text if target.wh_position >= 0 else ""
        qconcepts = _concepts(qwords) | set(_WH_CONCEPTS.get(wh, ()))
        head = _concepts(_wh_head(tokens, target.wh_position, covered))
        explicit = list(times)
        verbatim = self._verbatim_relations(tokens)
        patterns = self._patterns(
            mentions,
            qconcepts,
            head,
            target,
            explicit,
            _succession_cues(tokens, mentions),
            _partners(tokens, mentions),
            verbatim,
        )
        if not patterns:
            return Parse(None, "no fact of the context connects to the question's entities", info)
        best = max(patterns, key=lambda p: (p.score, -p.best_rank))
        info.update(
            relation=best.relation,
            anchor=best.anchor,
            ordinal=f"{ordinal.which}:{ordinal.n}" if ordinal else None,
        )
        program = self._program(tokens, best, mentions, target, explicit, ordinal, verbatim)
        return Parse(program, "", info)

    # --- mentions ---------------------------------------------------------------------------------
    def _mentions(
        self, tokens: list[Token], blocked: set[int], given: list[str] | None
    ) -> dict[str, EntityMention]:
        found: dict[str, EntityMention] = {}
        candidates = self.index.find(tokens, blocked) or self.index.find(tokens, blocked, min_coverage=0.3)
        for m in candidates:
            if m.entity not in found or m.score > found[m.entity].score:
                found[m.entity] = m
        for name in given or ():
            for ent in self.index.labels.get(" ".join(words(name)), [name]):
                if not self.kg.has_entity(ent):
                    continue
                seen = found.get(ent)
                if seen is not None:  # annotated and seen in the text: keep its span, trust it fully
                    found[ent] = EntityMention(
                        seen.start, seen.end, ent, max(seen.score, 3.0), seen.kind, 1.0
                    )
                else:
                    found[ent] = EntityMention(0, 0, ent, 3.0, "given")
        return found

    def _verbatim_relations(self, tokens: list[Token]) -> dict[str, int]:
        """Relation labels (of two or more words) the question names word for word → first position."""
        out: dict[str, int] = {}
        for relation in self.kg.relations:
            found = phrase_positions(tokens, relation)
            if found:
                out[relation] = found[0]
        return out

    # --- pattern scoring ----------------------------------------------------------------------------
    def _patterns(
        self,
        mentions: dict[str, EntityMention],
        qconcepts: set[str],
        head: set[str],
        target: Target,
        explicit: list[TimeMention],
        succession: dict[str, str],
        partners: set[str],
        verbatim: dict[str, int],
    ) -> list[_Pattern]:
        groups: dict[tuple[str, str, bool], list[Fact]] = defaultdict(list)
        for f in self._facts:
            for anchor, is_subj in ((f.subject, True), (f.object, False)):
                if anchor in mentions:
                    groups[(anchor, f.relation, is_subj)].append(f)
        out: list[_Pattern] = []
        rel_cache: dict[str, float] = {}
        for (anchor, relation, is_subj), facts in groups.items():
            if relation not in rel_cache:
                rel_cache[relation] = _overlap(qconcepts, words(relation))
            am = mentions[anchor]
            rel_score = rel_cache[relation]
            rel_words = [w for w in words(relation) if w not in STOPWORDS]
            if head and rel_words and head & _concepts(rel_words[-1:]):
                rel_score += 1.0
            elif head and head & _concepts(rel_words):
                rel_score += 0.5
            if relation in verbatim:  # named word for word: the first named is the asked relation
                rel_score += 2.5 if verbatim[relation] == min(verbatim.values()) else 0.0
            wanted = succession.get(anchor)
            if wanted is not None:
                side = _succession_side(rel_words, is_subj)
                if side is not None:
                    rel_score += 2.0 if side == wanted else -1.0
            best_fact = -1e9
            for f in facts:
                other = f.object if is_subj else f.subject
                om = mentions.get(other)
                second = om is not None and not om.overlaps(am) and om.start < om.end
                s = 0.0
                if target.kind == "time":
                    if f.start is None and f.end is None:
                        s -= 1.0 if year_in_name(other) else 3.0
                    if second and om is not None:
                        s += 1.5 * om.score
                    else:
                        s += 0.8 * _overlap(qconcepts, words(other))
                else:
                    if second and om is not None and om.coverage > 0.99:
                        s -= 1.0 * om.score
                    if head and head & _concepts(words(other)):
                        s += 0.5
                if explicit:
                    s += 1.0 if all(_meets(f, t) for t in explicit) else -0.5
                best_fact = max(best_fact, s)
            score = 1.5 * am.score + rel_score + best_fact
            if anchor in partners and len(mentions) > 1:
                score -= 1.5  # "… with X": X shares the answer's role, it is not what the answer relates to
            rank = min(self._rank.get(f, 99) for f in facts)
            out.append(_Pattern(anchor, relation, is_subj, score - 0.15 * rank, rank, facts))
        return out

    # --- program ------------------------------------------------------------------------------------
    def _program(
        self,
        tokens: list[Token],
        best: _Pattern,
        mentions: dict[str, EntityMention],
        target: Target,
        explicit: list[TimeMention],
        ordinal: Ordinal | None,
        verbatim: dict[str, int],
    ) -> Program:
        subj = best.anchor if best.anchor_is_subject else None
        obj = None if best.anchor_is_subject else best.anchor
        if target.kind == "time":
            named = _year_named(best, tokens, ordinal)
            if named is not None:
                return named
            others = {f.object if best.anchor_is_subject else f.subject for f in best.facts}
            am = mentions[best.anchor]
            second = [e for e in others if e in mentions and not mentions[e].overlaps(am)]
            if second:
                pair = max(second, key=lambda e: mentions[e].score)
                subj, obj = (best.anchor, pair) if best.anchor_is_subject else (pair, best.anchor)
        rows: Rows = Match(subj, best.relation, obj)
        for t in explicit:
            within = Fallback(Filter(rows, t.relation or TemporalRelation.IN, Const(t.point)), rows)
            if t.relation in {None, "in"} and target.kind == "entity" and ordinal is None:
                began = Filter(rows, TemporalRelation.STARTS, Const(t.point))  # began then: most specific
                within = Fallback(began, within)
            rows = within
            if ordinal is None and t.relation in {"before", "after"} and target.kind == "entity":
                ordinal = Ordinal(Extreme.LAST if t.relation == "before" else Extreme.FIRST, 1, -1)
        ref = self._qualifier(best, mentions, verbatim) if target.kind == "entity" else None
        ref = ref or self._implicit_reference(tokens, best, mentions, target.wh_position)
        ref_entity = None
        if ref is not None:
            op, ref_rows, ref_entity = ref
            which = ReferenceTime.SPAN if op == "in" else ReferenceTime.FIRST
            rows = Fallback(Filter(rows, op, TimeOf(ref_rows, which)), rows)
            if ordinal is None and op in {"before", "after"} and target.kind == "entity":
                ordinal = Ordinal(Extreme.LAST if op == "before" else Extreme.FIRST, 1, -1)
        if ordinal is not None:
            rows = Fallback(Select(rows, ordinal.which, ordinal.n), rows)
        elif any(t.text in _NOW_WORDS for t in tokens):
            rows = Fallback(Select(rows, Extreme.LAST), rows)
        if target.kind == "time":
            return Times(rows, target.granularity, target.use_end)
        am = mentions[best.anchor]
        drop = tuple(
            e
            for e, m in mentions.items()
            if e != best.anchor
            and (m.kind != "given" or e == ref_entity)
            and m.coverage > 0.99
            and not m.overlaps(am)
        )
        return Entities(Exclude(rows, drop) if drop else rows)

    def _qualifier(
        self, best: _Pattern, mentions: dict[str, EntityMention], verbatim: dict[str, int]
    ) -> tuple[TemporalRelation, Rows, str | None] | None:
        """Templated qualifier "what is R of E that is R2 is V" / "… has R2 as V": another relation R2 the
        question names word for word links the anchor E to a mentioned V; the answer facts share the time
        of that fact."""
        am = mentions[best.anchor]
        for relation in sorted(verbatim, key=lambda r: verbatim[r]):
            if relation == best.relation:
                continue
            for f in self._facts:
                if f.relation != relation or best.anchor not in (f.subject, f.object):
                    continue
                other = f.object if f.subject == best.anchor else f.subject
                om = mentions.get(other)
                if om is None or om.overlaps(am) or other == best.anchor:
                    continue
                return TemporalRelation.IN, Match(f.subject, relation, f.object), other
        return None

    def _implicit_reference(
        self, tokens: list[Token], best: _Pattern, mentions: dict[str, EntityMention], wh_position: int
    ) -> tuple[TemporalRelation, Rows, str | None] | None:
        """A second mentioned entity X that dates the answer: "before X" / "after X" / "during X" / "when …
        X" (the time of a fact linking the anchor and X, or of any fact of X), or X filling the answer slot
        of the same relation ("Who played for T with X?": the time X was in that relation with the anchor).
        Returns the operator, the reference rows and X when it is to be excluded from the answers."""
        am = mentions[best.anchor]
        found: tuple[TemporalRelation, Rows, str | None] | None = None
        for name, m in sorted(mentions.items(), key=lambda kv: -kv[1].score):
            if name == best.anchor or m.start >= m.end or m.overlaps(am):
                continue
            op: TemporalRelation | None = None
            for k in range(max(0, m.start - 4), m.start):
                w = tokens[k].text
                if k == wh_position:
                    continue
                if w in BEFORE_WORDS:
                    op = TemporalRelation.BEFORE
                elif w in AFTER_WORDS:
                    op = TemporalRelation.AFTER
                elif w in _DURING_WORDS:
                    op = TemporalRelation.IN
            same_slot = any(
                (f.subject if best.anchor_is_subject else f.object) == best.anchor
                and (f.object if best.anchor_is_subject else f.subject) == name
                for f in best.facts
            )
            if same_slot and m.coverage > 0.99:
                subj, obj = (best.anchor, name) if best.anchor_is_subject else (name, best.anchor)
                ref_rows: Rows = Match(subj, best.relation, obj)
                return (op or TemporalRelation.IN), ref_rows, name
            if op is not None and found is None:
                linked = Match(best.anchor, None, name, both_directions=True)
                found = (op, Fallback(linked, Match(name, None, None, both_directions=True)), None)
        return found


def _year_named(best: _Pattern, tokens: list[Token], ordinal: Ordinal | None) -> Program | None:
    """A time question whose facts carry no time but link the anchor to events named with a year ("1983
    World Series"): the events are the answer (an ordinal or "most recent" picks by that year)."""
    if any(f.start is not None or f.end is not None for f in best.facts):
        return None
    years: dict[str, int] = {}
    for f in best.facts:
        other = f.object if best.anchor_is_subject else f.subject
        year = year_in_name(other)
        if year is not None:
            years[other] = int(year)
    if not years:
        return None
    asked = {t.text for t in tokens}
    named = {e: y for e, y in years.items() if set(words(e)) - {str(y)} <= asked}
    years = named or years  # "… win the world series": the events of that name
    keep = set(years)
    which = ordinal.which if ordinal is not None else None
    if which is None and any(t.text in _NOW_WORDS or t.text in {"recent", "recently"} for t in tokens):
        which = Extreme.LAST
    if which is not None:
        ordered = sorted(set(years.values()), reverse=which == "last")
        n = ordinal.n if ordinal is not None else 1
        if n <= len(ordered):
            keep = {e for e, y in years.items() if y == ordered[n - 1]}
    subj = best.anchor if best.anchor_is_subject else None
    obj = None if best.anchor_is_subject else best.anchor
    drop = tuple(sorted({f.object if best.anchor_is_subject else f.subject for f in best.facts} - keep))
    rows: Rows = Match(subj, best.relation, obj)
    return Entities(Exclude(rows, drop) if drop else rows)


_BEFORE_CUES = frozenset({"before", "preceded", "preceding", "previous", "predecessor", "prior"})
_AFTER_CUES = frozenset({"after", "succeeded", "succeeding", "next", "successor"})


def _succession_cues(tokens: list[Token], mentions: dict[str, EntityMention]) -> dict[str, str]:
    """Entities right after "before"/"after"/"succeeded" …: the question asks for their predecessor or
    successor."""
    out: dict[str, str] = {}
    for name, m in mentions.items():
        for k in range(max(0, m.start - 2), m.start):
            w = tokens[k].text
            if k > 0 and tokens[k - 1].text in {"comes", "come", "came"}:
                continue
            if w in _BEFORE_CUES:
                out[name] = "before"
            elif w in _AFTER_CUES:
                out[name] = "after"
    return out


_PARTNER_WORDS = frozenset({"with", "alongside", "beside", "besides"})
_PARTNER_NOUNS = frozenset({"teammate", "teammates", "colleague", "colleagues", "partner", "partners"})


def _partners(tokens: list[Token], mentions: dict[str, EntityMention]) -> set[str]:
    """Entities the answer accompanies: "… with X", "X's teammates"."""
    out = set()
    for name, m in mentions.items():
        before = tokens[m.start - 1].text if m.start > 0 else ""
        after = [t.text for t in tokens[m.end : m.end + 2]]
        if before in _PARTNER_WORDS or any(w in _PARTNER_NOUNS for w in after):
            out.add(name)
    return out


def _succession_side(rel_words: list[str], anchor_is_subject: bool) -> str | None:
    """For succession relations ("replaces", "replaced by", "follows", "followed by"): whether the other
    side comes ``before`` or ``after`` the anchor."""
    stems = [stem(w) for w in rel_words]
    passive = "by" in rel_words
    if any(s_ in {"replac", "follow", "succe", "success"} for s_ in stems):
        other_after = passive  # "X replaced by Y": Y comes after X; "X replaces Y": Y came before
    elif any(s_.startswith("predecess") for s_ in stems):
        other_after = False
    else:
        return None
    if not anchor_is_subject:
        other_after = not other_after
    return "after" if other_after else "before"


def _wh_head(tokens: list[Token], wh: int, covered: set[int]) -> list[str]:
    """The noun(s) right after "what"/"which" ("what team", "which award"): the answer's type."""
    if wh < 0 or tokens[wh].text not in {"what", "which"}:
        return []
    out = []
    for k in range(wh + 1, min(len(tokens), wh + 3)):
        w = tokens[k].text
        if k in covered or w in AUX or w in STOPWORDS:
            break
        out.append(w)
    return out


def _word_keys(w: str) -> set[str]:
    return {*concepts_of(w), "~" + stem(w)}


def _concepts(ws: list[str]) -> set[str]:
    out: set[str] = set()
    for w in ws:
        out.update(_word_keys(w))
    return out


def _overlap(qconcepts: set[str], label_words: list[str]) -> float:
    """Label words the question covers (concepts or stems), minus a little for the others."""
    content = [w for w in label_words if w not in STOPWORDS]
    if not content:
        return 0.0
    hits = sum(1 for w in content if qconcepts.intersection(_word_keys(w)))
    return hits - 0.25 * (len(content) - hits)


def _meets(f: Fact, t: TimeMention) -> bool:
    """The fact stands in the mention's relation to its time (a bare time: ``in``)."""
    return holds(t.relation or TemporalRelation.IN, f.start, f.end, t.point)


__all__ = ["ContextParser", "TimePoint"]

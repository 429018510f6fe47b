"""Question → typed program, for KGs with a relation vocabulary (ICEWS-style event KGs).

Steps: time mentions, entity mentions, the asked target (entity / time at a granularity), ordinals,
temporal references ("after <entity>", "on the same day as <entity>"), the relation (lexicon over the words
no mention explains), and the roles: which side of the relation the answer takes. Roles follow English
syntax — a wh-word directly before the verb asks for the subject ("Who visited Iraq?"), an auxiliary
followed by an entity makes that entity the subject ("Which country did China threaten?"), "by <entity>"
marks the agent of a passive, "receive … from <entity>" the giver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import ParseError
from ...time import MONTHS, Extreme, Granularity, TemporalRelation
from ..text.frame import (
    ANSWER_NOUNS,
    AUX,
    FIRST_WORDS,
    LAST_WORDS,
    NTH_WORDS,
    RECEIVE_WORDS,
    Target,
    TemporalReference,
    find_ordinal,
    find_references,
    find_target,
)
from ..text.lexicon import RelationLexicon
from ..text.mentions import EntityMention, MentionIndex
from ..text.timeref import TimeMention, find_times
from ..text.words import STOPWORDS, VOCAB, Token, concepts_of, lemma, tokenize
from .nodes import (
    AnswerOrder,
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


@dataclass(frozen=True)
class Parse:
    """A parsed question: the program, or why there is none, plus what the parser saw."""

    program: Program | None
    reason: str = ""
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ParserOptions:
    after_reference: Extreme = Extreme.FIRST  # which occurrence of a reference event an "after" question uses
    before_reference: Extreme = Extreme.FIRST
    set_order: AnswerOrder = AnswerOrder.COUNT  # ranking of un-ordered entity answers
    exclude_question_entities: bool = True
    relation_candidates: int = 2
    relax: bool = True  # no fact of the asked relation: its reverse reading, then the second-best relation
    any_relation: bool = False  # ... and last, any relation between the same entities (a guess)


_NOT_RELATION = STOPWORDS | set(FIRST_WORDS) | set(LAST_WORDS) | set(NTH_WORDS) | {
    "suffer", "time", "exact", "specific", "formally", "officially", "publicly", "could", "tell", "know",
    "name", "which", "what", "also", "ever", "again", "once", "then",
}  # fmt: skip


class QuestionParser:
    """Parses questions against one KG (its mention index and relation lexicon)."""

    def __init__(
        self, index: MentionIndex, lexicon: RelationLexicon, options: ParserOptions | None = None
    ) -> None:
        self.index = index
        self.lexicon = lexicon
        self.options = options or ParserOptions()

    def parse(self, text: str, given_entities: list[str] | None = None) -> Parse:
        tokens = tokenize(text)
        times = find_times(text, tokens)
        time_tokens = {k for t in times for k in range(t.start, t.end)}
        all_mentions = self.index.find(tokens, time_tokens)
        mentions = _dedupe(all_mentions)
        info: dict[str, Any] = {
            "entities": [m.entity for m in mentions],
            "times": [f"{t.relation or 'at'} {t.point.iso()}" for t in times],
        }
        if not mentions:
            return Parse(None, "no entity of the KG is mentioned in the question", info)
        target = find_target(tokens)
        covered = time_tokens | {k for m in all_mentions for k in range(m.start, m.end)}
        unlinked = _unlinked_names(tokens, covered, self.index.common)
        if unlinked:
            info["unlinked"] = unlinked
            return Parse(None, f"cannot link the name {unlinked!r} to a KG entity", info)
        ordinal = find_ordinal(tokens, covered)
        mains, ref = find_references(tokens, mentions)
        rel_words = [
            tokens[k].text
            for k in range(len(tokens))
            if k not in covered and tokens[k].text not in _NOT_RELATION and not tokens[k].text.isdigit()
        ]
        ranked = self.lexicon.rank(rel_words, limit=self.options.relation_candidates)
        info.update(
            target=target.kind,
            granularity=target.granularity.name.lower() if target.granularity else None,
            ordinal=f"{ordinal.which}:{ordinal.n}" if ordinal else None,
            reference=f"{ref.op} {ref.mention.entity}" if ref else None,
            relation_words=rel_words,
            relations=[r for r, _ in ranked],
        )
        if not mains:
            if ref is None:
                return Parse(None, "no main entity", info)
            mains, ref = [ref.mention], None
        if not ranked:
            named = [m.entity for m in mains] + ([ref.mention.entity] if ref else [])
            linking = self._linking_relation(named)
            if linking is None:
                return Parse(None, "no KG relation matches the question's words", info)
            ranked = [(linking, 0.0)]
            info["relations"] = [linking]
        relation = ranked[0][0]
        second = ranked[1][0] if len(ranked) > 1 else None
        try:
            program = self._build(tokens, target, mains, ref, times, ordinal, relation, second)
        except ParseError as exc:
            return Parse(None, str(exc), info)
        return Parse(program, "", info)

    def _linking_relation(self, entities: list[str]) -> str | None:
        """With no relation word ("Who was Vice President before Mike Pence?", "When did X leave Y?"): the
        relation most often linking the question's entities, if two of them are linked."""
        counts: dict[str, int] = {}
        for a in entities:
            for b in entities:
                if a != b:
                    for f in self.index.kg.facts(subject=a, object=b):
                        counts[f.relation] = counts.get(f.relation, 0) + 1
        return max(counts, key=lambda r: counts[r]) if counts else None

    # --- program construction ---------------------------------------------------------------------
    def _build(
        self,
        tokens: list[Token],
        target: Target,
        mains: list[EntityMention],
        ref: TemporalReference | None,
        times: list[TimeMention],
        ordinal: Any,
        relation: str,
        second: str | None = None,
    ) -> Program:
        variants = self._variants(relation, second)
        host_like = "host" in {c for w in relation.lower().split("_") for c in concepts_of(w)}
        if target.kind == "time":
            pipes: list[Rows] = []
            for v in variants:
                if len(mains) >= 2:
                    subj, obj = self._order_pair(tokens, mains[0], mains[1], host_like)
                    rows: Rows = v.match(subj.entity, obj.entity)
                else:
                    m = mains[0]
                    if _answer_is_subject(tokens, target, m, host_like):
                        rows = v.match(None, m.entity)
                    else:
                        rows = v.match(m.entity, None)
                pipes.append(self._time_constraints(rows, times))
            rows = _first_nonempty(pipes)
            if ordinal is not None:
                rows = Select(rows, ordinal.which, ordinal.n)
            return Times(rows, target.granularity, target.use_end)
        main = mains[0]
        answer_subject = _answer_is_subject(tokens, target, main, host_like)
        ref_time: TimeOf | None = None
        if ref is not None:
            ref_rows = _first_nonempty(
                [
                    v.match(ref.mention.entity, main.entity)
                    if answer_subject
                    else v.match(main.entity, ref.mention.entity)
                    for v in variants
                ]
            )
            if ref.op == "in":
                ref_time = TimeOf(ref_rows, ReferenceTime.FIRST, ref.granularity)
            else:
                which = self.options.after_reference if ref.op == "after" else self.options.before_reference
                ref_time = TimeOf(ref_rows, ReferenceTime(which.value))
        drop = tuple(dict.fromkeys([main.entity] + ([ref.mention.entity] if ref else [])))
        pipes = []
        for v in variants:
            rows = v.match(None, main.entity) if answer_subject else v.match(main.entity, None)
            rows = self._time_constraints(rows, times)
            if ref is not None and ref_time is not None:
                rows = Filter(rows, ref.op, ref_time)
            if self.options.exclude_question_entities:
                rows = Exclude(rows, drop)
            pipes.append(rows)
        rows = _first_nonempty(pipes)
        if ordinal is not None:
            rows = Select(rows, ordinal.which, ordinal.n)
            return Entities(rows)
        closest = _closest_order(ref, times)
        return Entities(rows, closest or (AnswerOrder.COUNT if not ref else self.options.set_order))

    def _variants(self, relation: str, second: str | None = None) -> list[_Variant]:
        """The relation as asked (with its converse / symmetric reading); then, when ``relax`` is set, the
        asked relation read the other way round, the lexicon's second-best relation, and any relation
        between the same entities in either direction — an incomplete KG may lack the asked event but record
        others between the same entities at that time."""
        symmetric = self.lexicon.symmetric(relation)
        out = [_Variant(relation, self.lexicon.inverse(relation), symmetric)]
        if self.options.relax:
            if not symmetric:
                out.append(_Variant(relation, None, False, reread=True))
            if second:
                out.append(_Variant(second, self.lexicon.inverse(second), self.lexicon.symmetric(second)))
            if self.options.any_relation:
                out.append(_Variant(None, None, False, reread=True))
        return out

    @staticmethod
    def _time_constraints(rows: Rows, times: list[TimeMention]) -> Rows:
        for t in times:
            rows = Filter(rows, t.relation or TemporalRelation.IN, Const(t.point))
        return rows

    @staticmethod
    def _order_pair(
        tokens: list[Token], a: EntityMention, b: EntityMention, host_like: bool
    ) -> tuple[EntityMention, EntityMention]:
        """Subject and object among two mentions: textual order unless the second is an agent ("by X")
        or a giver ("receive … from X")."""
        before_b = _previous_word(tokens, b.start)
        if before_b == "by":
            return b, a
        if before_b == "from" and not host_like and _has_receive(tokens, a.end, b.start):
            return b, a
        if _suffer_victim(tokens, a, b):
            return b, a
        return a, b


@dataclass(frozen=True, slots=True)
class _Variant:
    """One reading of the question's relation: a KG relation (``None``: any) with its converse and whether the
    KG records it both ways; ``reread``: its facts read in either direction."""

    relation: str | None
    inverse: str | None
    symmetric: bool
    reread: bool = False

    def match(self, subject: str | None, obj: str | None) -> Rows:
        if self.reread or self.relation is None:
            return Match(subject, self.relation, obj, both_directions=self.reread)
        return _match_rows(subject, self.relation, obj, self.inverse, self.symmetric)


def _first_nonempty(pipes: list[Rows]) -> Rows:
    """``pipes[0] ?? pipes[1] ?? …``: the first alternative that finds facts."""
    rows = pipes[-1]
    for alternative in reversed(pipes[:-1]):
        rows = Fallback(alternative, rows)
    return rows


def _match_rows(
    subject: str | None, relation: str, obj: str | None, inverse: str | None, symmetric: bool = False
) -> Rows:
    """The stated direction first; then the converse relation; then, for relations the KG records both
    ways, the facts read the other way round."""
    rows: Rows = Match(subject, relation, obj)
    if inverse is not None:
        rows = Fallback(rows, Match(subject, relation, obj, inverse=inverse))
    if symmetric:
        rows = Fallback(rows, Match(subject, relation, obj, both_directions=True))
    return rows


def _closest_order(ref: TemporalReference | None, times: list[TimeMention]) -> AnswerOrder | None:
    """Answers nearest the reference first: "before X" → latest first, "after X" → earliest first."""
    ops = [ref.op] if ref is not None else [t.relation for t in times]
    if TemporalRelation.BEFORE in ops:
        return AnswerOrder.RECENT
    if TemporalRelation.AFTER in ops:
        return AnswerOrder.EARLIEST
    return None


def _previous_word(tokens: list[Token], k: int) -> str:
    k -= 1
    while k >= 0 and tokens[k].text in {"the", "'s"}:
        k -= 1
    return tokens[k].text if k >= 0 else ""


def _copula_question(texts: list[str], w: int) -> bool:
    """A copula question ("Who was the <relation noun> of <entity>?"): wh-word, "was"/"is", "the"."""
    return 0 <= w < len(texts) - 2 and texts[w + 1] in {"was", "is", "were", "are"} and texts[w + 2] == "the"


def _has_receive(tokens: list[Token], lo: int, hi: int) -> bool:
    return any(tokens[k].text in RECEIVE_WORDS for k in range(max(0, lo - 1), min(hi, len(tokens))))


def _suffer_victim(tokens: list[Token], a: EntityMention, b: EntityMention) -> bool:
    """In "<a> suffer … from <b>", ``a`` is the one acted upon."""
    return any(tokens[k].text.startswith("suffer") for k in range(a.end, b.start))


def _answer_is_subject(tokens: list[Token], target: Target, main: EntityMention, host_like: bool) -> bool:
    """Whether the asked entity is the subject of the relation (the main entity then is the object)."""
    texts = [t.text for t in tokens]
    before_main = _previous_word(tokens, main.start)
    if before_main == "by":
        return False
    if before_main in {"from", "of"} and not host_like and _has_receive(tokens, 0, main.start):
        return False
    if before_main == "of" and _copula_question(texts, target.wh_position):
        return False  # "Who was the head of government of Italy?": Italy is the subject
    suffer = next((k for k, w in enumerate(texts) if w.startswith("suffer")), -1)
    if suffer >= 0:
        return main.start < suffer  # "made X suffer": X is the target; "suffer from X's forces": X acts
    w = target.wh_position
    if w < 0:
        return main.start > 0
    if texts[w] in {"whom"} or (
        w > 0 and texts[w - 1] in {"with", "to", "against", "for", "about", "on", "at"}
    ):
        return False
    k = w + 1
    if texts[w] in {"which", "what", "whose"}:  # skip the head noun phrase ("which political party")
        while k < min(len(texts), w + 4) and texts[k] not in AUX and k != main.start:
            k += 1
    while k < len(texts) and texts[k] in ANSWER_NOUNS:
        k += 1
    if k < len(texts) and texts[k] in AUX:
        j = k + 1
        while j < len(texts) and (
            texts[j] in {"the", "a", "an"}
            or texts[j] in FIRST_WORDS
            or texts[j] in LAST_WORDS
            or texts[j] in ANSWER_NOUNS
            or texts[j] in {"that", "whom", "which", "who"}
        ):
            j += 1
        return j != main.start
    return not (k < len(texts) and texts[k] in {"that", "whom"})


_NOT_NAMES = frozenset(MONTHS) | {"i"}


def _unlinked_names(tokens: list[Token], covered: set[int], common: set[str]) -> str:
    """A capitalised word (not sentence-initial, not a month) that no mention explains: a name the KG
    does not know, whose constraint the program would silently drop."""
    for k in range(1, len(tokens)):
        t = tokens[k]
        if k in covered or not t.capitalized or t.text in _NOT_NAMES or t.text in STOPWORDS:
            continue
        if t.text in common or t.text in VOCAB or lemma(t.text) in common:
            continue  # a capitalised common noun ("the Interim Government")
        if tokens[k - 1].orig in {".", "?", "!"}:
            continue
        return t.orig
    return ""


def _dedupe(mentions: list[EntityMention]) -> list[EntityMention]:
    seen: set[str] = set()
    out = []
    for m in mentions:
        if m.entity in seen:
            continue
        seen.add(m.entity)
        out.append(m)
    return out


__all__ = ["Granularity", "Parse", "ParserOptions", "QuestionParser"]

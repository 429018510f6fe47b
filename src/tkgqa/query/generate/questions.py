"""Question generation from any :class:`~tkgqa.kg.KGStore`: MultiTQ-style questions with computed gold.

Each generated question carries its typed program (:mod:`tkgqa.query.program.nodes`) and its gold answers
are what the :class:`~tkgqa.query.Executor` returns for that program over the KG — never written by hand. An
instance is kept only when the answer set is non-empty and small (``max_answers``), and its text is new
(deduplicated). The patterns (:class:`Pattern`) follow MultiTQ's question types (Chen et al., ACL 2023):
``equal`` (an entity at a time, or the time of an event), ``before_after`` (before/after a time or another
entity's event), ``first_last`` (first/last entity, or the time of the first/last event), ``after_first``,
``before_last`` and ``equal_multi`` (first/last within a time, or at the same time as another event).

Uses: a history source for ARI's memory where a benchmark ships no dev split with answers (MultiTQ), and
training pairs for TimeR4's retriever. Sampling is seeded (:class:`random.Random`): the same KG, counts and
seed give the same questions. The text comes from the shared verbaliser (:mod:`.verbalize`). Reference
events ("before X did") must be a single fact, so the question has one reading; answers exclude the
reference entity.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ...datasets.base import AnswerType, Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Extreme, Granularity, TemporalRelation, TimePoint
from ..program.executor import Executor
from ..program.nodes import Const, Entities, Exclude, Filter, Match, Program, Rows, Select, TimeOf, Times
from .verbalize import base_form, past_tense, time_text


class Pattern(StrEnum):
    """A question template family, named after MultiTQ's question types (``qtype`` says which)."""

    EQUAL = "equal"  # Who visited Iraq in 2012?
    EQUAL_TIME = "equal_time"  # When did China visit Iraq?
    BEFORE_AFTER = "before_after"  # Who visited Iraq before 2012?
    BEFORE_AFTER_ENTITY = "before_after_entity"  # Who visited Iraq after Japan did?
    FIRST_LAST = "first_last"  # Who was the first to visit Iraq?
    FIRST_LAST_TIME = "first_last_time"  # When did China first visit Iraq?
    AFTER_FIRST = "after_first"  # After Japan, who was the first to visit Iraq?
    BEFORE_LAST = "before_last"  # Before Japan, who was the last to visit Iraq?
    EQUAL_MULTI = "equal_multi"  # In 2012, who was the first to visit Iraq? / ... the same month as Japan?

    @property
    def qtype(self) -> str:
        """MultiTQ's question type of this pattern."""
        match self:
            case Pattern.EQUAL | Pattern.EQUAL_TIME:
                return "equal"
            case Pattern.BEFORE_AFTER | Pattern.BEFORE_AFTER_ENTITY:
                return "before_after"
            case Pattern.FIRST_LAST | Pattern.FIRST_LAST_TIME:
                return "first_last"
            case Pattern.AFTER_FIRST | Pattern.BEFORE_LAST | Pattern.EQUAL_MULTI:
                return self.value

    @property
    def answer_type(self) -> AnswerType:
        return "time" if self in (Pattern.EQUAL_TIME, Pattern.FIRST_LAST_TIME) else "entity"

    @property
    def qlabel(self) -> str:
        """MultiTQ's label: ``Single`` (one event) or ``Multiple`` (two events, or an event and an order)."""
        multiple = (Pattern.AFTER_FIRST, Pattern.BEFORE_LAST, Pattern.EQUAL_MULTI)
        return "Multiple" if self in multiple else "Single"


@dataclass(frozen=True)
class GeneratedQuestion:
    """A question (gold answers, qtype, entities, times filled), its program and its pattern."""

    question: Question
    program: Program
    pattern: Pattern


# --- counts ---------------------------------------------------------------------------------------------
def parse_counts(
    spec: str | Mapping[str, int] | int, *, default: Sequence[Pattern] = tuple(Pattern)
) -> dict[Pattern, int]:
    """How many questions per pattern: an int (split evenly over ``default``, the remainder to the first
    patterns), a mapping, or a string ``"equal=20,first_last=10"`` (``all=N``: N of each). ConfigError
    names a bad pattern or count."""
    if isinstance(spec, int):
        return _split(spec, default)
    items: Iterable[tuple[str, object]]
    if isinstance(spec, str):
        text = spec.strip()
        if re.fullmatch(r"\d+", text):
            return _split(int(text), default)
        items = [_pair(part) for part in text.split(",") if part.strip()]
    else:
        items = spec.items()
    out: dict[Pattern, int] = {}
    for key, value in items:
        n = _count(key, value)
        name = str(key).strip().lower().replace("-", "_")
        if name == "all":
            for p in Pattern:
                out[p] = out.get(p, 0) + n
            continue
        try:
            pattern = Pattern(name)
        except ValueError:
            valid = ", ".join(p.value for p in Pattern)
            raise ConfigError(f"unknown question pattern {key!r}; use one of: {valid} (or all)") from None
        out[pattern] = out.get(pattern, 0) + n
    return out


def _pair(part: str) -> tuple[str, str]:
    key, sep, value = part.partition("=")
    if not sep:
        raise ConfigError(f"bad pattern count {part.strip()!r}: write PATTERN=N, e.g. equal=20")
    return key, value


def _count(key: object, value: object) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"bad count for pattern {key!r}: {value!r} is not a whole number") from None
    if n < 0:
        raise ConfigError(f"bad count for pattern {key!r}: {n} is negative")
    return n


def _split(total: int, patterns: Sequence[Pattern]) -> dict[Pattern, int]:
    if total < 0:
        raise ConfigError(f"the number of questions must be >= 0, got {total}")
    if not patterns:
        raise ConfigError("no question patterns to split the count over")
    base, rest = divmod(total, len(patterns))
    return {p: base + (1 if i < rest else 0) for i, p in enumerate(patterns)}


# --- generation -----------------------------------------------------------------------------------------
_TIME_ASK = {
    Granularity.DAY: "When",
    Granularity.MONTH: "In which month",
    Granularity.YEAR: "In which year",
}


class QuestionGenerator:
    """Generates questions of each :class:`Pattern` over ``kg`` (seeded; see the module docstring).

    ``max_answers``: largest gold answer set kept; ``relations``: only these relations (default: all);
    ``max_tries``: attempts per wanted question before a pattern gives up (sparse KGs)."""

    def __init__(
        self,
        kg: KGStore,
        *,
        seed: int = 0,
        max_answers: int = 5,
        relations: Sequence[str] | None = None,
        max_tries: int = 60,
        qid_prefix: str = "gen",
    ) -> None:
        if max_answers < 1:
            raise ConfigError(f"max_answers must be >= 1, got {max_answers}")
        self.kg = kg
        self.rng = random.Random(seed)
        self.max_answers = max_answers
        self.max_tries = max_tries
        self.qid_prefix = qid_prefix
        self.facts: list[Fact] = [
            f for f in kg if f.start is not None and (relations is None or f.relation in set(relations))
        ]
        if not self.facts:
            raise ConfigError(f"the KG {kg.name!r} has no dated facts to generate questions from")
        self._seen: set[str] = set()
        self._builders: dict[Pattern, Callable[[], tuple[str, Program, list[str]] | None]] = {
            Pattern.EQUAL: self._equal,
            Pattern.EQUAL_TIME: self._equal_time,
            Pattern.BEFORE_AFTER: self._before_after,
            Pattern.BEFORE_AFTER_ENTITY: self._before_after_entity,
            Pattern.FIRST_LAST: self._first_last,
            Pattern.FIRST_LAST_TIME: self._first_last_time,
            Pattern.AFTER_FIRST: lambda: self._ordered_after_entity(TemporalRelation.AFTER, Extreme.FIRST),
            Pattern.BEFORE_LAST: lambda: self._ordered_after_entity(TemporalRelation.BEFORE, Extreme.LAST),
            Pattern.EQUAL_MULTI: self._equal_multi,
        }

    def generate(self, counts: Mapping[Pattern, int] | str | int) -> list[GeneratedQuestion]:
        """Up to ``counts[p]`` questions of each pattern (fewer when the KG does not support more)."""
        wanted = counts if isinstance(counts, Mapping) else parse_counts(counts)
        out: list[GeneratedQuestion] = []
        for pattern in Pattern:
            n = int(wanted.get(pattern, 0))
            made = 0
            tries = 0
            while made < n and tries < n * self.max_tries:
                tries += 1
                found = self.one(pattern)
                if found is not None:
                    out.append(found)
                    made += 1
        return out

    def one(self, pattern: Pattern) -> GeneratedQuestion | None:
        """One new question of ``pattern``, or ``None`` when this attempt found no usable instance."""
        built = self._builders[pattern]()
        if built is None:
            return None
        text, program, entities = built
        if text in self._seen:
            return None
        result = Executor(self.kg).run(program)
        answers = list(dict.fromkeys(result.answers))
        if not answers or len(answers) > self.max_answers:
            return None
        self._seen.add(text)
        times = [t.iso() for t in _consts(program.rows)]
        question = Question(
            qid=f"{self.qid_prefix}-{pattern.value}-{len(self._seen)}",
            text=text,
            answers=answers,
            answer_type=pattern.answer_type,
            qtype=pattern.qtype,
            qlabel=pattern.qlabel,
            entities=entities,
            times=times,
            dataset=f"generated:{self.kg.name}",
            extra={"pattern": pattern.value, "program": str(program)},
        )
        return GeneratedQuestion(question, program, pattern)

    # --- helpers ----------------------------------------------------------------------------------------
    def _fact(self) -> Fact:
        return self.rng.choice(self.facts)

    def _gran(self) -> Granularity:
        return self.rng.choice((Granularity.DAY, Granularity.MONTH, Granularity.YEAR))

    def _label(self, name: str) -> str:
        return self.kg.label(name)

    def _event(self, f: Fact) -> tuple[Match, str, str]:
        """The rows asking for one side of ``f`` (``?`` subject or object), the question's opening (before
        the time phrase) and the known entity."""
        rel = self._label(f.relation)
        if self.rng.random() < 0.5:
            return (
                Match(None, f.relation, f.object),
                f"Who {past_tense(rel)} {self._label(f.object)}",
                f.object,
            )
        return (
            Match(f.subject, f.relation, None),
            f"Whom did {self._label(f.subject)} {base_form(rel)}",
            f.subject,
        )

    def _single_reference(self, f: Fact) -> bool:
        return self.kg.count(subject=f.subject, relation=f.relation, object=f.object) == 1

    def _equal(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        assert f.start is not None
        t = f.start.coarsen(self._gran())
        rows, opening, known = self._event(f)
        program = Entities(Filter(rows, TemporalRelation.IN, Const(t)))
        return f"{opening} {time_text(t)}?", program, [known]

    def _equal_time(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        gran = self._gran()
        rel = base_form(self._label(f.relation))
        text = f"{_TIME_ASK[gran]} did {self._label(f.subject)} {rel} {self._label(f.object)}?"
        program = Times(Match(f.subject, f.relation, f.object), gran)
        return text, program, [f.subject, f.object]

    def _before_after(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        rows, opening, known = self._event(f)
        op = self.rng.choice((TemporalRelation.BEFORE, TemporalRelation.AFTER))
        dated = [g.start for g in self._rows_facts(rows) if g.start is not None]
        if len(dated) < 2:
            return None
        dated.sort(key=lambda t: t.first_day)
        k = self.rng.randrange(1, min(len(dated), 4))
        ref = dated[k] if op is TemporalRelation.BEFORE else dated[-1 - k]
        t = ref.coarsen(self._gran())
        program = Entities(Filter(rows, op, Const(t)))
        return f"{opening} {time_text(t, op.value)}?", program, [known]

    def _before_after_entity(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        if not self._single_reference(f):
            return None
        op = self.rng.choice((TemporalRelation.BEFORE, TemporalRelation.AFTER))
        rel = past_tense(self._label(f.relation))
        rows = Match(None, f.relation, f.object)
        ref = TimeOf(Match(f.subject, f.relation, f.object))
        program = Entities(Exclude(Filter(rows, op, ref), (f.subject,)))
        text = f"Who {rel} {self._label(f.object)} {op.value} {self._label(f.subject)} did?"
        return text, program, [f.object, f.subject]

    def _first_last(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        which = self.rng.choice((Extreme.FIRST, Extreme.LAST))
        rel = base_form(self._label(f.relation))
        program = Entities(Select(Match(None, f.relation, f.object), which))
        return f"Who was the {which.value} to {rel} {self._label(f.object)}?", program, [f.object]

    def _first_last_time(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        which = self.rng.choice((Extreme.FIRST, Extreme.LAST))
        gran = self._gran()
        rel = base_form(self._label(f.relation))
        program = Times(Select(Match(f.subject, f.relation, f.object), which), gran)
        text = f"{_TIME_ASK[gran]} did {self._label(f.subject)} {which.value} {rel} {self._label(f.object)}?"
        return text, program, [f.subject, f.object]

    def _ordered_after_entity(
        self, op: TemporalRelation, which: Extreme
    ) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        if not self._single_reference(f):
            return None
        rel = base_form(self._label(f.relation))
        ref = TimeOf(Match(f.subject, f.relation, f.object))
        rows = Exclude(Filter(Match(None, f.relation, f.object), op, ref), (f.subject,))
        program = Entities(Select(rows, which))
        lead = "After" if op is TemporalRelation.AFTER else "Before"
        text = f"{lead} {self._label(f.subject)}, who was the {which.value} to {rel} {self._label(f.object)}?"
        return text, program, [f.subject, f.object]

    def _equal_multi(self) -> tuple[str, Program, list[str]] | None:
        f = self._fact()
        assert f.start is not None
        which = self.rng.choice((Extreme.FIRST, Extreme.LAST))
        rel = base_form(self._label(f.relation))
        rows = Match(None, f.relation, f.object)
        if self.rng.random() < 0.5:
            t = f.start.coarsen(self.rng.choice((Granularity.MONTH, Granularity.YEAR)))
            program = Entities(Select(Filter(rows, TemporalRelation.IN, Const(t)), which))
            when = time_text(t)
            text = f"{when[0].upper()}{when[1:]}, who was the {which.value} to {rel} {self._label(f.object)}?"
            return text, program, [f.object]
        if not self._single_reference(f):
            return None
        gran = self._gran()
        ref = TimeOf(Match(f.subject, f.relation, f.object), granularity=gran)
        program = Entities(Exclude(Filter(rows, TemporalRelation.IN, ref), (f.subject,)))
        unit = {Granularity.DAY: "day", Granularity.MONTH: "month", Granularity.YEAR: "year"}[gran]
        prep = "on" if gran is Granularity.DAY else "in"
        text = f"Who {past_tense(self._label(f.relation))} {self._label(f.object)} {prep} the same {unit} as "
        text += f"{self._label(f.subject)}?"
        return text, program, [f.object, f.subject]

    def _rows_facts(self, rows: Match) -> list[Fact]:
        return self.kg.facts(subject=rows.subject, relation=rows.relation, object=rows.object)


def _consts(node: Rows) -> list[TimePoint]:
    match node:
        case Filter():
            own = [node.time.point] if isinstance(node.time, Const) else []
            return [*own, *_consts(node.rows)]
        case Select() | Exclude():
            return _consts(node.rows)
        case _:
            return []


def generate_questions(
    kg: KGStore,
    counts: Mapping[Pattern, int] | str | int,
    *,
    seed: int = 0,
    max_answers: int = 5,
    relations: Sequence[str] | None = None,
) -> list[GeneratedQuestion]:
    """:class:`QuestionGenerator` ``(kg, seed=…).generate(counts)`` in one call."""
    return QuestionGenerator(kg, seed=seed, max_answers=max_answers, relations=relations).generate(counts)

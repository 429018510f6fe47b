"""The shared query layer between ``kg``/``time`` and the methods: one meaning in one place.

What lives here, and every method consumes (methods never import each other):

* question text (:mod:`.text`) — tokens, entity mentions (:class:`MentionIndex`), the one question-time
  reader (:func:`find_times`, :data:`TIME_CUES`), whether a time is asked (:mod:`.text.frame`), the relation
  lexicon; question linking by the one linker (:class:`QuestionLinker`, :mod:`.link`);
* the time semantics (:class:`~tkgqa.time.TemporalRelation`, :func:`~tkgqa.time.holds`, defined in
  :mod:`tkgqa.time.semantics` and re-exported here);
* the one answer normaliser (:func:`normalize_answer`) and answer coverage of fact sets (:mod:`.coverage`);
* the typed program (:mod:`.program`), its executor and the offline :class:`Reasoner` (question → program);
* per-KG resource caching (:class:`PerKG`) and per-question context KGs (:func:`context_kg`);
* the obfuscated-entity setting ``K′``/``Q′`` of the CIK-LLM paper, for any method (:mod:`.obfuscate`).
"""

from ..time import Extreme, TemporalRelation, holds, keep, search_window
from .context import context_kg
from .coverage import answer_covered, coverage_at, fact_mentions
from .link import (
    GivenEntities,
    IndexScope,
    LinkedQuestion,
    LinkerOptions,
    QuestionAnchors,
    QuestionLinker,
    TextLinks,
    base_store,
    mask_question,
)
from .program.executor import Executor, Result
from .program.nodes import (
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
    TimeExpr,
    TimeOf,
    Times,
    pretty,
)
from .program.parser import Parse, ParserOptions, QuestionParser
from .program.reasoner import Reasoner, given_entities
from .resources import PerKG
from .text.lexicon import RelationLexicon
from .text.mentions import EntityMention, MentionIndex
from .text.normalize import normalize_answer, normalize_text
from .text.timeref import TIME_CUES, TimeMention, find_times
from .text.words import Token, tokenize

__all__ = [
    "TIME_CUES",
    "AnswerOrder",
    "Const",
    "Entities",
    "EntityMention",
    "Exclude",
    "Executor",
    "Extreme",
    "Fallback",
    "Filter",
    "GivenEntities",
    "IndexScope",
    "LinkedQuestion",
    "LinkerOptions",
    "Match",
    "MentionIndex",
    "Parse",
    "ParserOptions",
    "PerKG",
    "Program",
    "QuestionAnchors",
    "QuestionLinker",
    "QuestionParser",
    "Reasoner",
    "ReferenceTime",
    "RelationLexicon",
    "Result",
    "Rows",
    "Select",
    "TemporalRelation",
    "TextLinks",
    "TimeExpr",
    "TimeMention",
    "TimeOf",
    "Times",
    "Token",
    "answer_covered",
    "base_store",
    "context_kg",
    "coverage_at",
    "fact_mentions",
    "find_times",
    "given_entities",
    "holds",
    "keep",
    "mask_question",
    "normalize_answer",
    "normalize_text",
    "pretty",
    "search_window",
    "tokenize",
]

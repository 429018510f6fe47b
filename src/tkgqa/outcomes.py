"""Typed outcomes of answering one question: the ``results.jsonl`` row (:class:`ResultRow`), how the question
came out (:class:`Outcome`), why a method abstained (:class:`AbstainReason`, and an abstention's typed value
:class:`Abstention`) and what kind of error failed it (:class:`ErrorKind`).

A leaf module (it imports only the leaf :mod:`tkgqa.trace`): methods give abstain reasons, ``tkgqa.eval``
writes rows and aggregates them, methods' ``report_metrics`` read them, the service's runs browser and the
CLI show them.

``ResultRow.to_json()`` is the ``results.jsonl`` line's object, key for key and in the same order as the
runner always wrote it; :meth:`ResultRow.from_json` reads any line ever written, old run folders included:
a missing key takes its default and stays missing when the row is written back, a value of the wrong JSON
kind is read as the default, and keys it does not know are kept (``extra``) and written back after the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import cache
from typing import Any

from .trace import TraceStep, trace_json


class Outcome(StrEnum):
    """How a run answered one question: an error (the method or its LLM failed), an abstention (no answer
    given), or an answer whose first prediction is right (strict Hits@1) or wrong."""

    CORRECT = "correct"
    WRONG = "wrong"
    ABSTAINED = "abstained"
    ERROR = "error"


class ErrorKind(StrEnum):
    """The kind of an error row, read from its ``error_type`` (the exception's class name). Only tkgqa's own
    errors have a kind of their own; any other exception (a bug, an unexpected library error) is ``OTHER``."""

    CONTEXT_WINDOW = "ContextWindowError"
    RATE_LIMIT = "RateLimitError"
    LLM = "LLMError"
    PARSE = "ParseError"
    CONFIG = "ConfigError"
    DATA = "DataError"
    NOT_FOUND = "NotFoundError"
    TKGQA = "TKGQAError"
    REPLAY_MISS = "ReplayMiss"
    OTHER = "other"

    @classmethod
    def of(cls, error_type: str | None) -> ErrorKind | None:
        """The kind of an ``error_type`` (``None`` for no error)."""
        if not error_type:
            return None
        try:
            return cls(error_type)
        except ValueError:
            return cls.OTHER

    @classmethod
    def of_text(cls, error: str) -> ErrorKind | None:
        """The kind of an error written as ``Type: message`` (a row's ``error``); ``None`` for ``""``."""
        return cls.of(error.split(":", 1)[0].strip()) if error else None


class AbstainReason(StrEnum):
    """Why a method abstained: the kind of an :class:`Abstention` (``Answer.reason``), whose text a row's
    ``reason`` is.

    A member's value is the reason text itself; a reason with details is a template (``{name}`` fields) that
    :meth:`note` fills (``AbstainReason.EVIDENCE_OVER_LIMIT.note(tokens=900, limit=800)``) and :meth:`of`
    recognises in text read back (a row's ``reason``, a plugin's string). A reason no member describes (e.g.
    the question parser's words) is ``OTHER``."""

    # question → KG
    NO_ENTITY_LINKED = "no KG entity linked in the question"
    NO_QUESTION_ENTITY = "no question entity found in the KG"
    NO_INFORMATION_ABOUT = "There's no information in the knowledge about {names}"
    NO_FACTS_RETRIEVED = "no facts retrieved"
    EVIDENCE_EMPTY = "the evidence set is empty"
    PATH_SELECTION_FAILED = "path selection failed: {why}"
    # prompt size
    EVIDENCE_OVER_LIMIT = "evidence of {tokens} tokens exceeds the limit {limit}"
    CONTEXT_WINDOW = "the prompt does not fit the model's context window"
    # model output
    UNPARSABLE_OUTPUT = "unparsable model output"
    ANSWER_UNPARSED = "could not parse the answer"
    ANSWER_LIST_UNPARSED = "could not parse the answer list"
    PLAN_UNPARSED = "the plan did not parse: {error}"
    AXIOM_UNPARSED = "axiom unparsable"
    NO_AXIOM = "no axiom could be parsed from the model's replies"
    # no answer found
    NO_ANSWER = "no answer ({stop})"
    PROGRAM_NO_ANSWER = "the program found no answer in the KG"
    MODEL_NO_ANSWER_IN_EVIDENCE = "the model found no answer in the evidence"
    MODEL_LISTED_NO_ANSWER = "the model listed no answer"
    MODEL_DONT_KNOW = "the model answered I don't know"
    PLAN_NO_ANSWER = "the plan's final step found no answer"
    PLAN_FINAL_EMPTY = "the final answer is empty"
    NO_OPTION_JUDGED = "no option could be judged"
    NO_GROUNDED_ANSWER = "no grounded answer within depth {depth} and {n} branch(es)"
    PLAN_STEP_EMPTY = "{step} is empty"
    # a combination of methods (hybrid): both reasons
    BOTH_ABSTAINED = "{primary}: {primary_reason}; {fallback}: {fallback_reason}"
    # anything else (a parser's or an executor's own words)
    OTHER = "other"

    @property
    def is_template(self) -> bool:
        return "{" in self.value

    def note(self, **fields: object) -> Abstention:
        """The abstention of this kind: the text itself, or the template filled with ``fields``."""
        return Abstention(self, self.value.format(**fields) if fields else self.value)

    @classmethod
    def of(cls, reason: str) -> AbstainReason | None:
        """The member whose text (or template) ``reason`` is; ``OTHER`` for any other text, ``None`` for
        ``""`` (no abstention)."""
        if not reason:
            return None
        exact, patterns = _reason_index()
        found = exact.get(reason)
        if found is not None:
            return found
        for member, pattern in patterns:
            if pattern.fullmatch(reason):
                return member
        return cls.OTHER

    @property
    def token_limit(self) -> bool:
        """An abstention because the prompt would not fit (the evidence limit or the model's window)."""
        return self in (AbstainReason.EVIDENCE_OVER_LIMIT, AbstainReason.CONTEXT_WINDOW)


@dataclass(frozen=True, slots=True)
class Abstention:
    """Why a method abstained, as a value: its ``kind`` and its ``text`` (a row's ``reason``, written as is).

    Methods make it from a member (:meth:`AbstainReason.note`); text from outside (a parser's or an
    executor's words, a plugin's string, a row read back) becomes one by :meth:`of`, its kind recognised by
    :meth:`AbstainReason.of` (``OTHER`` when no member describes it)."""

    kind: AbstainReason
    text: str

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, reason: Abstention | str) -> Abstention | None:
        """``reason`` as a value: an :class:`Abstention` as is, a member as its :meth:`~AbstainReason.note`,
        other text with the kind :meth:`AbstainReason.of` recognises; ``None`` for ``""`` (no abstention)."""
        if isinstance(reason, Abstention):
            return reason
        if isinstance(reason, AbstainReason):
            return reason.note()
        text = str(reason)
        kind = AbstainReason.of(text)
        return None if kind is None else cls(kind, text)


@cache
def _reason_index() -> tuple[dict[str, AbstainReason], list[tuple[AbstainReason, re.Pattern[str]]]]:
    exact: dict[str, AbstainReason] = {
        m.value: m for m in AbstainReason if not m.is_template and m is not AbstainReason.OTHER
    }
    patterns = []
    for m in AbstainReason:
        if m.is_template:
            parts = re.split(r"\{\w+\}", m.value)
            patterns.append((m, re.compile("(.*)".join(re.escape(p) for p in parts), re.DOTALL)))
    return exact, patterns


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One question's line of ``results.jsonl`` (see the module docstring for the reading rules).

    The answer: ``predictions`` (ranked), ``evidence`` (facts as dicts), ``trace`` (the method's steps),
    ``usage`` (LLM calls, tokens, cost), ``latency_s``, ``raw_output``; an abstention: ``abstained`` and
    ``reason``; a failure: ``error`` (``Type: message``) and ``error_type``. The scores (``rank``,
    ``strict_hit`` …), the question's annotations (``qtype`` …) and the KG-supported diagnostic."""

    qid: str = ""
    question: str = ""
    dataset: str = ""
    predictions: list[str] = field(default_factory=list)
    gold: list[str] = field(default_factory=list)
    gold_ids: list[str] = field(default_factory=list)
    rank: int | None = None
    strict_hit: bool = False
    lenient_hit: bool = False
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    exact_set: bool = False
    evidence: list[dict[str, Any]] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    latency_s: float = 0.0
    abstained: bool = False
    reason: str = ""
    raw_output: str = ""
    error: str | None = None
    error_type: str | None = None
    qtype: str | None = None
    answer_type: str | None = None
    time_level: str | None = None
    qlabel: str | None = None
    types: list[str] = field(default_factory=list)
    kg: str | None = None
    supported: bool | None = None
    supported_reason: str = ""
    supported_loose: bool | None = None
    #: keys of the line this row does not know, written back after the rest
    extra: dict[str, Any] = field(default_factory=dict)
    #: known keys the line did not have (an older run), not written back
    absent: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if any(isinstance(s, TraceStep) for s in self.trace):  # an answer's typed steps: their JSON form
            object.__setattr__(self, "trace", trace_json(self.trace))

    # --- what the row says -------------------------------------------------------------------------
    @property
    def failed(self) -> bool:
        """The method (or its LLM) failed on the question: an error row, never an abstention."""
        return bool(self.error)

    @property
    def answered(self) -> bool:
        """The method gave at least one answer (did not abstain, did not fail)."""
        return bool(self.predictions) and not self.abstained and not self.error

    @property
    def outcome(self) -> Outcome:
        if self.error:
            return Outcome.ERROR
        if self.abstained or not self.predictions:
            return Outcome.ABSTAINED
        return Outcome.CORRECT if self.strict_hit else Outcome.WRONG

    @property
    def abstain_reason(self) -> AbstainReason | None:
        """Why the method abstained (``None`` when it answered or failed)."""
        return AbstainReason.of(self.reason) if self.abstained and not self.error else None

    @property
    def error_kind(self) -> ErrorKind | None:
        return ErrorKind.of(self.error_type) if self.error else None

    def steps(self, name: str | None = None) -> list[dict[str, Any]]:
        """The trace's steps (dicts), or those whose ``step`` is ``name``."""
        return [s for s in self.trace if isinstance(s, dict) and (name is None or s.get("step") == name)]

    def dimension(self, name: str) -> list[str]:
        """The values of annotation ``name`` (``qtype``, ``types`` …) as strings; ``[]`` when unset."""
        value = getattr(self, name, None) if name in _NAMES else self.extra.get(name)
        if isinstance(value, list):
            return [str(v) for v in value]
        return [] if value in (None, "") else [str(value)]

    # --- JSON --------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The ``results.jsonl`` object (key order as written by the runner; ``absent`` keys left out)."""
        out = {name: getattr(self, name) for name in _NAMES if name not in self.absent}
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultRow:
        """The row of one ``results.jsonl`` object, tolerant of older and damaged lines (module docstring)."""
        kinds = _kinds()
        values: dict[str, Any] = {}
        for name in _NAMES:
            if name in data:
                values[name] = _read(kinds[name], data[name], name)
        values["extra"] = {k: v for k, v in data.items() if k not in _KNOWN}
        values["absent"] = frozenset(n for n in _NAMES if n not in data)
        return cls(**values)


def _read(kind: str, value: Any, name: str) -> Any:
    """``value`` when it is of the field's JSON ``kind``, else the field's default."""
    ok: bool
    match kind:
        case "str":
            ok = isinstance(value, str)
            if name == "qid" and isinstance(value, int) and not isinstance(value, bool):
                return str(value)
        case "str?":
            ok = value is None or isinstance(value, str)
        case "bool":
            ok = isinstance(value, bool)
            if not ok and value is not None:
                return bool(value)
        case "bool?":
            ok = value is None or isinstance(value, bool)
        case "num":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        case "int?":
            ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
        case "list":
            ok = isinstance(value, list)
        case "dict":
            ok = isinstance(value, dict)
        case _:  # pragma: no cover - every field has a kind
            raise AssertionError(kind)
    return value if ok else _DEFAULTS[name]()


_KINDS = {
    "str": "str",
    "str | None": "str?",
    "bool": "bool",
    "bool | None": "bool?",
    "float": "num",
    "int | None": "int?",
}


@cache
def _kinds() -> dict[str, str]:
    out: dict[str, str] = {}
    for f in fields(ResultRow):
        if f.name in _NAMES:
            hint = str(f.type)
            out[f.name] = _KINDS.get(hint) or ("list" if hint.startswith("list") else "dict")
    return out


_NAMES: tuple[str, ...] = tuple(f.name for f in fields(ResultRow) if f.name not in ("extra", "absent"))
_KNOWN = frozenset(_NAMES)
_DEFAULTS: dict[str, Any] = {
    f.name: (f.default_factory if callable(f.default_factory) else (lambda d=f.default: d))
    for f in fields(ResultRow)
}

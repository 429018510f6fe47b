"""Answering and scoring one question of an evaluation (:func:`answer_one`), shared by the local runner and
the Ray workers: the KG each question is answered over (:class:`KGs`), the row written to ``results.jsonl``
(:class:`~tkgqa.outcomes.ResultRow`). A method exception becomes an error row (``error``, ``error_type``),
never an abstention."""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict
from pathlib import Path

from ..datasets.base import Question
from ..errors import TKGQAError
from ..kg.base import KGStore
from ..kg.memory import TemporalKG
from ..llm.helpers import error_usage_dict
from ..methods.base import Answer, Method
from ..outcomes import ResultRow
from ..query import context_kg
from ..sanitize import clean_json, clean_text, has_surrogates
from ..trace import trace_json
from .scoring import score_answer
from .support import SupportChecker


class KGs:
    """The KG each question is answered over, loaded lazily, with one support checker per shared KG."""

    def __init__(
        self, kg: KGStore | str | Path | None, kg_path: Path | None, check_support: bool, strict: bool = False
    ) -> None:
        self._given = kg
        self.strict = strict  # a malformed KG entry stops the load (else it is skipped, see ``warnings``)
        self.warnings: list[str] = []
        self._path = kg_path
        self._shared: KGStore | None = None
        self._checker: SupportChecker | None = None
        self.check_support = check_support
        self.description: str | None = None

    def source(self) -> KGStore | str | Path | None:
        """What the shared KG is opened from: the given store or file, else the dataset's KG file."""
        return self._given if self._given is not None else self._path

    def shared(self) -> KGStore:
        if self._shared is None:
            source = self.source()
            if isinstance(source, str | Path):
                from ..kg.loaders import load_kg

                self._shared = load_kg(source, strict=self.strict)
                self.description = str(source)
                report = getattr(self._shared, "load_report", None)
                warning = report.warning() if report is not None else None
                if warning:
                    self.warnings.append(f"{warning} (--strict makes this an error)")
            elif source is None:
                self._shared = TemporalKG(name="empty")
                self.description = None
            else:
                self._shared = source
                self.description = getattr(source, "name", "kg")
        return self._shared

    def for_question(self, q: Question) -> tuple[KGStore, bool]:
        """The KG for ``q`` and whether it is a per-question context KG."""
        if q.context is not None:
            return context_kg(q), True
        return self.shared(), False

    def supported(
        self, q: Question, kg: KGStore, per_question: bool, *, loose: bool = False
    ) -> tuple[bool | None, str]:
        """The KG-supported diagnostic (all question entities linked), or its ``loose`` variant."""
        if not self.check_support:
            return None, "not checked"
        try:
            if per_question:
                checker = SupportChecker(kg)
            else:
                if self._checker is None:
                    self._checker = SupportChecker(kg)
                checker = self._checker
            return checker.check_loose(q) if loose else checker.check(q)
        except Exception as exc:  # a diagnostic must not stop the run
            return None, f"check failed: {type(exc).__name__}: {exc}"


def _row(
    q: Question,
    answer: Answer | None,
    kg: KGStore,
    latency: float,
    failure: Exception | None,
    support: tuple[tuple[bool | None, str], bool | None],
) -> ResultRow:
    predictions = [str(a) for a in answer.answers] if answer is not None else []
    raw = answer.raw_output if answer is not None else ""
    usage = answer.usage.to_dict() if answer is not None else {}
    if failure is not None:
        usage = error_usage_dict(failure)  # what the failed question spent, failed calls included
    score = score_answer(q, predictions, raw, kg.label)
    (supported, supported_reason), supported_loose = support
    return ResultRow(
        qid=q.qid,
        question=q.text,
        dataset=q.dataset,
        predictions=predictions,
        gold=list(q.answers),
        gold_ids=list(q.answer_ids),
        **asdict(score),  # rank, strict_hit, lenient_hit, precision, recall, f1, exact_set
        evidence=[f.to_dict() for f in answer.evidence] if answer is not None else [],
        trace=trace_json(answer.trace) if answer is not None else [],
        usage=usage,
        latency_s=round(latency, 6),
        abstained=answer.abstained if answer is not None else False,
        reason=answer.reason_text if answer is not None else "",
        raw_output=raw,
        error=_error_text(failure) if failure is not None else None,
        error_type=type(failure).__name__ if failure is not None else None,
        qtype=q.qtype,
        answer_type=q.answer_type,
        time_level=q.time_level,
        qlabel=q.qlabel,
        types=list(q.types),
        kg=kg.name,
        supported=supported,
        supported_reason=supported_reason,
        supported_loose=supported_loose,
    )


def _error_text(exc: BaseException) -> str:
    """``Type: message`` and, for an unexpected exception (not a TKGQAError), where it was raised."""
    where = ""
    if not isinstance(exc, TKGQAError):
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def clean_question(q: Question) -> Question:
    """``q`` with lone surrogates in its id, text and gold answers replaced (U+FFFD), so that prompts, cache
    keys and the row can be encoded; ``q`` itself when there is none."""
    if not (has_surrogates(q.qid) or has_surrogates(q.text) or any(map(has_surrogates, q.answers))):
        return q
    return q.model_copy(
        update={"qid": clean_text(q.qid), "text": clean_text(q.text), "answers": clean_json(q.answers)}
    )


def answer_one(method: Method, q: Question, kgs: KGs) -> ResultRow:
    """Answer and score one question; a method exception becomes an error row (see the module docstring)."""
    q = clean_question(q)
    kg, per_question = kgs.for_question(q)
    answer: Answer | None = None
    failure: Exception | None = None
    t0 = time.perf_counter()
    try:
        answer = method.answer(q, kg)  # checked to be an Answer (Method.answer)
    except Exception as exc:  # one failing question must not stop the run
        answer, failure = None, exc
    latency = time.perf_counter() - t0
    support = kgs.supported(q, kg, per_question), kgs.supported(q, kg, per_question, loose=True)[0]
    return _row(q, answer, kg, latency, failure, support)

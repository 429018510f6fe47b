"""Interpreting a parsed :class:`~.plan.Plan` over a KG (LPKG §3.4): ``Search`` retrieves facts,
``Get_Answer`` reads a sub-question's answers from them, set / comparison / temporal steps run as typed
operations.

* **Search** (:class:`SearchMode`): ``kg`` — entity-linked operator lookup: the shared reader
  (:class:`~tkgqa.query.Reasoner`) parses the sub-question and the facts of every ``match`` of its program
  are fetched from the store (the question's entities' incident facts when it cannot parse);
  ``retriever`` — the ``k`` best verbalised facts by :class:`~tkgqa.retrieval.Retriever`.
* **Get_Answer** (:class:`ReaderMode`): ``symbolic`` — offline, the shared reader's program executed over
  the retrieved facts only; ``llm`` — a QA prompt (the authors' Appendix C.3 prompt, or ours without its
  own-knowledge clauses) over the retrieved facts, optionally sampled several times with a majority vote
  (:func:`~tkgqa.prompts.ask.vote`, the authors' self-consistency).
* A sub-question holding ``{Ans_j}`` is asked once per answer of ``Ans_j`` (at most ``max_fanout``; the
  paper's executor does the same) and the answers are united.
* ``Compare`` by the LLM (:class:`LLMComparer`, the authors' comparison prompt), or by the rule: link each
  sub-question's own entity (the one no other compared sub-question names) and keep the one whose answers
  win: earliest/latest time, or largest/smallest number, by the original question's cue word
  (:func:`compare_mode`).
* ``stop_on_empty``: the plan stops at the first empty ``Get_Answer``/``Intersection``/``Union``
  (``Execution.empty``), for the method's fall-back to answering the question directly.
* ``Before``/``After``/``During``/``Between`` and ``First``/``Last`` use the one time semantics
  (:mod:`tkgqa.query.program.answer_sets`); a reference answer's time is its earliest.

Every step is traced with its (filled-in) questions, answers and evidence facts.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from typing import Any, Protocol, assert_never

from ...kg.base import KGStore
from ...kg.fact import Fact
from ...kg.memory import TemporalKG
from ...llm import LLMBackend, Usage
from ...prompts.ask import Refused, ask, vote
from ...prompts.base import PromptSpec
from ...query import Executor, QuestionLinker, Reasoner
from ...query.program.answer_sets import (
    AnswerSet,
    CompareMode,
    Support,
    ValueKind,
    compare,
    intersect,
    pick,
    time_filter,
    union,
)
from ...query.program.nodes import (
    Combine,
    Fallback,
    Filter,
    Hop,
    Match,
    Program,
    Rows,
    Select,
    SetOperation,
    TimeOf,
)
from ...query.program.nodes import Compare as CompareRows
from ...query.program.nodes import Exclude as ExcludeRows
from ...query.text.frame import asks_time
from ...time import Interval, TemporalRelation, TimePoint, parse_time
from ..base import StepEvent, StepKind, report_step
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
    Text,
    TimeStep,
)
from .prompts import ANSWER_PROMPT, AUTHORS_COMPARE_PROMPT
from .steps import ApplyCall, CallError, CombineCall, ExecutionStep, GetAnswerCall, SearchCall


class SearchMode(StrEnum):
    KG = "kg"
    RETRIEVER = "retriever"


class ReaderMode(StrEnum):
    SYMBOLIC = "symbolic"
    LLM = "llm"


@dataclass(frozen=True)
class Info:
    """What ``Search`` returned for one (filled-in) sub-question."""

    question: str
    facts: tuple[Fact, ...]
    note: str = ""


class Searcher(Protocol):
    def __call__(self, text: str, kg: KGStore) -> Info: ...


class Reader(Protocol):
    def __call__(self, text: str, info: Info, kg: KGStore) -> tuple[AnswerSet, Usage]: ...


def _rows_matches(node: Rows | TimeOf) -> list[Match]:
    match node:
        case Match():
            return [node]
        case Filter():
            extra = _rows_matches(node.time) if isinstance(node.time, TimeOf) else []
            return _rows_matches(node.rows) + extra
        case Select() | ExcludeRows() | Hop():
            return _rows_matches(node.rows)
        case Combine():
            return [m for part in node.parts for m in _rows_matches(part)]
        case CompareRows():
            return [m for _, rows in node.candidates for m in _rows_matches(rows)]
        case Fallback():
            return _rows_matches(node.primary) + _rows_matches(node.alternative)
        case TimeOf():
            return _rows_matches(node.rows)
        case _:
            assert_never(node)


def match_facts(kg: KGStore, program: Program, limit: int) -> list[Fact]:
    """The store's facts for every ``match`` of ``program`` (both readings of inverse/symmetric ones)."""
    out: dict[Fact, None] = {}
    for m in _rows_matches(program.rows):
        if m.subject is None and m.object is None:
            continue  # an unanchored match would fetch the whole store
        queries = [(m.subject, m.relation, m.object)]
        if m.inverse:
            queries.append((m.object, m.inverse, m.subject))
        if m.both_directions:
            queries.append((m.object, m.relation, m.subject))
        for s, r, o in queries:
            for f in kg.facts(subject=s, relation=r, object=o, limit=limit):
                out[f] = None
    return list(out)[:limit]


class KGSearch:
    """Entity-linked operator lookup (see the module docstring)."""

    def __init__(self, reasoner: Reasoner, linker: QuestionLinker, *, max_info: int = 5000) -> None:
        self.reasoner = reasoner
        self.linker = linker
        self.max_info = max_info

    def __call__(self, text: str, kg: KGStore) -> Info:
        parse = self.reasoner.parse(text, kg)
        if parse.program is not None:
            return Info(text, tuple(match_facts(kg, parse.program, self.max_info)), "operator lookup")
        facts: dict[Fact, None] = {}
        for e in self.linker(text, kg):
            facts.update(dict.fromkeys(kg.incident(e)[-self.max_info :]))
        return Info(
            text, tuple(list(facts)[: self.max_info]), f"incident facts ({parse.reason or 'no parse'})"
        )


class RetrieverSearch:
    """The ``k`` best facts by a :class:`~tkgqa.retrieval.Retriever` (around the linked entities if any)."""

    def __init__(self, embedder: str, linker: QuestionLinker, *, k: int = 30) -> None:
        from ...retrieval import Retriever  # optional dependency path (numpy only for "hashing")

        self.retriever = Retriever(embedder)
        self.linker = linker
        self.k = k

    def __call__(self, text: str, kg: KGStore) -> Info:
        entities = self.linker(text, kg)
        ids = self.retriever.candidates_around(kg, entities) if entities else None
        scored = self.retriever.retrieve(text, kg, self.k, candidate_ids=ids)
        return Info(text, tuple(s.fact for s in scored), f"retriever top-{self.k}")


class SymbolicReader:
    """Offline ``Get_Answer``: the shared reader's program for the sub-question, run over the retrieved
    facts."""

    def __init__(self, reasoner: Reasoner) -> None:
        self.reasoner = reasoner

    def __call__(self, text: str, info: Info, kg: KGStore) -> tuple[AnswerSet, Usage]:
        parse = self.reasoner.parse(text, kg)
        program = parse.program
        if program is None or not info.facts:
            kind = ValueKind.TIME if asks_time(text) else ValueKind.ENTITY
            return AnswerSet(kind), Usage()
        return Executor(TemporalKG(info.facts, name="info")).answer_set(program), Usage()


@dataclass(eq=False, repr=False)
class LLMReader:
    """``Get_Answer`` by an LLM over the retrieved facts: ``prompt`` (the authors' QA prompt, or ours
    without its own-knowledge clauses), read as a '#'-separated list. ``votes`` > 1: the reply is sampled
    ``votes`` times (``temperature``, sample ``i`` with seed ``i``) and the most frequent reply text wins,
    as in the authors' executor (:func:`~tkgqa.prompts.ask.vote`)."""

    llm: LLMBackend
    _: KW_ONLY
    max_facts: int = 30
    prompt: PromptSpec[list[str]] = ANSWER_PROMPT
    votes: int = 1
    temperature: float = 1.0

    def __call__(self, text: str, info: Info, kg: KGStore) -> tuple[AnswerSet, Usage]:
        facts = info.facts[: self.max_facts]
        context = {"question": text, "facts": [_fact_text(f, kg) for f in facts]}
        timeish = asks_time(text)
        kind = ValueKind.TIME if timeish else ValueKind.ENTITY
        if self.votes > 1:
            outcome = vote(
                self.llm, self.prompt, context, self.votes, temperature=self.temperature, max_tokens=128
            )
        else:
            outcome = ask(self.llm, self.prompt, context, max_tokens=128)
        if isinstance(outcome, Refused):  # an unusable reply: no answer to this step (an LLMError propagates)
            return AnswerSet(kind), outcome.usage
        values, usage = outcome.value, outcome.usage
        pairs: list[tuple[str, Fact]] = []
        kept: list[str] = []
        for raw in values:
            value = _link(raw, kg) if not timeish else _as_time(raw)
            if value is None:
                continue
            kept.append(value)
            support = [f for f in facts if value in (f.subject, f.object)] or list(facts[:1])
            pairs.extend((value, f) for f in support)
        ans = AnswerSet.group(kind, pairs) if pairs else AnswerSet(kind)
        missing = [v for v in kept if v not in ans.values()]
        if missing:  # answers with no retrieved fact: kept, unsupported
            ans = union([ans, AnswerSet(kind, tuple(Support(v, ()) for v in missing))])
        return ans, usage


class LLMComparer:
    """``Compare`` by the QA LLM (the paper preset): the authors' comparison prompt over the original
    question, each sub-question and its answers; the reply's answers linked to KG entities."""

    def __init__(self, llm: LLMBackend) -> None:
        self.llm = llm

    def __call__(
        self, question: str, sub_questions: list[str], answers: list[list[str]], kg: KGStore
    ) -> tuple[AnswerSet, Usage]:
        context = {"question": question, "sub_questions": sub_questions, "answers": answers}
        parsed = ask(self.llm, AUTHORS_COMPARE_PROMPT, context, max_tokens=128)
        if isinstance(parsed, Refused):
            return AnswerSet(ValueKind.ENTITY), parsed.usage
        values = [v for v in (_link(raw, kg) for raw in parsed.value) if v is not None]
        return AnswerSet(ValueKind.ENTITY, tuple(Support(v, ()) for v in dict.fromkeys(values))), parsed.usage


def _report(steps: list[ExecutionStep], start: int) -> None:
    """Report the trace entries from ``start`` on as step events (the service streams them)."""
    for i, entry in enumerate(steps[start:], start=start):
        if isinstance(entry, CallError):
            label, count, ok = f"{entry.var} = error", None, False
        elif isinstance(entry, SearchCall):
            label, count, ok = f"{entry.var} = {entry.call}", None, None
        else:
            label, count, ok = f"{entry.var} = {entry.call}", entry.n_answers, None
            if entry.answers:
                label += ": " + ", ".join(map(str, entry.answers[:3]))
        report_step(StepEvent(StepKind.STAGE, i, label[:200], count=count, ok=ok))


def _fact_text(f: Fact, kg: KGStore) -> str:
    return f"{kg.label(f.subject)} | {kg.label(f.relation)} | {kg.label(f.object)} | {f.time_text()}"


def _link(text: str, kg: KGStore) -> str | None:
    t = text.strip()
    if not t or t.lower() == "none":
        return None
    for cand in (t, t.replace(" ", "_")):
        if kg.has_entity(cand):
            return cand
    return t


def _as_time(text: str) -> str | None:
    try:
        return parse_time(text.strip()).iso()
    except Exception:
        return None


_EARLIER = re.compile(r"\b(earlier|first|sooner|before|earliest|older)\b", re.I)
_LATER = re.compile(r"\b(later|last|more recently|after|latest|newer|most recently)\b", re.I)
_LESS = re.compile(r"\b(less|fewer|smaller|lower|shorter|least|cheaper)\b", re.I)


def compare_mode(question: str, times: bool) -> CompareMode:
    """The comparison a question asks for, from its cue words (times: earlier by default; numbers: more)."""
    if times:
        return (
            CompareMode.LATER
            if _LATER.search(question) and not _EARLIER.search(question)
            else CompareMode.EARLIER
        )
    return CompareMode.LESS if _LESS.search(question) else CompareMode.MORE


@dataclass
class Execution:
    """The result of running a plan: final answers, the trace of every step, the final evidence, usage."""

    answers: AnswerSet
    steps: list[ExecutionStep] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str = ""
    empty: str = ""  # with stop_on_empty: the step whose answers came out empty (the plan stopped there)


class Comparer(Protocol):
    def __call__(
        self, question: str, sub_questions: list[str], answers: list[list[str]], kg: KGStore
    ) -> tuple[AnswerSet, Usage]: ...


@dataclass(eq=False, repr=False)
class PlanExecutor:
    """Runs plans over one store at a time with a searcher and a reader. ``comparer``: ``Compare`` by it
    (the LLM, :class:`LLMComparer`) instead of the rule; ``stop_on_empty``: the plan stops at the first
    ``Get_Answer``/``Intersection``/``Union`` whose answers are empty (``Execution.empty`` names it), as the
    authors' executor does before answering the question directly."""

    searcher: Searcher
    reader: Reader
    linker: QuestionLinker
    _: KW_ONLY
    max_fanout: int = 10
    trace_facts: int = 5
    comparer: Comparer | None = None
    stop_on_empty: bool = False

    def run(self, plan: Plan, kg: KGStore, question: str = "") -> Execution:
        env: dict[str, Any] = {"Original_Question": Text("Original_Question", question)}
        ex = Execution(AnswerSet(ValueKind.ENTITY))
        for step in plan.steps:
            before = len(ex.steps)
            try:
                self._step(step, env, kg, ex)
            except (KeyError, TypeError, ValueError) as exc:  # a plan that parses but cannot run
                ex.error = f"{step.var}: {type(exc).__name__}: {exc}"
                ex.steps.append(CallError(var=step.var, error=ex.error))
                _report(ex.steps, before)
                return ex
            _report(ex.steps, before)
            if self.stop_on_empty and isinstance(step, AnswerStep | SetStep) and not len(env[step.var]):
                ex.empty = step.var
                return ex
        return ex

    def texts(self, text: Text, env: dict[str, Any], kg: KGStore) -> list[str]:
        """``text`` with its ``{Ans_j}`` fields filled: one text per combination of answers (capped)."""
        if not text.refs:
            return [text.template]
        options = []
        for ref in text.refs:
            value = env[ref]
            if isinstance(value, Text):
                options.append([value.template])
            else:
                options.append([_label(v, value.kind, kg) for v in value.values()[: self.max_fanout]])
        out = []
        for combo in itertools.islice(itertools.product(*options), self.max_fanout):
            filled = text.template
            for ref, val in zip(text.refs, combo, strict=True):
                filled = filled.replace("{" + ref + "}", val)
            out.append(filled)
        return out

    def _answered(self, answers: AnswerSet, kg: KGStore) -> dict[str, Any]:
        """The answer fields of a plan-line step: the first ten labels, the count, a few evidence facts."""
        return {
            "answers": [_label(v, answers.kind, kg) for v in answers.values()[:10]],
            "n_answers": len(answers),
            "evidence": [f.to_dict() for f in answers.facts()[: self.trace_facts]],
        }

    def _step(self, step: Any, env: dict[str, Any], kg: KGStore, ex: Execution) -> None:
        match step:
            case Text():
                env[step.var] = step
            case SearchStep():
                infos = [self.searcher(t, kg) for t in self.texts(env[step.query], env, kg)]
                env[step.var] = infos
                found = [f for i in infos for f in i.facts[: self.trace_facts]][: self.trace_facts]
                ex.steps.append(
                    SearchCall(
                        var=step.var,
                        queries=[i.question for i in infos],
                        n_facts=sum(len(i.facts) for i in infos),
                        how=infos[0].note if infos else "",
                        evidence=[f.to_dict() for f in found],
                    )
                )
            case AnswerStep():
                texts = self.texts(env[step.query], env, kg)
                given: list[Info] = env[step.info]
                results = []
                for i, text in enumerate(texts):
                    if len(given) == len(texts):
                        info = given[i]
                    else:
                        info = Info(text, tuple(dict.fromkeys(f for x in given for f in x.facts)))
                    answers, usage = self.reader(text, info, kg)
                    ex.usage = ex.usage + usage
                    results.append(answers)
                env[step.var] = union(results) if results else AnswerSet(ValueKind.ENTITY)
                answered = self._answered(env[step.var], kg)
                ex.steps.append(GetAnswerCall(var=step.var, queries=texts, **answered))
            case SetStep():
                parts = [env[v] for v in step.inputs]
                env[step.var] = intersect(parts) if step.op is SetOperation.AND else union(parts)
                call = "Intersection" if step.op is SetOperation.AND else "Union"
                answered = self._answered(env[step.var], kg)
                ex.steps.append(CombineCall(var=step.var, call=call, inputs=list(step.inputs), **answered))
            case CompareStep():
                env[step.var] = self._compare(step, env, kg, ex)
                answered = self._answered(env[step.var], kg)
                ex.steps.append(
                    CombineCall(var=step.var, call="Compare", inputs=list(step.inputs), **answered)
                )
            case TimeStep():
                env[step.var] = self._time(step, env)
                answered = self._answered(env[step.var], kg)
                ex.steps.append(ApplyCall(var=step.var, call=str(step.op), input=step.input, **answered))
            case PickStep():
                env[step.var] = pick(env[step.input], step.which)
                answered = self._answered(env[step.var], kg)
                call = str(step.which).title()
                ex.steps.append(ApplyCall(var=step.var, call=call, input=step.input, **answered))
            case FinishStep():
                ex.answers = env[step.answer]
                answered = self._answered(ex.answers, kg)
                ex.steps.append(
                    ApplyCall(var=step.var, call="Finish_The_Plan", input=step.answer, **answered)
                )
            case _:
                raise TypeError(f"unknown plan step {type(step).__name__}")

    def _time(self, step: TimeStep, env: dict[str, Any]) -> AnswerSet:
        def point(arg: Ref | TimePoint) -> TimePoint | None:
            return arg if isinstance(arg, TimePoint) else env[arg.name].earliest()

        answers: AnswerSet = env[step.input]
        start = point(step.time)
        if start is None:
            return AnswerSet(answers.kind)
        match step.op:
            case Call.BEFORE:
                return time_filter(answers, TemporalRelation.BEFORE, start)
            case Call.AFTER:
                return time_filter(answers, TemporalRelation.AFTER, start)
            case Call.DURING:
                return time_filter(answers, TemporalRelation.IN, start)
            case Call.BETWEEN:
                end = point(step.end) if step.end is not None else None
                if end is None or end.last_day < start.first_day:
                    return AnswerSet(answers.kind)
                return time_filter(answers, TemporalRelation.IN, Interval(start, end))
            case _:
                raise ValueError(f"{step.op} is not a time step")

    def _compare(self, step: CompareStep, env: dict[str, Any], kg: KGStore, ex: Execution) -> AnswerSet:
        inputs: list[AnswerSet] = [env[v] for v in step.inputs]
        texts = [" ".join(self.texts(env[q], env, kg)) for q in step.questions]
        original: Text = env["Original_Question"]
        if self.comparer is not None:
            subs = texts + [v for v in step.inputs[len(texts) :]]  # a question per answer (its name if none)
            labels = [final_labels(a, kg) for a in inputs]
            result, usage = self.comparer(original.template, subs[: len(inputs)], labels, kg)
            ex.usage = ex.usage + usage
            return result
        linked = [self.linker(t, kg) for t in texts]
        candidates: list[tuple[str, AnswerSet]] = []
        for i, answers in enumerate(inputs):
            others = {e for j, es in enumerate(linked) if j != i for e in es}
            own = [e for e in (linked[i] if i < len(linked) else []) if e not in others]
            if own:
                candidates.append((own[0], answers))
        times = all(a.kind is ValueKind.TIME for a in inputs)
        return compare(candidates, compare_mode(original.template or " ".join(texts), times))


def _label(value: str, kind: ValueKind, kg: KGStore) -> str:
    return value if kind is ValueKind.TIME else kg.label(value)


def direct_plan(question: str) -> Plan:
    """The one-step plan that asks the question itself (the fallback when no plan parses)."""
    return Plan(
        (
            Text("Sub_Question_1", question),
            SearchStep("Info_1", "Sub_Question_1"),
            AnswerStep("Ans_1", "Sub_Question_1", "Info_1"),
            FinishStep("Final_Answer", "Ans_1"),
        )
    )


def final_labels(answers: AnswerSet, kg: KGStore) -> list[str]:
    return [_label(v, answers.kind, kg) for v in answers.values()]


__all__ = [
    "Comparer",
    "Execution",
    "Info",
    "KGSearch",
    "LLMComparer",
    "LLMReader",
    "PlanExecutor",
    "ReaderMode",
    "RetrieverSearch",
    "SearchMode",
    "SymbolicReader",
    "compare_mode",
    "direct_plan",
    "final_labels",
    "match_facts",
]

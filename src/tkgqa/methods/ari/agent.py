"""The ARI agent loop (paper Algorithm 1, lines 5-15): offer candidates, let the policy choose, execute,
feed the result back (truncated to ``max_result_items`` entries when set), until ``answer(...)`` or ``t_max``
actions. Each step is reported as a :class:`~tkgqa.methods.base.StepEvent` (the action and its result size)
to the step reporter of the context, if any, which may cancel the episode between steps.
``fallback_answer`` (ours) answers from the current list when the loop ends without an answer; the paper's
loop then has none."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...datasets.base import Question
from ...errors import LLMError
from ...kg.fact import Fact
from ...llm.helpers import charge
from ...query.text.frame import asked_granularity
from ...time import Granularity
from ...usage import Usage
from ..base import StepEvent, StepKind, report_step
from .actions import (
    ANSWER,
    Action,
    AgentState,
    Item,
    answer_value_matches,
    format_items,
    ranked_times,
    ranked_values,
)
from .environment import ARIEnvironment
from .policies import Policy, StepView


@dataclass(frozen=True)
class StepRecord:
    """One step of an episode, as stored in traces and in the history memory."""

    index: int
    candidates: list[str]
    action: str | None
    result: str
    n_results: int
    raw_output: str = ""
    parse_failed: bool = False
    free_answer: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "step": self.index,
            "candidates": self.candidates,
            "action": self.action,
            "result": self.result,
            "n_results": self.n_results,
        }
        for key in ("raw_output", "note"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if self.parse_failed:
            d["parse_failed"] = True
        if self.free_answer:
            d["free_answer"] = True
        return d


@dataclass(frozen=True)
class Episode:
    """The outcome of one question: steps, final state, answers (labels / ISO times), evidence, usage."""

    steps: list[StepRecord]
    state: AgentState
    answers: list[str]
    evidence: list[Fact]
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    forced: bool = False

    @property
    def n_actions(self) -> int:
        return sum(1 for s in self.steps if s.action is not None)


def run_episode(
    question: Question,
    env: ARIEnvironment,
    policy: Policy,
    *,
    t_max: int = 5,
    methodology: str | None = None,
    max_result_items: int | None = 3,
    fallback_answer: bool = True,
) -> Episode:
    state = AgentState()
    steps: list[StepRecord] = []
    history: list[tuple[str, str]] = []
    usage = Usage()
    stop = "t_max"
    anchor_facts: list[Fact] = []
    for i in range(t_max):
        candidates = env.candidates(state)
        if not candidates:
            stop = "no_candidates"
            break
        view = StepView(question, i, t_max, state, candidates, list(history), methodology, env)
        try:
            decision = policy.choose(view)
        except LLMError as exc:  # the backend failed: the question's error row carries the steps' usage
            charge(exc, usage)
            raise
        usage = usage + decision.usage
        texts = [a.text for a in candidates]
        if decision.action is None:
            stop = "parse_failure" if decision.parse_failed else "policy_stopped"
            note = decision.error or decision.note
            steps.append(StepRecord(i, texts, None, "", 0, decision.raw, decision.parse_failed, note=note))
            report_step(StepEvent(StepKind.STOP, i, note or stop, data={"stop": stop}))
            break
        action = decision.action
        state, items = env.step(state, action)
        result = "Done." if action.kind == ANSWER else format_items(items, max_result_items)
        steps.append(
            StepRecord(
                i,
                texts,
                action.text,
                result,
                len(items),
                decision.raw,
                free_answer=action.free,
                note=decision.note,
            )
        )
        history.append((action.text, result))
        report_step(
            StepEvent(
                StepKind.ACTION,
                i,
                action.text,
                count=len(items),
                data={"result": result[:300], "candidates": len(candidates)},
            )
        )
        if action.is_lookup and len(items) <= 3:
            anchor_facts.extend(it.fact for it in items)
        if state.done:
            stop = "answer"
            break
    answers, evidence, forced = _final_answers(env, question, state, anchor_facts, fallback_answer)
    return Episode(steps, state, answers, evidence, usage, stop, forced)


def _final_answers(
    env: ARIEnvironment, question: Question, state: AgentState, anchor_facts: list[Fact], fallback: bool
) -> tuple[list[str], list[Fact], bool]:
    kg = env.kg
    items = list(state.items)
    action = state.answer
    gran = asked_granularity(question.text)
    if action is None:
        if not fallback or not items:
            return [], [], False
        if gran is not None:
            times = ranked_times(items, gran)
            action = Action(ANSWER, answer=times[0].iso()) if times else None
        else:
            values = ranked_values(items)
            action = Action(ANSWER, answer=values[0]) if values else None
        if action is None:
            return [], [], False
        forced = True
    else:
        forced = False
    chosen = action.answer or ""
    support = [it for it in items if answer_value_matches(it, action)]
    if any(it.value == chosen for it in support) or (not support and not _looks_like_time(chosen)):
        first = kg.label(chosen) if kg.has_entity(chosen) else chosen.replace("_", " ")
        rest = [kg.label(v) for v in ranked_values(items) if v != chosen]
    else:
        first = chosen
        g = _granularity_of(chosen)
        rest = [t.iso() for t in ranked_times(items, g) if t.iso() != chosen]
    answers = list(dict.fromkeys([first, *rest]))[:10]
    evidence = _evidence(support, anchor_facts, state)
    return answers, evidence, forced


def _looks_like_time(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d{4}(-\d{2}(-\d{2})?)?", text.strip()))


def _granularity_of(iso: str) -> Granularity:
    return {1: Granularity.YEAR, 2: Granularity.MONTH}.get(iso.count("-") + 1, Granularity.DAY)


def _evidence(support: list[Item], anchor_facts: list[Fact], state: AgentState) -> list[Fact]:
    """The facts behind the answer (at most 10), then those of small lookups (temporal anchors)."""
    facts = [it.fact for it in support][:10] or [it.fact for it in state.items][:10]
    return list(dict.fromkeys([*facts, *anchor_facts]))[:20]

"""The knowledge-based part of ARI: candidate enumeration (Eq. 1-2) and filtration (Eq. 3) over one question.

:class:`ARIEnvironment` is deterministic: ``candidates(state)`` lists the actions offered at ``state`` and
``step(state, action)`` executes one. Policies (LLM, oracle search, symbolic plan) only choose.

Two action spaces (:class:`ActionSpace`): ``paper`` regenerates the lookups at every step from the question
entities *and* the newly identified subject entities (the entities of the current list once it names at most
``max_new_subjects``), over every relation of their 1-hop subgraphs; ``reference`` (the authors' code) keeps
the linked question entities and locks the relation after the first lookup. Two filters
(:class:`FilterMode`): ``eq3`` (Top-K of the enumerated lookups, then the non-empty check) and
``nonempty_first`` (ours).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ...kg.base import KGStore
from ...query.linking import QuestionAnchors
from ...retrieval.similarity import Similarity
from ...time import Granularity, TimePoint
from .actions import (
    ANSWER,
    Action,
    AgentState,
    Item,
    answer_candidates,
    execute,
    filter_items,
    lookup_count,
)


class ActionSpace(StrEnum):
    """Which lookups are enumerated (Eq. 1-2).

    * ``paper`` — the subjects are the linked question entities plus the *newly identified subject
      entities* (§3.3): the entities of the current result list once it names at most
      ``max_new_subjects`` of them (after a narrow lookup or a first/last/before/after filter); lookups
      run over every relation of each subject's 1-hop subgraph, at every step (chaining).
    * ``reference`` — the authors' code: only the linked question entities (head and tail), and after the
      first lookup only its relation (``LLM_rel_choose``); no chaining through result entities.
    """

    PAPER = "paper"
    REFERENCE = "reference"


class FilterMode(StrEnum):
    """The candidate filter (Eq. 3).

    * ``eq3`` — as Eq. 3 is written: ``{a | exec(a) ≠ ∅ ∧ a ∈ Top-K(P_t, q)}``: the K enumerated lookups most
      similar to the question, minus those that return nothing (so at most K are offered); a list operator
      is offered when it returns something.
    * ``nonempty_first`` — ours: the lookups that return something, then the K most similar of those (K are
      offered whenever K exist); a list operator is offered when it keeps something and changes the list
      (get_first/get_last always).
    """

    EQ3 = "eq3"
    NONEMPTY_FIRST = "nonempty_first"


@dataclass(frozen=True)
class FilterSettings:
    enabled: bool = True
    top_k: int = 15
    max_candidates: int = 300
    n_answer_entities: int = 3
    n_answer_times: int = 2
    action_space: ActionSpace = ActionSpace.REFERENCE
    mode: FilterMode = FilterMode.NONEMPTY_FIRST
    max_new_subjects: int = 3


class ARIEnvironment:
    """Candidate actions and their execution for one question over one KG."""

    def __init__(
        self,
        kg: KGStore,
        anchors: QuestionAnchors,
        similarity: Similarity,
        settings: FilterSettings | None = None,
    ) -> None:
        self.kg = kg
        self.anchors = anchors
        self.similarity = similarity
        self.settings = settings or FilterSettings()
        self._score_cache: dict[str, float] = {}
        self._count_cache: dict[Action, int] = {}
        self._cand_cache: dict[tuple[object, ...], list[Action]] = {}
        self._rel_cache: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    # --- enumeration (Eq. 2) ------------------------------------------------------------------------
    def lookup_times(self, state: AgentState) -> list[TimePoint | None]:
        """Time constraints offered to lookups: none, the question's times, and the anchors seen so far
        (at their own, month and year granularity)."""
        out: dict[TimePoint | None, None] = {None: None}
        for t in self.anchors.times:
            out.setdefault(t, None)
        for a in state.anchors:
            for g in (Granularity.DAY, Granularity.MONTH, Granularity.YEAR):
                out.setdefault(a.coarsen(g), None)
        return list(out)

    def filter_times(self, state: AgentState) -> list[TimePoint]:
        """Time arguments of get_before/get_after: the question's times and the anchors."""
        return list(dict.fromkeys([*self.anchors.times, *state.anchors]))

    def subjects(self, state: AgentState) -> list[str]:
        """Entities lookups start from: the linked question entities, and with ``action_space=paper`` the
        newly identified subject entities (those of the current list when it names at most
        ``max_new_subjects`` KG entities)."""
        subjects = list(self.anchors.entities)
        if self.settings.action_space is ActionSpace.PAPER and state.items:
            values = list(dict.fromkeys(it.value for it in state.items))
            if len(values) <= self.settings.max_new_subjects:
                subjects.extend(v for v in values if v not in subjects and self.kg.has_entity(v))
        return subjects

    def relations_of(self, entity: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(relations with ``entity`` as subject, as object), most frequent first."""
        found = self._rel_cache.get(entity)
        if found is None:
            a = self.anchors
            if entity in a.out_relations or entity in a.in_relations:
                found = (tuple(a.out_relations.get(entity, ())), tuple(a.in_relations.get(entity, ())))
            else:
                found = (_relations(self.kg, entity, True), _relations(self.kg, entity, False))
            self._rel_cache[entity] = found
        return found

    def enumerate(self, state: AgentState) -> list[Action]:
        """Every action of the templates instantiated on the subjects, the relations of their 1-hop subgraph
        (``reference``: only the relation in focus after a lookup) and the current list."""
        a = self.anchors
        filtered = self.settings.enabled
        times = self.lookup_times(state)
        out: list[Action] = []
        if self.settings.action_space is ActionSpace.PAPER:
            subjects = self.subjects(state)
            for e in subjects:
                outs, ins = self.relations_of(e)
                for r in dict.fromkeys([*outs, *ins]):
                    as_subject, as_object = r in outs, r in ins
                    if as_subject or not filtered:
                        out.extend(Action("get_tail_entity", e, r, time=t) for t in times)
                        out.extend(Action("get_time", e, r, other=o) for o in subjects if o != e)
                    if as_object or not filtered:
                        out.extend(Action("get_head_entity", e, r, time=t) for t in times)
        else:
            relations = [state.relation] if state.relation else a.relations()
            for r in relations:
                for e in a.entities:
                    as_subject = r in a.out_relations.get(e, ())
                    as_object = r in a.in_relations.get(e, ())
                    if as_subject or not filtered:
                        out.extend(Action("get_tail_entity", e, r, time=t) for t in times)
                        out.extend(Action("get_time", e, r, other=o) for o in a.entities if o != e)
                    if as_object or not filtered:
                        out.extend(Action("get_head_entity", e, r, time=t) for t in times)
        if state.items:
            out.append(Action("get_first"))
            out.append(Action("get_last"))
            ftimes = self.filter_times(state)
            out.extend(Action("get_before", time=t) for t in ftimes)
            out.extend(Action("get_after", time=t) for t in ftimes)
            qt = sorted(set(a.times))
            out.extend(
                Action("get_between", time=t1, time2=t2) for i, t1 in enumerate(qt) for t2 in qt[i + 1 :]
            )
            out.extend(Action("get_between", time=t1, time2=t2) for t1, t2 in state.spans)
            out.extend(Action("get_between", time=t, time2=t) for t in a.times)
            for t in ftimes:
                for g in (Granularity.MONTH, Granularity.YEAR):
                    c = t.coarsen(g)
                    out.append(Action("get_between", time=c, time2=c))
            s = self.settings
            out.extend(answer_candidates(state.items, s.n_answer_entities, s.n_answer_times))
        taken = set(state.taken)
        return [x for x in dict.fromkeys(out) if x.text not in taken]

    # --- filtration (Eq. 3) -------------------------------------------------------------------------
    def candidates(self, state: AgentState) -> list[Action]:
        """The actions offered at ``state`` (Eq. 3): the top-K lookups by similarity to the question that
        return something (``filter_mode`` sets the order of the two tests), then the list operators, then the
        answers. With the filter disabled (ablation), every enumerated action up to ``max_candidates``."""
        key = (state.key(), state.taken)
        found = self._cand_cache.get(key)
        if found is not None:
            return found
        actions = self.enumerate(state)
        s = self.settings
        if not s.enabled:
            result = actions[: s.max_candidates]
        else:
            lookups = [x for x in actions if x.is_lookup]
            ops = [x for x in actions if x.kind != ANSWER and not x.is_lookup]
            if s.mode is FilterMode.EQ3:
                ranked = [x for x in self.rank(lookups)[: s.top_k] if self.count(x) > 0]
                ops = [x for x in ops if filter_items(state.items, x)]
            else:
                ranked = self.rank([x for x in lookups if self.count(x) > 0])[: s.top_k]
                ops = [x for x in ops if _informative(state.items, x)]
            answers = [x for x in actions if x.kind == ANSWER]
            result = [*ranked, *ops, *answers]
        if len(self._cand_cache) > 20_000:
            self._cand_cache.clear()
        self._cand_cache[key] = result
        return result

    def count(self, action: Action) -> int:
        found = self._count_cache.get(action)
        if found is None:
            found = self._count_cache[action] = lookup_count(self.kg, action)
        return found

    def rank(self, actions: Sequence[Action]) -> list[Action]:
        """``actions`` by decreasing similarity to the question (stable for ties)."""
        texts = [self.semantic_text(x) for x in actions]
        missing = [t for t in dict.fromkeys(texts) if t not in self._score_cache]
        for t, s in zip(missing, self.similarity.scores(missing), strict=True):
            self._score_cache[t] = s
        order = sorted(range(len(actions)), key=lambda i: -self._score_cache[texts[i]])
        return [actions[i] for i in order]

    def semantic_text(self, action: Action) -> str:
        """What is compared with the question: labels of the entities and relation, and the time."""
        kg = self.kg
        parts = [kg.label(x) for x in (action.entity, action.relation, action.other) if x]
        if action.time is not None:
            parts.append(action.time.iso())
        if action.kind == "get_time":
            parts.insert(0, "when")
        return " ".join(parts)

    # --- execution ----------------------------------------------------------------------------------
    def step(self, state: AgentState, action: Action) -> tuple[AgentState, list[Item]]:
        return execute(self.kg, state, action)


def _informative(items: Sequence[Item], action: Action) -> bool:
    """A list operator worth offering: it keeps something, and (except get_first/get_last, which the
    reference offers whenever there is a list) not everything."""
    kept = len(filter_items(items, action))
    return kept > 0 and (kept < len(items) or action.kind in ("get_first", "get_last"))


def _relations(kg: KGStore, entity: str, as_subject: bool) -> tuple[str, ...]:
    facts = kg.facts(subject=entity) if as_subject else kg.facts(object=entity)
    counts: dict[str, int] = {}
    for f in facts:
        counts[f.relation] = counts.get(f.relation, 0) + 1
    return tuple(sorted(counts, key=lambda r: (-counts[r], r)))

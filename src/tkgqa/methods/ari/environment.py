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

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TypeVar

from ...kg.base import KGStore
from ...query.link import QuestionAnchors, entity_relations
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

K = TypeVar("K")
V = TypeVar("V")


class ActionSpace(StrEnum):
    """Which lookups are enumerated (Eq. 1-2).

    * ``paper`` — the subjects are the linked question entities plus the *newly identified subject
      entities* (§3.3): the entities of the current result list once it names at most
      ``max_new_subjects`` of them (after a narrow lookup or a first/last/before/after filter); lookups
      run over every relation of each subject's 1-hop subgraph, at every step (chaining); get_time(e, r, o)
      on the edges ``(e, r, o)`` of the KG between two subjects (Eq. 1: (neighbour, relation) pairs).
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
    rank_with_time: bool = False


@dataclass(eq=False, repr=False)
class ARIEnvironment:
    """Candidate actions and their execution for one question over one KG."""

    kg: KGStore
    anchors: QuestionAnchors
    similarity: Similarity
    settings: FilterSettings = field(default_factory=FilterSettings)
    _score_cache: dict[str, float] = field(init=False, default_factory=dict)
    _count_cache: dict[Action, int] = field(init=False, default_factory=dict)
    _cand_cache: dict[tuple[object, ...], list[Action]] = field(init=False, default_factory=dict)
    _rel_cache: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(init=False, default_factory=dict)
    _base_cache: dict[tuple[object, ...], list[Action]] = field(init=False, default_factory=dict)
    _edge_cache: dict[tuple[str, str], frozenset[str]] = field(init=False, default_factory=dict)
    _rank_cache: dict[tuple[object, ...], list[Action]] = field(init=False, default_factory=dict)
    _text_cache: dict[tuple[Action, bool], str] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        if self.settings is None:  # an explicit None still means the defaults
            self.settings = FilterSettings()

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
                found = (entity_relations(self.kg, entity, True), entity_relations(self.kg, entity, False))
            self._rel_cache[entity] = found
        return found

    def edges(self, subject: str, obj: str) -> frozenset[str]:
        """Relations of the facts ``(subject, ·, obj)``: with ``action_space=paper``, get_time is
        instantiated on the 1-hop edges of G_e (Eq. 1: neighbour entity and the relation linking it)."""
        key = (subject, obj)
        found = self._edge_cache.get(key)
        if found is None:
            found = self._edge_cache[key] = frozenset(
                f.relation for f in self.kg.facts(subject=subject, object=obj)
            )
        return found

    def base_key(self, state: AgentState) -> tuple[object, ...]:
        """What the lookups at ``state``, without their time constraints, depend on (for caching)."""
        focus = state.relation if self.settings.action_space is ActionSpace.REFERENCE else None
        return (tuple(self.subjects(state)), focus)

    def base_lookups(self, state: AgentState) -> list[Action]:
        """The lookups of the templates on the subjects and the relations of their 1-hop subgraph
        (``reference``: only the relation in focus after a lookup), without time constraint; each
        get_tail_entity/get_head_entity stands for its variants at every time of :meth:`lookup_times`."""
        key = self.base_key(state)
        found = self._base_cache.get(key)
        if found is not None:
            return found
        a = self.anchors
        filtered = self.settings.enabled
        out: list[Action] = []
        if self.settings.action_space is ActionSpace.PAPER:
            subjects = self.subjects(state)
            for e in subjects:
                outs, ins = self.relations_of(e)
                for r in dict.fromkeys([*outs, *ins]):
                    as_subject, as_object = r in outs, r in ins
                    if as_subject or not filtered:
                        out.append(Action("get_tail_entity", e, r))
                        out.extend(
                            Action("get_time", e, r, other=o)
                            for o in subjects
                            if o != e and (r in self.edges(e, o) or not filtered)
                        )
                    if as_object or not filtered:
                        out.append(Action("get_head_entity", e, r))
        else:
            relations = [state.relation] if state.relation else a.relations()
            for r in relations:
                for e in a.entities:
                    as_subject = r in a.out_relations.get(e, ())
                    as_object = r in a.in_relations.get(e, ())
                    if as_subject or not filtered:
                        out.append(Action("get_tail_entity", e, r))
                        out.extend(Action("get_time", e, r, other=o) for o in a.entities if o != e)
                    if as_object or not filtered:
                        out.append(Action("get_head_entity", e, r))
        return _remember(self._base_cache, key, list(dict.fromkeys(out)), 2_000)

    def enumerate_lookups(self, state: AgentState) -> list[Action]:
        """Every lookup (Eq. 2), time variants included, actions already taken included."""
        return list(_with_times(self.base_lookups(state), self.lookup_times(state)))

    def enumerate(self, state: AgentState) -> list[Action]:
        """Every action of the templates (Eq. 2): the lookups (:meth:`enumerate_lookups`), then the list
        operators and the answers on the current list; actions already taken are left out."""
        taken = set(state.taken)
        lookups = [x for x in self.enumerate_lookups(state) if x.text not in taken]
        return [*lookups, *self.list_actions(state)]

    def list_actions(self, state: AgentState) -> list[Action]:
        """The list operators and answers on the current list (not taken yet)."""
        a = self.anchors
        out: list[Action] = []
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
        s = self.settings
        if not s.enabled:
            result = self.enumerate(state)[: s.max_candidates]
        else:
            taken = set(state.taken)
            lookups = _first_untaken(self._ranked_lookups(state), taken, s.top_k, self.count, s.mode)
            rest = self.list_actions(state)
            ops = [x for x in rest if x.kind != ANSWER]
            if s.mode is FilterMode.EQ3:
                ranked = [x for x in lookups[: s.top_k] if self.count(x) > 0]
                ops = [x for x in ops if filter_items(state.items, x)]
            else:
                ranked = [x for x in lookups if self.count(x) > 0][: s.top_k]
                ops = [x for x in ops if _informative(state.items, x)]
            answers = [x for x in rest if x.kind == ANSWER]
            result = [*ranked, *ops, *answers]
        return _remember(self._cand_cache, key, result, 20_000)

    def _ranked_lookups(self, state: AgentState) -> Iterator[Action]:
        """Every lookup by decreasing similarity to the question. Without ``rank_with_time`` the time
        variants of a lookup share its score, so the base lookups are ranked once and expanded lazily (the
        same order as ranking the expanded list: ties keep the enumeration order)."""
        times = self.lookup_times(state)
        if self.settings.rank_with_time:
            key: tuple[object, ...] = (self.base_key(state), tuple(times))
            found = self._rank_cache.get(key)
            if found is None:
                found = _remember(self._rank_cache, key, self.rank(self.enumerate_lookups(state)), 2_000)
            return iter(found)
        key = self.base_key(state)
        bases = self._rank_cache.get(key)
        if bases is None:
            bases = _remember(self._rank_cache, key, self.rank(self.base_lookups(state)), 2_000)
        return _with_times(bases, times)

    def count(self, action: Action) -> int:
        found = self._count_cache.get(action)
        if found is None:
            found = self._count_cache[action] = lookup_count(self.kg, action)
        return found

    def rank(self, actions: Sequence[Action]) -> list[Action]:
        """``actions`` by decreasing similarity to the question (stable for ties: the enumeration order, in
        which a lookup without time constraint precedes its variants with the question's times, then the
        anchors')."""
        texts = [self.semantic_text(x) for x in actions]
        missing = [t for t in dict.fromkeys(texts) if t not in self._score_cache]
        if missing:
            for t, s in zip(missing, self.similarity.scores(missing), strict=True):
                self._score_cache[t] = s
        order = sorted(range(len(actions)), key=lambda i: -self._score_cache[texts[i]])
        return [actions[i] for i in order]

    def semantic_text(self, action: Action) -> str:
        """What is compared with the question: labels of the entities and relation (``when`` for get_time),
        and the time argument when ``rank_with_time`` (default off: a sentence encoder gives date strings
        no meaningful similarity, and leaving them out keeps the texts to encode per question small)."""
        key = (action, self.settings.rank_with_time)
        found = self._text_cache.get(key)
        if found is not None:
            return found
        kg = self.kg
        parts = [kg.label(x) for x in (action.entity, action.relation, action.other) if x]
        if action.time is not None and self.settings.rank_with_time:
            parts.append(action.time.iso())
        if action.kind == "get_time":
            parts.insert(0, "when")
        return _remember(self._text_cache, key, " ".join(parts), 200_000)

    # --- execution ----------------------------------------------------------------------------------
    def step(self, state: AgentState, action: Action) -> tuple[AgentState, list[Item]]:
        return execute(self.kg, state, action)


def _informative(items: Sequence[Item], action: Action) -> bool:
    """A list operator worth offering: it keeps something, and (except get_first/get_last, which the
    reference offers whenever there is a list) not everything."""
    kept = len(filter_items(items, action))
    return kept > 0 and (kept < len(items) or action.kind in ("get_first", "get_last"))


def _with_times(bases: Sequence[Action], times: Sequence[TimePoint | None]) -> Iterator[Action]:
    """Each base lookup followed by its time variants (get_time has none)."""
    for b in bases:
        if b.kind == "get_time":
            yield b
        else:
            for t in times:
                yield b if t is None else replace(b, time=t)


def _first_untaken(
    ranked: Iterable[Action], taken: set[str], k: int, count: Callable[[Action], int], mode: FilterMode
) -> list[Action]:
    """The leading actions of ``ranked`` not taken yet: ``k`` of them (``eq3``), or up to ``k`` that return
    something (``nonempty_first``); stops early so that long lists are not scanned."""
    out: list[Action] = []
    kept = 0
    for x in ranked:
        if kept >= k:
            break
        if taken and x.text in taken:
            continue
        out.append(x)
        if mode is FilterMode.EQ3 or count(x) > 0:
            kept += 1
    return out


def _remember(cache: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` (emptying ``cache`` first when it holds more than ``limit`` entries)."""
    if len(cache) > limit:
        cache.clear()
    cache[key] = value
    return value

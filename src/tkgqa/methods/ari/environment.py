"""The knowledge-based part of ARI: candidate enumeration (Eq. 2) and filtration (Eq. 3) over one question.

:class:`ARIEnvironment` is deterministic: ``candidates(state)`` lists the actions offered at ``state`` and
``step(state, action)`` executes one. Policies (LLM, oracle search, symbolic plan) only choose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...kg.base import KGStore
from ...retrieval.embedders import Embedder
from ...time import Granularity, TimePoint
from .actions import (
    ANSWER,
    Action,
    AgentState,
    Item,
    QuestionAnchors,
    answer_candidates,
    execute,
    filter_items,
    lookup_count,
)

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class FilterSettings:
    enabled: bool = True
    top_k: int = 15
    max_candidates: int = 300
    n_answer_entities: int = 3
    n_answer_times: int = 2


class Similarity:
    """Cosine similarity of texts to the question: an embedder when given, else word-set Jaccard."""

    def __init__(self, question: str, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self.question = question
        self._qvec = embedder.encode([question])[0] if embedder is not None else None
        self._qwords = set(_WORD.findall(question.lower()))

    def scores(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        if self.embedder is not None and self._qvec is not None:
            mat = self.embedder.encode(list(texts))
            return [float(x) for x in np.asarray(mat) @ self._qvec]
        out = []
        for t in texts:
            words = set(_WORD.findall(t.lower()))
            union = words | self._qwords
            out.append(len(words & self._qwords) / len(union) if union else 0.0)
        return out


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

    def enumerate(self, state: AgentState) -> list[Action]:
        """Every action of the templates instantiated on the question's entities, the relations of their
        1-hop subgraph (only the relation in focus after a lookup) and the current list."""
        a = self.anchors
        filtered = self.settings.enabled
        relations = [state.relation] if state.relation else a.relations()
        times = self.lookup_times(state)
        out: list[Action] = []
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
        """The actions offered at ``state``: lookups that return something, ranked by similarity to the
        question and cut to top-K, then the non-empty list operators, then the answers. With the filter
        disabled (ablation), every enumerated action up to ``max_candidates``."""
        key = (state.key(), state.taken)
        found = self._cand_cache.get(key)
        if found is not None:
            return found
        actions = self.enumerate(state)
        if not self.settings.enabled:
            result = actions[: self.settings.max_candidates]
        else:
            lookups = [x for x in actions if x.is_lookup and self.count(x) > 0]
            ranked = self.rank(lookups)[: self.settings.top_k]
            ops = [
                x for x in actions if x.kind != ANSWER and not x.is_lookup and _informative(state.items, x)
            ]
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

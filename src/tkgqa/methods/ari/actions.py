"""ARI's atomic actions (paper Table 6) and the agent state they act on.

The agent keeps a current list of ``(entity, time)`` results (:class:`Item`, each backed by its KG fact), as
the reference implementation does: the KG lookups (``get_time``, ``get_head_entity``, ``get_tail_entity``)
replace the list, the temporal operators (``get_before``/``get_after``/``get_between``/``get_first``/
``get_last``) filter it, and ``answer(...)`` ends the episode. Everything here is pure: executing an action
on a state returns a new state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...kg.base import KGStore
from ...kg.fact import Fact
from ...time import Extreme, Granularity, TemporalRelation, TimePoint, extreme, holds_span

LOOKUPS = ("get_time", "get_tail_entity", "get_head_entity")
LIST_OPS = ("get_before", "get_after", "get_between", "get_first", "get_last")
ANSWER = "answer"
ACTION_KINDS = (*LOOKUPS, *LIST_OPS, ANSWER)
NO_TIME = "no time constraints"
ENTITIES_ARG = "{entities}"


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of the agent's current list: the entity the action asked for and the fact it came from."""

    value: str
    fact: Fact

    @property
    def time(self) -> TimePoint | None:
        return self.fact.start


@dataclass(frozen=True, slots=True)
class Action:
    """A concrete action. Which fields are set depends on ``kind``:

    * ``get_tail_entity(entity, relation, time?)`` / ``get_head_entity(entity, relation, time?)``;
    * ``get_time(entity, relation, other)``;
    * ``get_before/get_after({entities}, time)``, ``get_between({entities}, time, time2)``,
      ``get_first/get_last({entities})``;
    * ``answer(answer)`` — an entity name or an ISO time; ``free`` marks an answer the model wrote itself
      instead of picking a candidate.
    """

    kind: str
    entity: str | None = None
    relation: str | None = None
    other: str | None = None
    time: TimePoint | None = None
    time2: TimePoint | None = None
    answer: str | None = None
    free: bool = False

    @property
    def text(self) -> str:
        """The action as the model sees it, e.g. ``get_head_entity(Iran, Criticize_or_denounce, 2006)``."""
        k = self.kind
        if k == "get_time":
            return f"get_time({self.entity}, {self.relation}, {self.other})"
        if k in ("get_tail_entity", "get_head_entity"):
            when = self.time.iso() if self.time else NO_TIME
            return f"{k}({self.entity}, {self.relation}, {when})"
        if k in ("get_before", "get_after"):
            return f"{k}({ENTITIES_ARG}, {_iso(self.time)})"
        if k == "get_between":
            return f"{k}({ENTITIES_ARG}, {_iso(self.time)}, {_iso(self.time2)})"
        if k in ("get_first", "get_last"):
            return f"{k}({ENTITIES_ARG})"
        return f"answer({self.answer})"

    @property
    def is_lookup(self) -> bool:
        return self.kind in LOOKUPS

    def __str__(self) -> str:
        return self.text


def _iso(t: TimePoint | None) -> str:
    return t.iso() if t is not None else "?"


@dataclass(frozen=True)
class AgentState:
    """Where an episode stands: the current result list, the actions taken, the relation in focus (with
    ``action_space=reference`` later lookups stay on it, as in the authors' code) and the temporal
    anchors seen so far (earliest and latest time of each result list, usable as time arguments)."""

    items: tuple[Item, ...] = ()
    taken: tuple[str, ...] = ()
    relation: str | None = None
    anchors: tuple[TimePoint, ...] = ()
    spans: tuple[tuple[TimePoint, TimePoint], ...] = ()
    answer: Action | None = None

    @property
    def done(self) -> bool:
        return self.answer is not None

    def key(self) -> tuple[object, ...]:
        """Identity for search: what determines the future candidates (not the path taken)."""
        return (self.items, self.relation, self.anchors, self.spans)


# --- execution --------------------------------------------------------------------------------------
def lookup_facts(kg: KGStore, action: Action) -> list[Fact]:
    """Facts a lookup action reads from the KG."""
    if action.kind == "get_time":
        return kg.facts(subject=action.entity, relation=action.relation, object=action.other)
    if action.kind == "get_tail_entity":
        return kg.facts(subject=action.entity, relation=action.relation, time=action.time)
    if action.kind == "get_head_entity":
        return kg.facts(relation=action.relation, object=action.entity, time=action.time)
    raise ValueError(f"not a lookup action: {action.kind}")


def lookup_count(kg: KGStore, action: Action) -> int:
    """How many facts a lookup action would return (no fact objects built)."""
    if action.kind == "get_time":
        return kg.count(subject=action.entity, relation=action.relation, object=action.other)
    if action.kind == "get_tail_entity":
        return kg.count(subject=action.entity, relation=action.relation, time=action.time)
    return kg.count(relation=action.relation, object=action.entity, time=action.time)


def lookup_items(kg: KGStore, action: Action) -> list[Item]:
    facts = lookup_facts(kg, action)
    if action.kind == "get_tail_entity":
        return [Item(f.object, f) for f in facts]
    return [Item(f.subject, f) for f in facts]  # get_head_entity: the heads; get_time: (head, time)


_LIST_RELATIONS = {
    "get_before": TemporalRelation.BEFORE,
    "get_after": TemporalRelation.AFTER,
    "get_between": TemporalRelation.WITHIN,
}


def filter_items(items: Sequence[Item], action: Action) -> list[Item]:
    """The temporal list operators on the items' facts, with the one time semantics of
    :mod:`tkgqa.time.semantics` (before: starts before ``t`` begins; after: starts after ``t`` ends;
    between: lies within ``[t1, t2]``; first/last: earliest/latest start)."""
    k = action.kind
    if k in ("get_first", "get_last"):
        return extreme(items, Extreme.FIRST if k == "get_first" else Extreme.LAST, lambda it: it.fact.start)
    relation, t1 = _LIST_RELATIONS.get(k), action.time
    if relation is None or t1 is None:
        raise ValueError(f"not a list operator (or a missing time): {action.text}")
    lo, hi = t1.first_day, t1.last_day
    if relation is TemporalRelation.WITHIN:
        if action.time2 is None:
            raise ValueError(f"get_between needs two times: {action.text}")
        hi = action.time2.last_day
    return [it for it in items if holds_span(relation, it.fact.start, it.fact.end, lo, hi)]


def execute(kg: KGStore, state: AgentState, action: Action) -> tuple[AgentState, list[Item]]:
    """Run ``action`` on ``state``; returns the next state and the action's result list."""
    taken = (*state.taken, action.text)
    if action.kind == ANSWER:
        chosen = [it for it in state.items if answer_value_matches(it, action)]
        return replace(state, taken=taken, answer=action), chosen
    if action.is_lookup:
        items = lookup_items(kg, action)  # one item per fact: no duplicates
        relation = action.relation
    else:
        items = filter_items(state.items, action)
        relation = state.relation
    anchors = _add_anchors(state.anchors, items)
    spans = _add_span(state.spans, items)
    return AgentState(tuple(items), taken, relation, anchors, spans), items


MAX_ANCHORS = 4
MAX_SPANS = 2


def _add_anchors(anchors: tuple[TimePoint, ...], items: Sequence[Item]) -> tuple[TimePoint, ...]:
    times = [it.time for it in items if it.time is not None]
    if not times:
        return anchors
    first = min(times, key=lambda t: (t.first_day, int(t.granularity)))
    last = max(times, key=lambda t: (t.first_day, int(t.granularity)))
    new = [t for t in (first, last) if t not in anchors]
    merged = (*anchors, *dict.fromkeys(new))
    return merged[-MAX_ANCHORS:]


def _add_span(
    spans: tuple[tuple[TimePoint, TimePoint], ...], items: Sequence[Item]
) -> tuple[tuple[TimePoint, TimePoint], ...]:
    """The validity interval of the earliest fact of the list, when it is an interval (a term of office)."""
    dated = [it.fact for it in items if it.fact.start is not None]
    if not dated:
        return spans
    first = min(dated, key=lambda f: f.start.first_day if f.start else 0)
    if first.start is None or first.end is None or first.end.last_day <= first.start.last_day:
        return spans
    span = (first.start, first.end)
    return spans if span in spans else (*spans, span)[-MAX_SPANS:]


def answer_value_matches(item: Item, action: Action) -> bool:
    if action.answer is None:
        return False
    if item.value == action.answer:
        return True
    t = item.time
    if t is None:
        return False
    return any(t.coarsen(g).iso() == action.answer for g in Granularity)


# --- answer candidates ------------------------------------------------------------------------------
def ranked_values(items: Sequence[Item], order: str = "count") -> list[str]:
    """Distinct entity values: most frequent first (``count``), or by latest/earliest time."""
    counts: Counter[str] = Counter(it.value for it in items)
    first: dict[str, int] = {}
    latest: dict[str, int] = {}
    earliest: dict[str, int] = {}
    for k, it in enumerate(items):
        first.setdefault(it.value, k)
        day = it.time.first_day if it.time else 0
        latest[it.value] = max(latest.get(it.value, day), day)
        earliest[it.value] = min(earliest.get(it.value, day), day)
    if order == "recent":
        return sorted(counts, key=lambda v: (-latest[v], -counts[v], first[v]))
    if order == "earliest":
        return sorted(counts, key=lambda v: (earliest[v], -counts[v], first[v]))
    return sorted(counts, key=lambda v: (-counts[v], first[v]))


def ranked_times(items: Sequence[Item], granularity: Granularity | None = None) -> list[TimePoint]:
    """Distinct item times (coarsened to ``granularity`` when given), most frequent first, then earliest."""
    counts: Counter[TimePoint] = Counter()
    for it in items:
        if it.time is not None:
            counts[it.time.coarsen(granularity) if granularity else it.time] += 1
    return sorted(counts, key=lambda t: (-counts[t], t.first_day, int(t.granularity)))


def answer_candidates(items: Sequence[Item], n_entities: int = 3, n_times: int = 2) -> list[Action]:
    """``answer(...)`` actions for the current list: the ``n_entities`` most frequent entities and the
    ``n_times`` most frequent times, each at its own, month and year granularity."""
    out = [Action(ANSWER, answer=v) for v in ranked_values(items)[:n_entities]]
    seen: set[str] = set()
    for t in ranked_times(items)[:n_times]:
        for g in (Granularity.DAY, Granularity.MONTH, Granularity.YEAR):
            iso = t.coarsen(g).iso()
            if iso not in seen:
                seen.add(iso)
                out.append(Action(ANSWER, answer=iso))
    return out


def format_items(items: Sequence[Item], max_items: int | None = 3) -> str:
    """The result list as the model sees it: time-sorted; truncated (``max_items`` set, the authors' code)
    to the first ``max_items - 1`` entries, ``'...'`` and the last one, with the total count; ``None``:
    every entry."""
    if not items:
        return "entities = [] (no results)"
    ordered = sorted(items, key=lambda it: (it.time.first_day if it.time else 0, it.value))
    pairs = [f"({it.value!r}, {it.time.iso() if it.time else 'no time'!r})" for it in ordered]
    if max_items is not None and max_items >= 1 and len(pairs) > max_items:
        shown = [*pairs[: max(max_items - 1, 0)], "'...'", pairs[-1]]
        return f"entities = [{', '.join(shown)}] ({len(pairs)} results)"
    return f"entities = [{', '.join(pairs)}]"

"""The symbolic policy: the offline symbolic reasoner's program, compiled into a sequence of ARI actions and
followed step by step among the environment's candidates (no LLM).

``match(?, r, o)`` → ``get_head_entity(o, r, ·)``; ``match(s, r, ?)`` → ``get_tail_entity(s, r, ·)``;
``match(s, r, o)`` → ``get_time(s, r, o)``; ``in(match, t)`` → the lookup with time constraint ``t``;
``before/after(rows, t)`` → ``get_before/get_after({entities}, t)``; ``first/last(rows)`` →
``get_first/get_last``; a time reference ``time(first|last, rows)`` runs ``rows`` first and uses the
earliest/latest time of its result as the anchor (``time(span, rows)``: the validity interval of its first
fact, used through ``get_between``); the answer node ranks the final list as the program does. The
alternative plans (inverse relations, fallbacks) are dry-run on the environment at the first step and the
first one that reaches ``answer(...)`` within ``t_max`` is followed; when none does, the one going furthest
is followed and the agent falls back to the current list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...errors import TKGQAError
from ...query.program import nodes as P
from ...time import Granularity, TimePoint
from .actions import ANSWER, Action, AgentState, Item, filter_items, ranked_times, ranked_values
from .environment import ARIEnvironment
from .policies import Decision, StepView

MAX_PLANS = 8


class UnsupportedProgram(TKGQAError):
    """The program uses a construct ARI's action templates cannot express."""


@dataclass(frozen=True)
class PlanStep:
    """An action to take, with its time given now (``time``) or taken from the anchor at run time."""

    kind: str
    entity: str | None = None
    relation: str | None = None
    other: str | None = None
    time: TimePoint | None = None
    use_anchor: bool = False
    which: str = "first"  # mark_anchor: earliest or latest time of the current list
    granularity: Granularity | None = None
    order: str = "count"  # answer: ranking of entity values
    exclude: tuple[str, ...] = ()
    answer_time: bool = False


Plan = list[PlanStep]


def compile_program(program: P.Program) -> list[Plan]:
    """Alternative action plans for ``program`` (inverse relations and fallbacks give alternatives)."""
    excludes = tuple(_excludes(program.rows))
    if isinstance(program, P.Entities):
        final = PlanStep(ANSWER, order=program.order, exclude=excludes)
    elif isinstance(program, P.Times):
        if program.use_end:
            raise UnsupportedProgram("answers from end times are not expressible with ARI's actions")
        final = PlanStep(ANSWER, answer_time=True, granularity=program.granularity)
    else:  # pragma: no cover - the union is closed
        raise UnsupportedProgram(f"unknown program node {type(program).__name__}")
    plans: list[Plan] = []
    for plan in _rows(program.rows):
        if plan not in plans:  # fallbacks often repeat a branch
            plans.append(plan)
    return [[*plan, final] for plan in plans][:MAX_PLANS]


def _excludes(node: P.Rows) -> list[str]:
    if isinstance(node, P.Exclude):
        return [*node.entities, *_excludes(node.rows)]
    if isinstance(node, P.Filter | P.Select):
        return _excludes(node.rows)
    if isinstance(node, P.Fallback):
        return _excludes(node.primary) + _excludes(node.alternative)
    return []


def _lookups(m: P.Match, time: TimePoint | None = None, use_anchor: bool = False) -> list[Plan]:
    s, r, o = m.subject, m.relation, m.object
    if r is None:
        raise UnsupportedProgram("a match without relation")
    forms: list[tuple[str | None, str | None, str]] = [(s, o, r)]
    if m.inverse:
        forms.append((o, s, m.inverse))
    if m.both_directions:
        forms.append((o, s, r))
    plans: list[Plan] = []
    for subj, obj, rel in forms:
        if subj is not None and obj is not None:
            plans.append([PlanStep("get_time", subj, rel, obj)])  # a time constraint follows as get_between
        elif obj is not None:
            plans.append([PlanStep("get_head_entity", obj, rel, time=time, use_anchor=use_anchor)])
        elif subj is not None:
            plans.append([PlanStep("get_tail_entity", subj, rel, time=time, use_anchor=use_anchor)])
        else:
            raise UnsupportedProgram("a match with neither entity known")
    return plans


def _rows(node: P.Rows) -> list[Plan]:
    if isinstance(node, P.Match):
        return _lookups(node)
    if isinstance(node, P.Exclude):
        return _rows(node.rows)
    if isinstance(node, P.Fallback):
        plans: list[Plan] = []
        errors: list[str] = []
        for branch in (node.primary, node.alternative):
            try:
                plans += _rows(branch)
            except UnsupportedProgram as exc:  # the other branch may still be expressible
                errors.append(str(exc))
        if not plans:
            raise UnsupportedProgram("; ".join(errors))
        return plans[:MAX_PLANS]
    if isinstance(node, P.Select):
        if node.n != 1:
            raise UnsupportedProgram(f"the {node.n}-th {node.which} is not expressible with ARI's actions")
        step = PlanStep("get_first" if node.which == "first" else "get_last")
        return [[*p, step] for p in _rows(node.rows)]
    if isinstance(node, P.Filter):
        return _filter(node)
    raise UnsupportedProgram(f"unknown rows node {type(node).__name__}")  # pragma: no cover


def _filter(node: P.Filter) -> list[Plan]:
    rows = node.rows
    if isinstance(rows, P.Exclude):  # exclusions are applied at the answer
        return _filter(P.Filter(rows.rows, node.op, node.time))
    if isinstance(rows, P.Fallback) and node.op == "in":  # in(a ?? b, t) → in(a, t) ?? in(b, t)
        plans: list[Plan] = []
        for branch in (rows.primary, rows.alternative):
            try:
                plans += _filter(P.Filter(branch, node.op, node.time))
            except UnsupportedProgram:
                continue
        if not plans:
            raise UnsupportedProgram("no branch of the fallback is expressible")
        return plans[:MAX_PLANS]
    pre: list[Plan] = [[]]
    time: TimePoint | None = None
    anchor = False
    span = False
    if isinstance(node.time, P.Const):
        time = node.time.point
    elif isinstance(node.time, P.TimeOf):
        span = node.time.which == "span"
        mark = PlanStep("mark_anchor", which=node.time.which, granularity=node.time.granularity)
        pre = [[*p, mark] for p in _rows(node.time.rows)]
        anchor = True
    if node.op == "in" and isinstance(node.rows, P.Match) and not span:
        main = _lookups(node.rows, time, anchor)
        if node.rows.subject is not None and node.rows.object is not None:
            main = [[*p, PlanStep("get_between", time=time, use_anchor=anchor)] for p in main]
    else:
        kind = {"in": "get_between", "before": "get_before", "after": "get_after"}[node.op]
        main = [[*p, PlanStep(kind, time=time, use_anchor=anchor)] for p in _rows(node.rows)]
    return [[*a, *b] for a in pre for b in main][:MAX_PLANS]


class SymbolicPolicy:
    """Follows the compiled plan of the symbolic reasoner's program."""

    name = "symbolic"

    def __init__(
        self, program: P.Program | None, *, reason: str = "", allow_free_answer: bool = True
    ) -> None:
        self.reason = reason
        self.allow_free_answer = allow_free_answer
        self.program = program
        self.plans: list[Plan] = []
        if program is not None:
            try:
                self.plans = compile_program(program)
            except UnsupportedProgram as exc:
                self.reason = str(exc)
        self._actions: list[Action] | None = None
        self._complete = False

    def choose(self, view: StepView) -> Decision:
        if self._actions is None:
            if not self.plans:
                return Decision(None, error=self.reason or "no program", note="no plan")
            budget = view.t_max - view.step
            runs = [self.dry_run(plan, view.env, view.state, budget) for plan in self.plans]
            best = max(runs, key=lambda r: (r[1], len(r[0])))
            self._actions, self._complete = list(best[0]), best[1]
        if not self._actions:
            why = "the program's first action is not among the candidates"
            return Decision(None, error=why, note="off-plan")
        action = self._actions[0]
        if action not in view.candidates and not action.free:
            return Decision(None, error=f"{action.text} is not among the candidates", note="off-plan")
        self._actions.pop(0)
        note = "symbolic plan" if self._complete or self._actions else "symbolic plan (incomplete)"
        return Decision(action, note=note)

    def dry_run(
        self, plan: Plan, env: ARIEnvironment, state: AgentState, budget: int
    ) -> tuple[list[Action], bool]:
        """The actions ``plan`` takes from ``state`` on ``env`` and whether it reaches an answer."""
        actions: list[Action] = []
        anchor: tuple[TimePoint, TimePoint] | None = None
        last_lookup: Action | None = None
        for step in plan:
            if len(actions) >= budget:
                return actions, False
            if step.kind == "mark_anchor":
                anchor = _anchor(step, state.items)
                continue
            cands = env.candidates(state)
            action = self._answer(step, state.items, cands) if step.kind == ANSWER else _action(step, anchor)
            if action is None:
                return actions, False
            if action.is_lookup and action == last_lookup:
                continue  # the same lookup again (a reference on the main rows): the list is already there
            if action not in cands and not action.free:
                if action.kind in ("get_between", "get_before", "get_after") and _identity(
                    action, state.items
                ):
                    continue  # a filter keeping the whole list is not offered: nothing to do
                return actions, False
            state, _ = env.step(state, action)
            actions.append(action)
            if action.is_lookup:
                last_lookup = action
            if action.kind == ANSWER:
                return actions, True
        return actions, False

    def _answer(self, step: PlanStep, items: Sequence[Item], cands: Sequence[Action]) -> Action | None:
        if not items:
            return None
        if step.answer_time:
            times = ranked_times(items, step.granularity)
            value = times[0].iso() if times else None
        else:
            values = [v for v in ranked_values(items, step.order) if v not in step.exclude]
            value = values[0] if values else None
        if value is None:
            return None
        action = Action(ANSWER, answer=value)
        if action in cands:
            return action
        return replace(action, free=True) if self.allow_free_answer else None


def _anchor(step: PlanStep, items: Sequence[Item]) -> tuple[TimePoint, TimePoint] | None:
    dated = sorted((it.fact for it in items if it.fact.start is not None), key=lambda f: f.start.first_day)  # type: ignore[union-attr]
    if not dated:
        return None
    if step.which == "span":
        first = dated[0]
        assert first.start is not None
        end = first.end if first.end is not None and first.end >= first.start else first.start
        return (first.start, end)
    fact = dated[0] if step.which == "first" else dated[-1]
    assert fact.start is not None
    t = fact.start.coarsen(step.granularity) if step.granularity else fact.start
    return (t, t)


def _action(step: PlanStep, anchor: tuple[TimePoint, TimePoint] | None) -> Action | None:
    lo = hi = step.time
    if step.use_anchor:
        if anchor is None:
            return None
        lo, hi = anchor
    if step.kind in ("get_first", "get_last"):
        return Action(step.kind)
    if step.kind == "get_between":
        return Action("get_between", time=lo, time2=hi) if lo is not None and hi is not None else None
    if step.kind in ("get_before", "get_after"):
        if lo is None or hi is None:
            return None
        return Action(step.kind, time=lo if step.kind == "get_before" else hi)
    if step.use_anchor and lo != hi:
        return None  # a lookup cannot take an interval constraint
    return Action(step.kind, step.entity, step.relation, step.other, time=lo)


def _identity(action: Action, items: Sequence[Item]) -> bool:
    return bool(items) and len(filter_items(items, action)) == len(items)

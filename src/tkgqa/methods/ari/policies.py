"""Who chooses the action at each step: an LLM (the paper), an oracle search (the action space's upper
bound) or the symbolic reasoner's program (:mod:`.symbolic_policy`).

A policy object serves one question (it may keep a plan); :meth:`Policy.choose` gets a :class:`StepView`
and returns a :class:`Decision`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...datasets.base import Question
from ...errors import ContextWindowError
from ...llm import LLMBackend, Message, Usage
from ...llm.parsing import error_reason
from ...prompts.ask import Refused, ask
from .actions import ANSWER, Action, AgentState, Item, lookup_items
from .environment import ActionSpace, ARIEnvironment
from .gold import item_matches_gold, value_matches_gold
from .prompts import (
    ExampleSet,
    action_prompt,
    build_action_messages,
    format_examples,
    format_history,
)


@dataclass(frozen=True)
class StepView:
    """What a policy sees at one step."""

    question: Question
    step: int
    t_max: int
    state: AgentState
    candidates: Sequence[Action]
    history: Sequence[tuple[str, str]]  # (action text, result text) of the previous steps
    methodology: str | None
    env: ARIEnvironment


@dataclass(frozen=True)
class Decision:
    """The chosen action (``None``: stop), the model's raw output, usage and what went wrong."""

    action: Action | None
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    parse_failed: bool = False
    error: str = ""
    note: str = ""


def refused_decision(refused: Refused, refusals: Sequence[str] | None = None) -> Decision:
    """The step stops: the prompt outgrew the model's context window, or every reply was refused
    (``refusals``: the reasons the parser gave, summarised in the error; ``None``: the error as it is)."""
    err = refused.error
    if isinstance(err, ContextWindowError):
        return Decision(None, usage=refused.usage, error=f"context window: {err}"[:300])
    error = refused.message
    if refusals is not None:
        why = refusals[-1] if refusals else error_reason(err)
        asked = f"re-asked {len(refusals) - 1} time(s)" if len(refusals) > 1 else "not re-asked"
        error = f"refused ({asked}, the step abstains): {why}"
    return Decision(None, raw=refused.raw, usage=refused.usage, parse_failed=True, error=error[:300])


class Policy(Protocol):
    name: str

    def choose(self, view: StepView) -> Decision: ...


# --- LLM ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ActionPromptStyle:
    """How the action-selection prompt looks (ARI, ReAct KB and CoT KB differ only here)."""

    n_examples: int = 2
    examples: ExampleSet = ExampleSet.OURS
    reasons_in_examples: bool = False
    react: bool = False
    show_candidates: bool = True


def supports_constrained_choice(llm: LLMBackend) -> bool:
    """Whether the backend decodes ``choices`` under a grammar (llama.cpp, or a guided OpenAI server)."""
    backend = getattr(llm, "backend", llm)
    return backend.name == "llamacpp" or bool(getattr(backend, "guided", None))


class LLMPolicy:
    """Asks the LLM for one action per step (Figure 8 prompt). A reply that chooses no offered action is
    refused with the reason and re-asked once (``retries``); refused again, the step abstains with the
    reason (the episode stops with a recorded parse failure). The step's note says what happened."""

    name = "llm"

    def __init__(
        self,
        llm: LLMBackend,
        *,
        choice_mode: str = "auto",
        allow_free_answer: bool = True,
        retries: int = 1,
        max_tokens: int = 160,
        style: ActionPromptStyle | None = None,
    ) -> None:
        self.llm = llm
        self.constrained = choice_mode == "constrained" or (
            choice_mode == "auto" and supports_constrained_choice(llm)
        )
        self.allow_free_answer = allow_free_answer
        self.retries = retries
        self.max_tokens = max_tokens
        self.style = style or ActionPromptStyle()

    def messages(self, view: StepView) -> list[Message]:
        s = self.style
        return build_action_messages(
            view.question.text,
            [a.text for a in view.candidates] if s.show_candidates else [],
            history=format_history(view.history),
            methodology=view.methodology,
            examples=format_examples(s.n_examples, with_reasons=s.reasons_in_examples, source=s.examples),
            constrained=self.constrained,
            react=s.react,
        )

    def choose(self, view: StepView) -> Decision:
        """The model's action; a refused reply (an action not offered, …) is re-asked ``retries`` times
        with the reason, then the step abstains with it. The decision's note/error says which."""
        texts = [a.text for a in view.candidates]
        if not texts:
            return Decision(None, error="no candidate actions")
        kw: dict[str, Any] = {"max_tokens": self.max_tokens}
        free = self.allow_free_answer
        if self.constrained:
            kw["choices"] = texts
        refusals: list[str] = []
        prompt = action_prompt(
            self.messages(view), texts, constrained=self.constrained, allow_free_answer=free
        )
        parsed = ask(
            self.llm,
            prompt,
            retries=self.retries,
            window=True,  # the prompt outgrew the model: the step stops; any other LLMError propagates
            on_reject=lambda exc: refusals.append(error_reason(exc)),
            **kw,
        )
        if isinstance(parsed, Refused):
            return refused_decision(parsed, refusals)
        choice = parsed.value
        if choice.index is not None:
            action = view.candidates[choice.index]
        else:
            action = Action(ANSWER, answer=choice.free_answer, free=True)
        note = f"re-asked after a refused reply: {refusals[0]}"[:300] if refusals else ""
        return Decision(action, raw=parsed.text, usage=parsed.usage, note=note)


# --- oracle ---------------------------------------------------------------------------------------------
class OraclePolicy:
    """Chooses, at each step, an action on a shortest path to an ``answer(...)`` candidate matching the gold
    answer, found by breadth-first search over the environment's candidates (within ``t_max`` actions).

    Its Hits@1 estimates the reachability of the filtered action space, which bounds any policy's Hits@1
    from above. The search is pruned to stay cheap; with ``action_space=paper`` the pruning is a heuristic
    that can miss paths, so there the figure may under-estimate the reachability. Temporal operators only
    filter the current list, so they are expanded only from lists that contain a gold answer; lookups are
    expanded only from lists that do not. With ``action_space=reference`` a lookup's relation must reach
    the gold somewhere (later lookups stay on it). With ``action_space=paper`` a lookup that misses the gold
    is expanded only when two more actions fit (another lookup and the answer), and the search first tries
    the question entities' lookups alone, then (when that fails) chained lookups from result entities too.
    ``max_nodes`` bounds each search."""

    name = "oracle"

    def __init__(self, max_nodes: int = 4000) -> None:
        self.max_nodes = max_nodes
        self._plan: list[Action] = []
        self.searched_nodes = 0
        self._gold_memo: dict[tuple[str, object], bool] = {}

    def _keeps_gold(self, kg: Any, items: Sequence[Item], gold: list[str]) -> bool:
        """Whether some item is a gold answer (memoised per value and time: lists repeat in a search)."""
        memo = self._gold_memo
        for it in items:
            key = (it.value, it.time)
            found = memo.get(key)
            if found is None:
                found = memo[key] = item_matches_gold(kg, it, gold)
            if found:
                return True
        return False

    def choose(self, view: StepView) -> Decision:
        gold = list(view.question.answers)
        if not gold:
            return Decision(None, error="the oracle needs gold answers")
        if self._plan and self._plan[0] in view.candidates:
            return Decision(self._plan.pop(0), note="oracle plan")
        path = self.search(view.env, view.state, view.t_max - view.step, gold, view.candidates)
        if path is None:
            return Decision(
                None, error="gold answer not reachable within the action space", note="unreachable"
            )
        self._plan = path[1:]
        return Decision(path[0], note="oracle plan")

    def search(
        self,
        env: ARIEnvironment,
        start: AgentState,
        budget: int,
        gold: list[str],
        first: Sequence[Action] | None = None,
    ) -> list[Action] | None:
        if env.settings.action_space is ActionSpace.PAPER:
            found = self._bfs(env, start, budget, gold, first, chain=False)
            return found if found is not None else self._bfs(env, start, budget, gold, first, chain=True)
        return self._bfs(env, start, budget, gold, first, chain=True)

    def _bfs(
        self,
        env: ARIEnvironment,
        start: AgentState,
        budget: int,
        gold: list[str],
        first: Sequence[Action] | None,
        *,
        chain: bool,
    ) -> list[Action] | None:
        kg = env.kg
        paper = env.settings.action_space is ActionSpace.PAPER
        question_entities = set(env.anchors.entities)
        queue: deque[tuple[AgentState, list[Action], Sequence[Action] | None]] = deque([(start, [], first)])
        seen = {start.key()}
        nodes = 0
        useful: dict[str | None, bool] = {}
        while queue and nodes < self.max_nodes:
            state, path, given = queue.popleft()
            nodes += 1
            cands = given if given is not None else env.candidates(state)
            for a in cands:
                if a.kind == ANSWER and a.answer is not None and value_matches_gold(kg, a.answer, gold):
                    self.searched_nodes += nodes
                    return [*path, a]
            if len(path) + 2 > budget:  # no room for another action before the answer
                continue
            has_gold = self._keeps_gold(kg, state.items, gold)
            narrowing = paper and chain and not has_gold and len(path) + 3 <= budget
            for a in cands:
                if a.kind == ANSWER or (a.is_lookup == has_gold and (a.is_lookup or not narrowing)):
                    continue  # a list with the gold is only filtered; one without it only replaced …
                if a.is_lookup and paper and not chain and not _from_question(a, question_entities):
                    continue  # first pass: no chaining through result entities
                if (
                    a.is_lookup
                    and not paper
                    and not self._relation_reaches_gold(env, a.relation, gold, useful)
                ):
                    continue  # later lookups stay on this relation: it must lead to the gold somewhere
                nxt, items = env.step(state, a)
                if not items or nxt.key() in seen:
                    continue
                lost = not a.is_lookup and not self._keeps_gold(kg, items, gold)
                if lost and not (narrowing and _identifies(env, nxt, state)):
                    continue  # … unless (paper, chaining) it names new subjects for a further lookup
                if paper and a.is_lookup and len(path) + 3 > budget and not self._keeps_gold(kg, items, gold):
                    continue  # a lookup missing the gold needs room for another lookup and the answer
                seen.add(nxt.key())
                queue.append((nxt, [*path, a], None))
        self.searched_nodes += nodes
        return None

    @staticmethod
    def _relation_reaches_gold(
        env: ARIEnvironment, relation: str | None, gold: list[str], memo: dict[str | None, bool]
    ) -> bool:
        """Whether some lookup on ``relation`` (any anchor entity, no time constraint, which contains every
        time-constrained variant) returns a gold answer."""
        found = memo.get(relation)
        if found is None:
            kg = env.kg
            ents = env.anchors.entities
            probes = [Action(k, e, relation) for e in ents for k in ("get_tail_entity", "get_head_entity")]
            probes += [Action("get_time", e, relation, other=o) for e in ents for o in ents if o != e]
            found = any(
                item_matches_gold(kg, it, gold) for p in probes if env.count(p) for it in lookup_items(kg, p)
            )
            memo[relation] = found
        return found


def _identifies(env: ARIEnvironment, nxt: AgentState, before: AgentState) -> bool:
    """Whether a filter made the list name new subjects (action_space=paper)."""
    return env.settings.action_space is ActionSpace.PAPER and len(env.subjects(nxt)) > len(
        env.subjects(before)
    )


def _from_question(action: Action, entities: set[str]) -> bool:
    return action.entity in entities and (action.other is None or action.other in entities)

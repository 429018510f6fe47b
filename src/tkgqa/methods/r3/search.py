"""R3's tree search (§3.2, Figure 1): per branch, surface an axiom, prune the sub-graph against it, try a
fact-grounded answer; on "I don't know", name the missing evidence and the entity to expand, add its pruned
facts and try again, up to ``max_depth`` expansions; a branch that ends without an answer starts a new one
with a new axiom, up to ``breadth`` branches.

Every grounded answer passes the mechanical check of
:func:`~tkgqa.methods.r3.prompts.ours.parse_grounded_answer` (cited ids must be among the facts listed in that
prompt); a reply that fails it is rejected and re-asked with the reason, and the rejections are kept in the
node. A node whose replies are all rejected counts as "I don't know" (the search goes on). LLM backend errors
propagate.

Each branch's axiom, each node's answer check and each expansion is reported as a
:class:`~tkgqa.methods.base.StepEvent` to the step reporter of the context, if any (which may cancel the
search between steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...kg.base import KGStore
from ...kg.fact import Fact
from ...prompts.ask import Asker, Parsed, Refused
from ..base import StepEvent, StepKind, report_step
from .config import LLMPick, R3Config
from .entities import EntityFinder
from .facts import FactPool, Pruning, Ranker, prune, subgraph
from .prompting import Prompter, relation_prompt
from .prompts import ours as P
from .task import Task, short_error


@dataclass
class Node:
    """One depth level of a branch."""

    depth: int
    entities: list[str]
    added: list[str] = field(default_factory=list)  # fact ids added by pruning at this level
    llm_picked: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # every fact id shown to the answer prompt
    answer: P.GroundedAnswer | None = None
    rejected: list[str] = field(default_factory=list)
    error: str = ""
    need: str | None = None
    next_entity: str | None = None
    expanded: str | None = None
    note: str = ""

    @property
    def verdict(self) -> P.Verdict:
        return self.answer.verdict if self.answer is not None else P.Verdict.UNKNOWN

    def to_dict(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "entities": list(self.entities),
            "added": list(self.added),
            "llm_picked": list(self.llm_picked),
            "facts": list(self.facts),
            "verdict": str(self.verdict),
            "steps": [s.to_dict() for s in self.answer.steps] if self.answer else [],
            "rejected": list(self.rejected),
            "error": self.error,
            "missing": {"need": self.need, "entity": self.next_entity, "expanded": self.expanded},
            "note": self.note,
        }


@dataclass
class Branch:
    index: int
    axiom: P.Axiom | None = None
    nodes: list[Node] = field(default_factory=list)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "axiom": self.axiom.to_dict() if self.axiom else None,
            "depth": len(self.nodes) - 1,
            "nodes": [n.to_dict() for n in self.nodes],
            "error": self.error,
        }


@dataclass
class SearchResult:
    branches: list[Branch]
    final: Node | None  # the node that answered (None: no answer)
    final_branch: Branch | None


class TreeSearch:
    """The search for one question (a fresh instance per question)."""

    def __init__(
        self,
        config: R3Config,
        calls: Asker,
        kg: KGStore,
        question: str,
        task: Task,
        linker: EntityFinder,
        ranker: Ranker | None,
        prompter: Prompter,
    ) -> None:
        self.cfg, self.calls, self.kg, self.question, self.task = config, calls, kg, question, task
        self.linker, self.ranker, self.prompter = linker, ranker, prompter
        self.pool = FactPool(kg)
        self.axioms: list[P.Axiom] = []
        self._steps = 0

    def _report(self, kind: StepKind, label: str, **kw: Any) -> None:
        """A :class:`StepEvent` of this search (numbered in order) to the context's step reporter."""
        report_step(StepEvent(kind, self._steps, label, **kw))
        self._steps += 1

    # --- pieces ---------------------------------------------------------------------------------------
    def _rules(self) -> list[tuple[str, str]]:
        return [(P.rule_id(i), a.rule) for i, a in enumerate(self.axioms, 1)]

    def _axiom_facts(self, facts: list[Fact]) -> list[str]:
        n = self.cfg.axiom_facts
        if not facts or n == 0:
            return []
        texts = [self.pool.text(i) for i in self.pool.add(facts)]
        kept, _ = prune(facts, texts, self.question, n, self._mode(), self.ranker)
        return self.pool.add(facts[i] for i in kept)

    def _mode(self) -> Pruning:
        return self.cfg.pruning if self.ranker is not None else Pruning.TRUNCATION

    def surface_axiom(self, facts: list[Fact], entities: list[str]) -> Parsed[P.Axiom] | Refused:
        shown = self.pool.lines(self._axiom_facts(facts))
        previous = [a.rule for a in self.axioms]
        labels = [self.kg.label(e) for e in entities]
        return self.calls.ask(
            self.prompter.axiom(self.question, labels, shown, previous), retries=self.cfg.retries
        )

    def extend(self, node: Node, candidates: list[Fact], current: list[str], axiom: P.Axiom) -> None:
        """``T ← T ∪ SGP(K, I)`` over the candidates not yet in ``current`` (so an entity expanded again
        yields its *next* top-k facts)."""
        taken = set(current)
        ids = self.pool.add(candidates)
        fresh = [(f, i) for f, i in zip(candidates, ids, strict=True) if i not in taken]
        if not fresh:
            return
        facts = [f for f, _ in fresh]
        texts = [self.pool.text(i) for _, i in fresh]
        kept, rest = prune(facts, texts, axiom.text(), self.cfg.top_k, self._mode(), self.ranker)
        node.added = [fresh[i][1] for i in kept]
        pick = LLMPick(self.cfg.preset_value("llm_pick"))
        pool_ids = [fresh[i][1] for i in rest[: self.cfg.llm_pool]]
        if pick == LLMPick.FACTS and pool_ids:
            req = self.prompter.prune(self.question, axiom.rule, self.pool.lines(pool_ids))
            picked = self.calls.ask(req, retries=self.cfg.retries)
            if isinstance(picked, Refused):
                node.note = f"fact selection unparsable: {short_error(picked.error)}"
            else:
                node.llm_picked = picked.value
        elif pick == LLMPick.RELATIONS and rest:
            rest_ids = [fresh[i][1] for i in rest]
            names = list(dict.fromkeys(self.pool.fact(i).relation for i in rest_ids))
            labels = [self.kg.label(r) for r in names]
            relations = self.calls.ask(
                relation_prompt(self.question, axiom.rule, labels), retries=self.cfg.retries
            )
            if isinstance(relations, Refused):
                node.note = f"relation selection unparsable: {short_error(relations.error)}"
            else:
                chosen = set(relations.value)
                wanted = {r for r, lab in zip(names, labels, strict=True) if lab in chosen}
                node.llm_picked = [i for i in rest_ids if self.pool.fact(i).relation in wanted][
                    : self.cfg.llm_pool
                ]
        current.extend(node.added + [i for i in node.llm_picked if i not in node.added])

    def grounded_answer(self, node: Node, current: list[str]) -> None:
        node.facts = list(current)
        req = self.prompter.answer(self.question, self._rules(), self.pool.lines(current))
        got = self.calls.ask(req, retries=self.cfg.grounding_retries, rejected=node.rejected)
        if isinstance(got, Refused):
            why = short_error(got.error)
            node.error = f"no grounded answer after {self.cfg.grounding_retries + 1} attempt(s): {why}"
        else:
            node.answer = got.value

    def missing_evidence(self, node: Node, current: list[str], chosen: list[str]) -> str | None:
        """The entity to expand next (a KG name), or ``None`` (the node's note says why)."""
        lines = self.pool.lines(current)
        proposed = " ".join(step.text for step in node.answer.steps) if node.answer is not None else ""
        asked = self.calls.ask(
            self.prompter.need(self.question, self._rules(), lines, proposed), retries=self.cfg.retries
        )
        if isinstance(asked, Refused):
            node.note = f"missing evidence unparsable: {short_error(asked.error)}"
            return None
        node.need = need = asked.value
        if need is None:
            node.note = "the model found nothing missing"
            return None
        labels = [self.kg.label(e) for e in chosen]
        picked = self.calls.ask(
            self.prompter.next_entity(self.question, need, lines, labels), retries=self.cfg.retries
        )
        if isinstance(picked, Refused):
            node.note = f"next entity unparsable: {short_error(picked.error)}"
            return None
        node.next_entity = name = picked.value
        entity = self.linker.link_name(name, self.kg)
        if entity is None:
            node.note = f"{name!r} is not a KG entity"
            return None
        node.expanded = entity
        return entity

    # --- the search ------------------------------------------------------------------------------------
    def branch(self, index: int, entities: list[str]) -> tuple[Branch, Node | None]:
        branch = Branch(index)
        chosen = list(entities)
        candidates = subgraph(self.kg, chosen, self.cfg.direction)
        surfaced = self.surface_axiom(candidates, chosen)
        if isinstance(surfaced, Refused):
            branch.error = f"axiom unparsable: {short_error(surfaced.error)}"
            self._report(
                StepKind.BRANCH, f"branch {index + 1}: {branch.error}", ok=False, data={"branch": index}
            )
            return branch, None
        branch.axiom = surfaced.value
        self._report(
            StepKind.BRANCH,
            f"branch {index + 1}: {branch.axiom.rule}",
            count=len(candidates),
            ok=True,
            data={"branch": index, "entities": [self.kg.label(e) for e in chosen]},
        )
        self.axioms.append(branch.axiom)
        current: list[str] = []
        node = previous = Node(0, list(chosen))
        self.extend(node, candidates, current, branch.axiom)
        for depth in range(self.cfg.max_depth + 1):
            if depth:
                node = Node(depth, list(chosen))
                entity = previous.expanded
                assert entity is not None
                if entity not in chosen:
                    chosen.append(entity)
                    node.entities = list(chosen)
                self.extend(node, subgraph(self.kg, [entity], self.cfg.direction), current, branch.axiom)
                if not node.added and not node.llm_picked:
                    node.note = f"no new facts about {entity!r}"
                    branch.nodes.append(node)
                    break
            self.grounded_answer(node, current)
            branch.nodes.append(node)
            self._report_check(index, node)
            if node.verdict != P.Verdict.UNKNOWN:
                return branch, node
            if depth == self.cfg.max_depth:
                break
            entity = self.missing_evidence(node, current, chosen)
            self._report(
                StepKind.EXPAND,
                f"expand {self.kg.label(entity)}" if entity is not None else f"stop: {node.note}",
                ok=entity is not None,
                data={"branch": index, "depth": depth, "need": node.need},
            )
            if entity is None:
                break
            previous = node
        return branch, None

    def _report_check(self, index: int, node: Node) -> None:
        verdict = node.verdict
        outcome = node.error or (
            f"{len(node.rejected)} reply(ies) rejected by the citation check"
            if node.rejected
            else "check passed"
        )
        self._report(
            StepKind.CHECK,
            f"branch {index + 1}, depth {node.depth}: {verdict} ({outcome})",
            count=len(node.facts),
            ok=node.answer is not None and verdict != P.Verdict.UNKNOWN,
            data={
                "branch": index,
                "depth": node.depth,
                "verdict": str(verdict),
                "rejected": len(node.rejected),
                "error": node.error,
            },
        )

    def run(self, entities: list[str]) -> SearchResult:
        branches: list[Branch] = []
        for b in range(self.cfg.breadth):
            branch, final = self.branch(b, entities)
            branches.append(branch)
            if final is not None:
                return SearchResult(branches, final, branch)
        return SearchResult(branches, None, None)

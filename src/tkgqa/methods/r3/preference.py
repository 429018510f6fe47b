"""R3 on preference matching (§4.1; §3.2.4: "for multiple-choice queries, the process is repeated for each
option"): an axiom is surfaced for the request — its premises are the preferences stated in it and the
requirements that follow from the user's personal facts — then every option is checked premise by premise
against the facts about the user and that option, each check citing the facts it rests on. ``choice_rule``:
``first`` (paper: "repeated for each option until an option satisfies all premises" — the options in their
order, stopping at the first that satisfies every premise; when none does, every option has been judged and
they are ranked as below) or ``rank`` (ours: every option judged; the one that violates fewest premises and
satisfies most is chosen). The trace says, per option judged, which premises it satisfies or violates and
why, and which rule chose.

Two judges: ``llm`` (the option prompt, citations checked like the grounded answer) and ``embedding``
(offline: a premise counts as satisfied when its embedding is within ``judge_threshold`` cosine of the
option's description and facts; options are ranked by mean premise similarity — the scoring path that runs
without an LLM, used for the offline Recipe-MPR measurement with given premises).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...datasets.base import Question
from ...datasets.recipe_mpr import recipe_entity
from ...errors import ParseError
from ...kg.base import KGStore
from ...kg.fact import Fact
from ...prompts.ask import Asker, Refused
from .config import ChoiceRule, PremiseJudge, R3Config
from .facts import FactPool, Ranker
from .prompting import Prompter, option_prompt
from .prompts import ours as P
from .task import Option, Task, short_error


@dataclass
class OptionResult:
    option: Option
    facts: list[str] = field(default_factory=list)
    checks: list[P.PremiseCheck] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    error: str = ""

    def count(self, status: P.PremiseStatus) -> int:
        return sum(c.status == status for c in self.checks)

    def satisfies_all(self, n_premises: int) -> bool:
        """Every premise judged satisfied."""
        return len(self.checks) == n_premises > 0 and self.count(P.PremiseStatus.SATISFIED) == n_premises

    @property
    def mean_score(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    def key(self, index: int) -> tuple[int, int, float, int]:
        """Sort key: fewest violations, most satisfied premises, highest similarity, first listed."""
        return (
            self.count(P.PremiseStatus.VIOLATED),
            -self.count(P.PremiseStatus.SATISFIED),
            -self.mean_score,
            index,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "option": self.option.id,
            "text": self.option.text,
            "facts": list(self.facts),
            "checks": [c.to_dict() for c in self.checks],
            "scores": [round(s, 4) for s in self.scores],
            "satisfied": self.count(P.PremiseStatus.SATISFIED),
            "violated": self.count(P.PremiseStatus.VIOLATED),
            "rejected": list(self.rejected),
            "error": self.error,
        }


def option_facts(kg: KGStore, option: Option) -> list[Fact]:
    """The facts about an option: those of ``recipe <id>`` (the Recipe-MPR loaders' naming)."""
    return kg.facts(subject=recipe_entity(option.id))


def user_facts(kg: KGStore, question: Question) -> list[Fact]:
    """The personal KG of the user asking (``extra["user"]``, else the question's given entities)."""
    users = [str(question.extra.get("user"))] if question.extra.get("user") else list(question.entities)
    return [f for u in users for f in kg.facts(subject=u)]


def score_options(premises: Sequence[str], option_texts: Sequence[str], ranker: Ranker) -> list[list[float]]:
    """Cosine similarity of every premise to every option text: ``scores[option][premise]``."""
    return [ranker.scores(text, list(premises)) for text in option_texts]


def choose(results: Sequence[OptionResult]) -> int | None:
    """Index of the chosen option (see :meth:`OptionResult.key`); ``None`` when nothing was judged."""
    if not results or all(not r.checks and not r.scores for r in results):
        return None
    return min(range(len(results)), key=lambda i: results[i].key(i))


class PreferenceMatcher:
    def __init__(
        self,
        config: R3Config,
        calls: Asker | None,
        kg: KGStore,
        question: Question,
        task: Task,
        ranker: Ranker | None,
        prompter: Prompter,
    ) -> None:
        self.cfg, self.calls, self.kg, self.question, self.task, self.ranker = (
            config,
            calls,
            kg,
            question,
            task,
            ranker,
        )
        self.prompter = prompter
        self.pool = FactPool(kg)
        self.rule_used = ""  # how the option was chosen (for the trace)

    def option_texts(self) -> list[str]:
        """Each option as the one-prompt choice lists it: its text, then its facts."""
        out = []
        for option in self.task.options:
            facts = [self.pool.text(i) for i in self.pool.add(option_facts(self.kg, option))]
            out.append(option.text + (": " + "; ".join(facts) if facts else ""))
        return out

    def surface(self) -> P.Axiom:
        if self.calls is None:
            raise ParseError("no LLM to surface the axiom", expected="an LLM")
        personal = self.pool.add(user_facts(self.kg, self.question))
        users = list(dict.fromkeys(self.kg.label(f.subject) for f in user_facts(self.kg, self.question)))
        prompt = self.prompter.preference_axiom(
            self.question.text, users, self.pool.lines(personal), self.option_texts()
        )
        surfaced = self.calls.ask(prompt, retries=self.cfg.retries)
        if isinstance(surfaced, Refused):
            raise surfaced.error  # the caller abstains ("axiom unparsable")
        return surfaced.value

    def judge(self, option: Option, premises: Sequence[str]) -> OptionResult:
        facts = user_facts(self.kg, self.question) + option_facts(self.kg, option)
        result = OptionResult(option, self.pool.add(facts))
        if self.cfg.judge == PremiseJudge.EMBEDDING:
            if self.ranker is None:
                raise ParseError("the embedding judge needs an embedder", expected="embedder=…")
            text = " ".join([option.text, *(self.pool.text(i) for i in result.facts)])
            result.scores = score_options(premises, [text], self.ranker)[0]
            result.checks = [
                P.PremiseCheck(
                    n, P.PremiseStatus.SATISFIED if s >= self.cfg.judge_threshold else P.PremiseStatus.UNKNOWN
                )
                for n, s in enumerate(result.scores, 1)
            ]
            return result
        assert self.calls is not None
        prompt = option_prompt(self.question.text, premises, option.text, self.pool.lines(result.facts))
        checks = self.calls.ask(prompt, retries=self.cfg.grounding_retries, rejected=result.rejected)
        if isinstance(checks, Refused):
            result.error = short_error(checks.error)
        else:
            result.checks = checks.value
        return result

    def run(
        self, premises: Sequence[str] | None = None
    ) -> tuple[P.Axiom | None, list[OptionResult], int | None]:
        """``(axiom, per-option results, chosen index)``; ``premises`` given → no axiom is surfaced."""
        axiom = None
        if premises is None:
            axiom = self.surface()
            premises = axiom.premises
        rule = ChoiceRule(self.cfg.preset_value("choice_rule"))
        if rule == ChoiceRule.SELECT and self.cfg.judge == PremiseJudge.LLM and axiom is not None:
            picked = self.select(axiom)
            if picked is not None:
                return axiom, picked[0], picked[1]
            rule = ChoiceRule.FIRST
        first = rule != ChoiceRule.RANK
        results: list[OptionResult] = []
        for option in self.task.options:
            results.append(self.judge(option, premises))
            if first and results[-1].satisfies_all(len(premises)):
                self.rule_used = "first option satisfying every premise"
                return axiom, results, len(results) - 1
        self.rule_used = (
            "no option satisfies every premise: ranked (fewest violated, most satisfied)"
            if first
            else "ranked (fewest violated, most satisfied)"
        ) + self.rule_used
        return axiom, results, choose(results)

    def select(self, axiom: P.Axiom) -> tuple[list[OptionResult], int | None] | None:
        """The authors' one-prompt choice among every option (``None``: their prompt is not loaded, so the
        options are judged one by one, said in :attr:`rule_used`)."""
        assert self.calls is not None
        prompt = self.prompter.choice(self.question.text, [axiom.rule], self.option_texts())
        if prompt is None:
            self.rule_used = (
                " (select: the authors' Recipe-MPR choice prompt is not loaded; judged one by one)"
            )
            return None
        results = [OptionResult(option) for option in self.task.options]
        asked = self.calls.ask(prompt, retries=self.cfg.retries)
        if isinstance(asked, Refused):
            why = short_error(asked.error)
            self.rule_used = f"one choice among every option (the authors' prompt): unparsable ({why})"
            for r in results:
                r.error = why
            return results, None
        self.rule_used = "one choice among every option (the authors' Recipe-MPR prompt)"
        return results, asked.value

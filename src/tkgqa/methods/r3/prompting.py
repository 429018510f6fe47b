"""The prompts of one R3 run in the style its settings ask for: each request built with its parser, so the
search and the preference matcher never branch on the style.

* axiom — ``axiom_prompt=paper``: the paper's instruction, the authors' input layout and demonstrations, a
  hint reply kept as the guidance; ``ours``: our instruction with a Premises/Conclusion block.
* pruning (the LLM's pick of facts) and answer — ``answer_prompt=paper``: facts listed ``1- (h, r, t)``,
  the pruning LLM copies triples (after the authors' few-shot examples), the answer cites facts in prose
  ("Fact 4"); ``ours``: ``[F3]`` ids.
* entities, missing evidence, next entity, and Recipe-MPR's rule and choice — the authors' released prompt
  of the step when the run uses the authors' prompts (:class:`~.demos.DemoSet` has it), else ours.

Either way a citation of a fact that was not listed is a ParseError (re-asked by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...prompts.base import Bound
from .config import PromptStyle, R3Config
from .demos import DemoSet, Stage
from .prompts import ours as P
from .prompts import paper as PP

CLAIM_LEAD = "Claim (answer Yes if it is correct, No if it is not)"


class Prompter:
    """Requests of one question (``claim``: the query is a claim to verify)."""

    def __init__(self, config: R3Config, demos: DemoSet, *, claim: bool = False) -> None:
        self.axiom_style = PromptStyle(config.preset_value("axiom_prompt"))
        self.answer_style = PromptStyle(config.preset_value("answer_prompt"))
        self.require_citation = bool(config.preset_value("require_citation"))
        self.demos, self.claim = demos, claim

    def axiom(
        self,
        question: str,
        entities: Sequence[str],
        facts: Sequence[tuple[str, str]],
        previous: Sequence[str] = (),
    ) -> Bound[P.Axiom]:
        if self.axiom_style == PromptStyle.OURS:
            return Bound("r3.axiom", P.build_axiom_messages(question, facts, previous), P.parse_axiom)
        prompt = self.demos.prompt(Stage.AXIOM, self.claim)
        lead = prompt.lead if prompt.name != "ours" or not self.claim else CLAIM_LEAD
        messages = PP.build_paper_axiom_messages(
            question,
            entities,
            [text for _, text in facts],
            demos=prompt.demos,
            system=prompt.system,
            lead=lead,
            previous=previous,
        )
        return Bound("r3.axiom", messages, lambda t: P.parse_axiom(t, hint_ok=True))

    def prune(self, question: str, rule: str, facts: Sequence[tuple[str, str]]) -> Bound[list[str]]:
        """The LLM's pick among ``facts``: the ids it chose (only listed ones)."""
        ids = [i for i, _ in facts]
        if self.answer_style == PromptStyle.OURS:
            valid = set(ids)
            return Bound(
                "r3.prune",
                P.build_prune_messages(question, rule, facts),
                lambda t: P.parse_fact_selection(t, valid),
            )
        texts = [text for _, text in facts]
        lead = CLAIM_LEAD if self.claim else "Question"

        def parse(text: str) -> list[str]:
            return [ids[i] for i in PP.parse_copied_facts(text, texts)]

        authors = self.demos.authors(Stage.PRUNE, self.claim)
        if authors is None:
            return Bound("r3.prune", PP.build_paper_prune_messages(question, rule, texts, lead=lead), parse)
        messages = PP.build_paper_prune_messages(
            question, rule, texts, lead=authors.lead, demos=authors.demos, system=authors.system
        )
        return Bound("r3.prune", messages, parse)

    def entities(self, question: str) -> Bound[list[str]]:
        """``LLM_E(q)``: the question's entity names (the authors' ``identify_entities`` when loaded)."""
        authors = self.demos.authors(Stage.ENTITIES, self.claim)
        if authors is None:
            return entity_prompt(question)
        messages = PP.build_paper_entity_messages(
            question, demos=authors.demos, system=authors.system, lead=authors.lead
        )
        return Bound("r3.entities", messages, P.parse_entities)

    def need(
        self,
        question: str,
        rules: Sequence[tuple[str, str]],
        facts: Sequence[tuple[str, str]],
        proposed: str = "",
    ) -> Bound[str | None]:
        """The information still missing (``None``: nothing); ``proposed``: the uncertain answer."""
        authors = self.demos.authors(Stage.NEED, self.claim)
        if authors is None:
            return need_prompt(question, rules, facts)
        messages = PP.build_paper_need_messages(
            question,
            [text for _, text in rules],
            [text for _, text in facts],
            proposed,
            demos=authors.demos,
            system=authors.system,
            lead=authors.lead,
        )
        return Bound("r3.need", messages, lambda t: P.parse_need(PP.strip_answer_lead(t)))

    def next_entity(
        self, question: str, need: str, facts: Sequence[tuple[str, str]], chosen: Sequence[str]
    ) -> Bound[str]:
        """The entity to expand next (not one of ``chosen``)."""
        authors = self.demos.authors(Stage.NEXT_ENTITY, self.claim)
        if authors is None:
            return next_entity_prompt(question, need, facts, chosen)
        messages = PP.build_paper_next_entity_messages(
            question,
            need,
            [text for _, text in facts],
            chosen,
            demos=authors.demos,
            system=authors.system,
            lead=authors.lead,
        )
        return Bound("r3.next_entity", messages, lambda t: P.parse_next_entity(t, chosen))

    def preference_axiom(
        self, query: str, users: Sequence[str], facts: Sequence[tuple[str, str]], options: Sequence[str]
    ) -> Bound[P.Axiom]:
        """Recipe-MPR's rule about the user: the authors' ``MPR_RRR_inference_rule_v4`` when loaded, else the
        axiom prompt of the run's style over the request."""
        authors = self.demos.authors(Stage.PREFERENCE_AXIOM, False)
        if authors is None:
            request = (
                "Does a recipe satisfy this request, given what is known about the person asking? " + query
            )
            return self.axiom(request, users, facts)
        messages = PP.build_paper_preference_axiom_messages(
            query, [text for _, text in facts], options, demos=authors.demos, system=authors.system
        )
        return Bound("r3.axiom", messages, lambda t: P.parse_axiom(t, hint_ok=True))

    def choice(self, query: str, rules: Sequence[str], options: Sequence[str]) -> Bound[int] | None:
        """Recipe-MPR's one choice among ``options`` with the authors' ``MPR_RRR_decide_answer`` (``None``
        when it is not loaded: the options are judged one by one)."""
        authors = self.demos.authors(Stage.PREFERENCE_CHOICE, False)
        if authors is None:
            return None
        messages = PP.build_paper_choice_messages(
            query, rules, options, demos=authors.demos, system=authors.system
        )
        n = len(options)
        return Bound("r3.choice", messages, lambda t: PP.parse_selected_recipe(t, n))

    def answer(
        self, question: str, rules: Sequence[tuple[str, str]], facts: Sequence[tuple[str, str]]
    ) -> Bound[P.GroundedAnswer]:
        fact_ids = [i for i, _ in facts]
        rule_ids = [r for r, _ in rules]
        need = self.require_citation
        if self.answer_style == PromptStyle.OURS:
            valid, known = set(fact_ids), set(rule_ids)
            return Bound(
                "r3.answer",
                P.build_answer_messages(question, rules, facts, claim=self.claim),
                lambda t: P.parse_grounded_answer(t, valid, known, require_fact=need),
            )
        prompt = self.demos.prompt(Stage.ANSWER, self.claim)
        lead = prompt.lead if prompt.name != "ours" or not self.claim else CLAIM_LEAD
        texts = [text for _, text in facts]
        messages = PP.build_paper_answer_messages(
            question,
            [text for _, text in rules],
            texts,
            demos=prompt.demos,
            system=prompt.system,
            lead=lead,
        )
        return Bound(
            "r3.answer",
            messages,
            lambda t: PP.parse_paper_answer(t, fact_ids, rule_ids, fact_texts=texts, require_fact=need),
        )


# --- the prompts that look the same in every style ---------------------------------------------------
def entity_prompt(question: str) -> Bound[list[str]]:
    """``LLM_E(q)``: the question's entity names."""
    return Bound("r3.entities", P.build_entity_messages(question), P.parse_entities)


def relation_prompt(question: str, rule: str, relations: Sequence[str]) -> Bound[list[str]]:
    """The LLM's pick among ``relations`` (only listed ones)."""
    return Bound(
        "r3.relations",
        P.build_relation_messages(question, rule, relations),
        lambda t: P.parse_relation_selection(t, relations),
    )


def need_prompt(
    question: str, rules: Sequence[tuple[str, str]], facts: Sequence[tuple[str, str]]
) -> Bound[str | None]:
    """The information still missing (``None``: nothing)."""
    return Bound("r3.need", P.build_need_messages(question, rules, facts), P.parse_need)


def next_entity_prompt(
    question: str, need: str, facts: Sequence[tuple[str, str]], chosen: Sequence[str]
) -> Bound[str]:
    """The entity to expand next (not one of ``chosen``)."""
    return Bound(
        "r3.next_entity",
        P.build_next_entity_messages(question, need, facts, chosen),
        lambda t: P.parse_next_entity(t, chosen),
    )


def option_prompt(
    request: str, premises: Sequence[str], option: str, facts: Sequence[tuple[str, str]]
) -> Bound[list[P.PremiseCheck]]:
    """The premise checks of one option (citing only the listed ``facts``)."""
    valid = {i for i, _ in facts}
    return Bound(
        "r3.option",
        P.build_option_messages(request, premises, option, facts),
        lambda t: P.parse_premise_checks(t, len(premises), valid),
    )

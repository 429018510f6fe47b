"""The KB-interaction baselines, built on ARI's agent with its methodologies switched off.

* ``react_kb`` — ReAct (Yao et al., 2023) with ARI's knowledge-based module: the same filtered candidate
  actions are listed, the model writes a thought then picks one (free output, parsed like ARI's); no
  methodology.
* ``cot_kb`` — chain-of-thought with KB interaction: worked examples with their reasoning; no action list —
  the model writes each action itself from the linked entities and relation names (grounded to the nearest
  executable action of the same function) and sees the result; no methodology.
"""

from __future__ import annotations

from typing import Any

from ...errors import ConfigError
from ...llm import Message
from ...prompts.ask import Refused, ask
from .actions import ANSWER, Action
from .method import ARIMethod
from .policies import ActionPromptStyle, Decision, LLMPolicy, Policy, StepView, refused_decision
from .prompts import (
    build_action_messages,
    build_schema_block,
    format_examples,
    format_history,
    written_action_prompt,
)


def _agent_overrides(method: ARIMethod, overrides: dict[str, Any], **fixed: Any) -> dict[str, Any]:
    """An LLM agent without methodologies: policy ``llm`` only (another is an error), no memory."""
    policy = overrides.pop("policy", None) or "llm"
    if policy != "llm":
        raise ConfigError(f"this baseline is an LLM agent; policy {policy!r} is not available (use 'ari')")
    overrides.pop("memory", None)
    method.memory = None
    return {**overrides, "no_guidance": True, **fixed}


class ReActKB(ARIMethod):
    """ARI's candidates and loop, ReAct prompt, no methodology."""

    name = "react_kb"
    style = ActionPromptStyle(react=True)

    def prepare(self, overrides: dict[str, Any]) -> dict[str, Any]:
        overrides.setdefault("choice_mode", "free")  # ReAct writes a thought before the action
        return _agent_overrides(self, overrides)


class CoTPolicy(LLMPolicy):
    """Few-shot reasoning examples; the model writes the action, which is grounded to an executable one."""

    name = "cot"

    def messages(self, view: StepView) -> list[Message]:
        anchors = view.env.anchors
        relations = [view.state.relation] if view.state.relation else anchors.relations()
        ranked = view.env.rank([Action("get_tail_entity", anchors.entities[0], r) for r in relations])
        names = [a.relation or "" for a in ranked[: max(1, view.env.settings.top_k)]]
        schema = build_schema_block(anchors.entities, names, [t.iso() for t in anchors.times])
        if view.state.items:
            schema += "\nAnswers you may give: " + ", ".join(
                a.text for a in view.candidates if a.kind == ANSWER
            )
        return build_action_messages(
            view.question.text,
            [],
            history=format_history(view.history),
            examples=format_examples(self.style.n_examples, with_reasons=True, source=self.style.examples),
            schema=schema,
        )

    def choose(self, view: StepView) -> Decision:
        actions = [*view.env.enumerate(view.state), *(a for a in view.candidates if a.kind == ANSWER)]
        texts = list(dict.fromkeys(a.text for a in actions))
        by_text = {a.text: a for a in actions}
        if not texts:
            return Decision(None, error="no executable actions")

        prompt = written_action_prompt(self.messages(view), texts)
        # window: the prompt outgrew the model, the step stops; any other LLMError propagates
        parsed = ask(self.llm, prompt, retries=self.retries, window=True, max_tokens=self.max_tokens)
        if isinstance(parsed, Refused):
            return refused_decision(parsed)
        choice = parsed.value
        if choice.index is not None:
            return Decision(
                by_text[texts[choice.index]], raw=parsed.text, usage=parsed.usage, note="grounded"
            )
        action = Action(ANSWER, answer=choice.free_answer, free=True)
        return Decision(action, raw=parsed.text, usage=parsed.usage)


class CoTKB(ARIMethod):
    """Examples with step-by-step reasoning and KB interaction; the model writes its own actions."""

    name = "cot_kb"
    style = ActionPromptStyle(reasons_in_examples=True, show_candidates=False)

    def prepare(self, overrides: dict[str, Any]) -> dict[str, Any]:
        overrides.setdefault("n_examples", 3)
        # examples with their reasoning (the paper's 9 are not given)
        overrides.setdefault("examples", "ours")
        return _agent_overrides(self, overrides, choice_mode="free")

    def make_policy(self, question: Any, kg: Any) -> Policy:
        assert self.llm is not None
        c = self.config
        assert c.retries is not None
        return CoTPolicy(
            self.llm,
            choice_mode="free",
            retries=c.retries,
            max_tokens=c.max_tokens,
            style=self.prompt_style(),
        )

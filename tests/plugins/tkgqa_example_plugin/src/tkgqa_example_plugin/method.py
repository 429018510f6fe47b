"""``echo_first_entity``: answers with the KG entity mentioned first in the question."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tkgqa.datasets import Question
from tkgqa.kg import KGStore
from tkgqa.methods.base import Answer, Method, MethodConfig, merge_config


class EchoConfig(MethodConfig):
    max_evidence: int = Field(default=3, ge=0, description="facts of the entity returned as evidence")


class EchoFirstEntity(Method):
    """Answers with the first KG entity named in the question (the question's annotated entities first)."""

    name: ClassVar[str] = "echo_first_entity"

    def __init__(self, config: EchoConfig | None = None, **overrides: object) -> None:
        self.config: EchoConfig = merge_config(EchoConfig, config, overrides)

    def reason(self, question: Question, kg: KGStore) -> Answer:
        entity = question.entities[0] if question.entities else self._first_mention(question.text, kg)
        if entity is None:
            return Answer.abstain("no KG entity is named in the question")
        evidence = kg.facts(subject=entity)[: self.config.max_evidence]
        return Answer([kg.label(entity)], evidence=list(evidence), trace=[{"entity": entity}])

    @staticmethod
    def _first_mention(text: str, kg: KGStore) -> str | None:
        lowered = text.lower()
        best: tuple[int, int, str] | None = None
        for entity in kg.entities:
            label = kg.label(entity).lower()
            at = lowered.find(label) if label else -1
            if at >= 0 and (best is None or (at, -len(label)) < best[:2]):
                best = (at, -len(label), entity)
        return best[2] if best else None

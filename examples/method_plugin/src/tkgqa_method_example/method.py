"""``example_timeline``: answers with the object of the earliest (``paper``) or latest (``ours``) fact about
the first KG entity the question names. Small on purpose: it shows the shape every method has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from tkgqa.datasets import Question
from tkgqa.kg import KGStore
from tkgqa.methods.base import Answer, Method
from tkgqa.outcomes import ResultRow
from tkgqa.trace import TraceStep

from .config import Order, TimelineConfig


# A trace step is a frozen dataclass: its JSON form (in rows, the API) is the tag pair, then its fields.
@dataclass(frozen=True, eq=False, repr=False)
class EntityStep(TraceStep):
    """The entity the question names (``{"step": "entity", "entity": ...}``)."""

    tag = ("step", "entity")
    entity: str


@dataclass(frozen=True, eq=False, repr=False)
class FactStep(TraceStep):
    """The fact the answer comes from, as data."""

    tag = ("step", "fact")
    fact: Mapping[str, Any]


class Timeline(Method):
    """Answers with the object of the first or last fact of the entity the question names first."""

    name: ClassVar[str] = "example_timeline"
    config_class: ClassVar[type[TimelineConfig]] = TimelineConfig

    # The base class does the rest: `Timeline(config, **overrides)`, `"example_timeline:ours"` and
    # `--method-option key=value` are validated against `config_class`, the preset fills unset settings
    # (`self.config` holds the settings in force), and `describe()` records them with the deviations.
    # A method implements `reason`; `answer` (final, in the base) wraps it: the LLM context of the question,
    # the method's name on its step events, the check that an `Answer` comes back.

    def reason(self, question: Question, kg: KGStore) -> Answer:
        entity = question.entities[0] if question.entities else self._first_mention(question.text, kg)
        if entity is None:  # declining says why; an infrastructure failure would raise instead
            return Answer.abstain("no KG entity is named in the question")
        facts = sorted(kg.facts(subject=entity), key=lambda f: f.interval.span)  # (first day, last day)
        if not facts:
            return Answer.abstain(f"the KG has no fact about {kg.label(entity)}")
        chosen = facts[0] if self.config.order is Order.EARLIEST else facts[-1]
        evidence = [chosen, *(f for f in facts if f != chosen)][: self.config.max_evidence]
        trace = [EntityStep(entity), FactStep(chosen.to_dict())]
        return Answer([kg.label(chosen.object)], evidence=evidence, trace=trace)

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """Aggregates of a run's ``results.jsonl`` rows, written to ``report.json`` as ``method_metrics``."""
        answered = [row for row in rows if row.predictions]
        shown = sum(len(row.evidence) for row in answered)
        return {"answered": len(answered), "evidence_per_answer": shown / len(answered) if answered else 0.0}

    def _first_mention(self, text: str, kg: KGStore) -> str | None:
        """The entity whose label appears first in ``text`` (the longest label at a tie). A real method takes
        its linking from ``tkgqa.query``; a plain scan keeps this example short."""
        lowered = text.lower()
        best: tuple[int, int, str] | None = None
        for entity in kg.entities:
            label = kg.label(entity).lower()
            at = lowered.find(label) if len(label) >= self.config.min_label_chars else -1
            if at >= 0 and (best is None or (at, -len(label)) < best[:2]):
                best = (at, -len(label), entity)
        return best[2] if best else None

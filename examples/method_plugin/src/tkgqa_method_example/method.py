"""``example_timeline``: answers with the object of the earliest (``paper``) or latest (``ours``) fact about
the first KG entity the question names. Small on purpose: it shows the shape every method has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from tkgqa.datasets import Question
from tkgqa.kg import KGStore
from tkgqa.methods.base import Answer, Method, merge_config

from .config import Order, TimelineConfig


class Timeline(Method):
    """Answers with the object of the first or last fact of the entity the question names first."""

    name: ClassVar[str] = "example_timeline"
    config_class: ClassVar[type[TimelineConfig]] = TimelineConfig

    def __init__(self, config: TimelineConfig | None = None, **overrides: object) -> None:
        # `overrides` are settings (from `--method "name:key=value"`, `--method-option` or a request's
        # options); merge_config validates them. effective() fills the preset's values in.
        self.config: TimelineConfig = merge_config(TimelineConfig, config, overrides).effective()

    def answer(self, question: Question, kg: KGStore) -> Answer:
        entity = question.entities[0] if question.entities else self._first_mention(question.text, kg)
        if entity is None:  # declining says why; an infrastructure failure would raise instead
            return Answer.abstain("no KG entity is named in the question")
        facts = sorted(kg.facts(subject=entity), key=lambda f: f.interval.span)  # (first day, last day)
        if not facts:
            return Answer.abstain(f"the KG has no fact about {kg.label(entity)}")
        chosen = facts[0] if self.config.order is Order.EARLIEST else facts[-1]
        evidence = [chosen, *(f for f in facts if f != chosen)][: self.config.max_evidence]
        trace = [{"step": "entity", "entity": entity}, {"step": "fact", "fact": chosen.to_dict()}]
        return Answer([kg.label(chosen.object)], evidence=evidence, trace=trace)

    def describe(self) -> dict[str, Any]:
        """What ``report.json`` records: the settings in force, the preset, how it departs from the paper."""
        return {
            "method": self.name,
            "config": self.config.model_dump(mode="json"),
            "preset": self.config.preset.value,
            "deviations": self.config.preset_deviations(),
        }

    def report_metrics(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Aggregates of a run's ``results.jsonl`` rows, written to ``report.json`` as ``method_metrics``."""
        answered = [row for row in rows if row["predictions"]]
        shown = sum(len(row["evidence"]) for row in answered)
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

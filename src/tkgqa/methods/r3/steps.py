"""The steps of an R3 (and KAPING / chain-of-thought) answer's trace (issue #30): one frozen dataclass per
kind, written as today's JSON.

R3 on a query: :class:`EntitiesStep`, :class:`TreeStep` (``r3_tree``), :class:`FactsStep`, then
:class:`GroundingStep` and :class:`ExplanationStep` (or only the explanation when it abstains). R3 on a
preference query: :class:`PreferenceStep`, :class:`FactsStep`, :class:`ChoiceGroundingStep`,
:class:`ExplanationStep`. The baselines: :class:`RetrievalStep` (KAPING's facts) and
:class:`CitationStep` (the ids KAPING cited). A reply that cannot be read is a
:class:`~tkgqa.methods.base.RefusedStep` (``{"step": "parse_failure" | "preference", "error": …}``).

Nested records (facts, branches, options, answer steps) are kept as their JSON data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...trace import TraceStep, step_field

#: a fact as the trace writes it (``subject``, ``relation``, ``object``, time fields; ``id`` / ``text``)
FactRecord = Mapping[str, Any]


@dataclass(frozen=True, eq=False, repr=False)
class EntitiesStep(TraceStep):
    """The question's entities as each extractor found them and the union used (``llm_error``: only when
    the LLM extractor's reply was refused)."""

    tag = ("step", "entities")
    linker: list[str]
    llm_names: list[str]
    llm: list[str]
    unlinked: list[str]
    union: list[str]
    llm_error: str = step_field(omit_default=True, default="")


@dataclass(frozen=True, eq=False, repr=False)
class TreeStep(TraceStep):
    """The search tree: its limits, every branch (axiom, nodes), where it was answered, the verdict."""

    tag = ("step", "r3_tree")
    max_depth: int
    breadth: int
    branches: list[Mapping[str, Any]]
    answered_at: Mapping[str, int] | None
    verdict: str


@dataclass(frozen=True, eq=False, repr=False)
class FactsStep(TraceStep):
    """Every fact shown to the LLM: ``{id: fact + "text"}``."""

    tag = ("step", "facts")
    table: Mapping[str, FactRecord]


@dataclass(frozen=True, eq=False, repr=False)
class GroundingStep(TraceStep):
    """The final answer's grounding: its verdict, the facts it cites, its reasoning steps."""

    tag = ("step", "grounding")
    verdict: str
    cited_facts: list[FactRecord]
    steps: list[Mapping[str, Any]]
    n_fact_steps: int


@dataclass(frozen=True, eq=False, repr=False)
class ChoiceGroundingStep(TraceStep):
    """A preference answer's grounding: the facts its option's premise checks cite (``verdict``:
    ``choice``)."""

    tag = ("step", "grounding")
    verdict: str
    cited_facts: list[FactRecord]


@dataclass(frozen=True, eq=False, repr=False)
class CitationStep(TraceStep):
    """A baseline's citations (KAPING's ``[F…]``): the listed facts cited, and the ids that are none of
    them."""

    tag = ("step", "grounding")
    cited_facts: list[FactRecord]
    unknown_ids: list[str]


@dataclass(frozen=True, eq=False, repr=False)
class ExplanationStep(TraceStep):
    """The explanation's lines: the axiom, the steps with their cited facts, the verdict (``tkgqa ask``
    shows them under the answer)."""

    tag = ("step", "explanation")
    lines: list[str]

    def shown_lines(self) -> list[str]:
        return [str(line) for line in self.lines]


@dataclass(frozen=True, eq=False, repr=False)
class PreferenceStep(TraceStep):
    """Preference matching: the premises (the axiom), the judge, how the option was chosen, every option's
    checks, the chosen option's id."""

    tag = ("step", "preference")
    axiom: Mapping[str, Any]
    judge: str
    choice_rule: str
    options: list[Mapping[str, Any]]
    chosen: str | None


@dataclass(frozen=True, eq=False, repr=False)
class RetrievalStep(TraceStep):
    """The facts a baseline put in its prompt (KAPING's top-k): ``{id: fact + "text"}``."""

    tag = ("step", "retrieval")
    facts: Mapping[str, FactRecord]


#: the steps that say which facts an answer cites (:func:`.grounding.grounding_of`)
CitingStep = GroundingStep | ChoiceGroundingStep | CitationStep

__all__ = [
    "ChoiceGroundingStep",
    "CitationStep",
    "CitingStep",
    "EntitiesStep",
    "ExplanationStep",
    "FactRecord",
    "FactsStep",
    "GroundingStep",
    "PreferenceStep",
    "RetrievalStep",
    "TreeStep",
]

"""What the MCP tools return: typed, documented outputs (the SDK publishes each as the tool's output schema).
Facts reuse the service's :class:`~tkgqa.service.models.FactOut`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..service.models import FactOut, NeighborsOut, UsageOut

__all__ = ["AppendOut", "AskOut", "FactOut", "FactPage", "NeighborsOut", "TimelineOut"]

#: The most evidence facts and trace lines an ``ask`` result carries.
MAX_EVIDENCE = 50
MAX_STEPS = 50
MAX_STEP_CHARS = 300


class AskOut(BaseModel):
    """The answer to one question: ranked answers with the KG facts that support them, the symbolic program
    (when the method writes one) and a summary of the method's steps. An abstention is an answer:
    ``abstained`` with ``reason`` (and ``missing``: what the KG lacks) and no ``answers``."""

    question: str
    method: str = Field(description="The method spec that answered.")
    llm: str | None = Field(description="The LLM used (None for methods without one).")
    kg: str | None = Field(description="The KG's name.")
    as_of: str | None = Field(description="The date the KG was cut at (None: all of it).")
    answers: list[str] = Field(description="Ranked, best first; empty when the method abstained.")
    evidence: list[FactOut] = Field(description=f"The facts the answer cites (at most {MAX_EVIDENCE}).")
    evidence_total: int = Field(description="How many facts the answer cites in all.")
    abstained: bool
    reason: str = Field(description="Why the method abstained ('' when it answered).")
    missing: str | None = Field(description="What the KG lacks, when the program found nothing.")
    program: str | None = Field(description="The symbolic program the method ran, when it has one.")
    steps: list[str] = Field(
        description=f"One line per step of the method's trace (at most {MAX_STEPS}, each cut at "
        f"{MAX_STEP_CHARS} characters)."
    )
    usage: UsageOut
    latency_ms: float


class FactPage(BaseModel):
    """A page of facts: ``facts`` are ``offset`` … ``offset + limit`` of the ``total`` that match."""

    total: int
    offset: int
    facts: list[FactOut]


class TimelineOut(BaseModel):
    """An entity's facts in time order (a page of them) and when it first and last appears."""

    entity: str = Field(description="The KG name the entity resolved to.")
    label: str
    first: str | None
    last: str | None
    total: int
    offset: int
    facts: list[FactOut]


class AppendOut(BaseModel):
    added: int = Field(description="New facts (duplicates are skipped).")
    facts: int = Field(description="Facts in the KG after the append.")
    persisted: bool = Field(description="Whether the facts outlive a restart (a DuckDB store).")
    note: str | None

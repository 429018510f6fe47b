"""The service's request and response models: what ``/openapi.json`` documents is what the endpoints return.

Every error is :class:`ErrorBody` (``{"error", "type"}``, plus ``suggestions`` for an unknown entity or
relation); the statuses are in :mod:`tkgqa.service.errors`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ErrorBody(BaseModel):
    """The one error shape of every endpoint (and of unknown paths and verbs)."""

    error: str = Field(description="What is wrong and how to fix it.")
    type: str = Field(description="ConfigError, NotFoundError, ValidationError, LLMError, Busy, Timeout…")
    suggestions: list[str] | None = Field(default=None, description="Near matches of an unknown name.")


class FactOut(BaseModel):
    """A KG fact: names as stored (``Military_(Burundi)``) and their labels (``Military (Burundi)``)."""

    subject: str
    relation: str
    object: str
    start: str | None = Field(description="ISO start (None: open)")
    end: str | None = Field(description="ISO end (None: open)")
    subject_label: str
    relation_label: str
    object_label: str


class UsageOut(BaseModel):
    """LLM usage of one answer; a call served from the cache counts in ``cached_calls`` and costs $0."""

    model_config = ConfigDict(extra="allow")

    llm_calls: int
    cached_calls: int = Field(description="Calls served from the cache (they cost $0).")
    prompt_tokens: int
    completion_tokens: int
    parse_failures: int
    cost_usd: float = Field(description="Estimated USD, by tkgqa.llm.pricing.usage_cost.")


class ProgramStep(BaseModel):
    """One step of a symbolic program: operator, text, facts found (None: not run or unknown), children."""

    op: str
    text: str
    args: list[str]
    facts: int | None
    ran: bool
    children: list[ProgramStep]


class ProgramView(BaseModel):
    """The program as a tree; ``empty_step`` is the step that found nothing and ``missing`` says what the KG
    lacks for it."""

    tree: ProgramStep
    counted: bool = Field(description="Whether the per-step fact counts could be read from the trace.")
    empty_step: str | None
    missing: str | None


class EvidenceCoverOut(BaseModel):
    """How many of the answers the evidence supports (as subject, object or time of a cited fact)."""

    answers: int
    with_evidence: int
    without: list[str] = Field(description="Answers no cited fact supports, best first (at most 50).")


class DecisionOut(BaseModel):
    """What decided a first/last or before/after answer: the facts its first/last step chose among and the
    reference events its program read."""

    candidates: list[FactOut]
    pool: int = Field(description="How many candidates there were (the list holds at most 60).")
    reference: list[FactOut]


class AnswerOut(BaseModel):
    """``POST /api/ask`` and ``tkgqa ask --json``: the question, method, LLM and KG it answers, ranked
    answers, evidence facts, the trace, LLM usage and latency. An abstention is an answer (``abstained``
    with a ``reason``); an LLM failure is never one (it is a 502 :class:`ErrorBody`)."""

    question: str
    method: str
    llm: str | None = Field(description="The LLM used (None for methods without one).")
    kg: str | None
    as_of: str | None = None
    answers: list[str] = Field(description="Ranked, best first.")
    evidence: list[FactOut]
    grounded: bool = Field(description="Whether the answer cites at least one KG fact.")
    evidence_cover: EvidenceCoverOut | None = None
    decision: DecisionOut | None = None
    trace: list[dict[str, Any]]
    usage: UsageOut
    abstained: bool
    reason: str
    missing: str | None = Field(
        default=None, description="What the KG lacks, when the program found nothing."
    )
    program: ProgramView | None = None
    suggestions: list[dict[str, str]] | None = Field(
        default=None, description="Near KG entities of the question's names, when none was recognised."
    )
    raw_output: str
    latency_ms: float | None
    warnings: list[str] = Field(
        default_factory=list, description="What loading the KG skipped (malformed lines), one sentence each."
    )


class FactsOut(BaseModel):
    """``GET /api/kg/query``: the operator, how many facts it found, and the first ``limit`` of them."""

    op: str
    count: int
    facts: list[FactOut]


class NeighborOut(BaseModel):
    name: str
    label: str
    facts: int


class NeighborsOut(BaseModel):
    """``GET /api/kg/neighbors``: an entity's 1-hop neighbourhood; ``facts`` is the page ``offset`` …
    ``offset + limit`` of the ``n_facts`` facts that pass the filters."""

    entity: str
    label: str
    first: str | None
    last: str | None
    n_facts: int
    n_neighbors: int
    offset: int = 0
    neighbors: list[NeighborOut]
    facts: list[FactOut]
    relations: list[NeighborOut] = Field(default_factory=list, description="Facts per relation.")
    years: list[tuple[str, int]] = Field(default_factory=list, description="Facts per start year.")


class CandidateOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    label: str
    score: float
    method: str


class EntitiesOut(BaseModel):
    query: str
    candidates: list[CandidateOut]


class MethodOut(BaseModel):
    name: str
    description: str = Field(description="One line.")
    uses_llm: bool
    needs_llm: bool = Field(default=True, description="Whether answering with it calls an LLM.")


class MethodsOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    default: str
    default_llm: str | None
    methods: list[MethodOut]
    presets: list[str]
    preset_details: list[MethodOut] = Field(
        default_factory=list, description="Each preset with its description and whether it needs an LLM."
    )
    llm_available: bool = Field(
        default=False, description="Whether the server has an LLM for methods that need one (--llm)."
    )
    llm_backends: list[str]
    llm_presets: list[str]
    allowed: dict[str, Any]


class ExampleOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    question: str
    answers: list[str] = []


class ExamplesOut(BaseModel):
    examples: list[ExampleOut]


class HealthOut(BaseModel):
    status: str
    version: str
    kg: str | None
    facts: int
    pending: int
    stuck_workers: int = 0
    replaced_workers: int = 0


class AppendIn(BaseModel):
    """``POST /api/kg/facts``: tab-separated lines ``subject<TAB>relation<TAB>object<TAB>start[<TAB>end]``."""

    lines: str = Field(
        max_length=60_000, description="One fact per line, tab-separated; '#' starts a comment."
    )


class AppendOut(BaseModel):
    added: int
    facts: int = Field(description="Facts in the KG after the append.")
    persisted: bool = Field(True, description="Whether the facts outlive a restart (a DuckDB store).")
    note: str | None = Field(None, description="Set when they do not (served with --ephemeral-append).")


class RunOut(BaseModel):
    name: str
    method: str | None
    dataset: str | None
    n: int | None
    strict_hits_at_1: float | None
    answered: float | None
    errors: int | None
    modified: float


class RunsOut(BaseModel):
    runs: list[RunOut]


class RunReportOut(RunOut):
    report_md: str
    has_chart: bool
    counts: dict[str, int] = Field(
        description="Questions per outcome: all, correct, wrong, abstained, error."
    )
    run_config: dict[str, Any]


class RunAnswerOut(BaseModel):
    """One question of a run, in the answer view's shape, with its ``gold`` answers and ``outcome``."""

    model_config = ConfigDict(extra="allow")

    qid: str
    outcome: str
    gold: list[str]
    question: str
    answers: list[str]
    evidence: list[FactOut]


class RunResultsOut(BaseModel):
    name: str
    outcome: str
    total: int
    offset: int
    results: list[RunAnswerOut]


class RunSideOut(BaseModel):
    outcome: str
    answers: list[str]


class RunDiffQuestionOut(BaseModel):
    qid: str
    question: str
    gold: list[str]
    a: RunSideOut
    b: RunSideOut
    change: str = Field(description="only_a_right, only_b_right, both_right or both_wrong.")


class RunDiffOut(BaseModel):
    """Two runs compared as ``tkgqa eval-compare`` does, with each common question's outcomes."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    run_a: str
    run_b: str
    n_common: int
    only_in_a: int
    only_in_b: int
    a_strict_hits_at_1: float = Field(alias="a_strict_hits@1")
    b_strict_hits_at_1: float = Field(alias="b_strict_hits@1")
    mcnemar: dict[str, Any]
    questions: list[RunDiffQuestionOut]


def error_responses(descriptions: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of a route (or the app) for these error statuses: each an
    :class:`ErrorBody` with its description."""
    return {code: {"model": ErrorBody, "description": text} for code, text in descriptions.items()}

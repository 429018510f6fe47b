"""TimeR4's trace steps (:mod:`tkgqa.trace`): one frozen dataclass per step kind, written as today's JSON.

An answer's trace is ``fks``, ``rewrite``, ``tks`` and ``reason`` (:class:`FKSStep`, a :class:`RewriteStep`,
:class:`TKSStep`, :class:`ReasonStep`); with ``facts=dataset`` it is ``dataset_facts`` then ``reason``. A
refused answer ends with :class:`~tkgqa.methods.base.RefusedStep` (``{"step": "reason", "error": …}``).

The rewrite step has one shape per outcome, each a subclass of :class:`RewriteStep` (whose fields — the
mode, policy and original question — come first): :class:`RewriteSkipped`, :class:`KGRewriteStep`,
:class:`RewriteError` and :class:`LLMRewriteStep`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import TraceStep, step_field


@dataclass(frozen=True, eq=False, repr=False)
class FKSStep(TraceStep):
    """Stage 1: the scope, how facts were retrieved, the candidate count (``None``: the whole KG index), the
    linked entities and the facts the rewrite read."""

    tag = ("step", "fks")
    scope: str
    fact_retrieval: str
    candidates: int | None
    entities: list[str]
    facts: list[str]


@dataclass(frozen=True, eq=False, repr=False)
class RewriteStep(TraceStep):
    """Stage 2, its common part: the rewrite mode and policy in force and the original question. Each outcome
    is a subclass adding its own fields after these."""

    tag = ("step", "rewrite")
    mode: str
    policy: str
    original: str


@dataclass(frozen=True, eq=False, repr=False)
class RewriteSkipped(RewriteStep):
    """No rewrite ran: ``skipped`` says why (disabled, no implicit reference, the KG rewrite found none)."""

    skipped: str


@dataclass(frozen=True, eq=False, repr=False)
class KGRewriteStep(RewriteStep):
    """The offline KG rewrite: the relation and the anchor's time, the φ_t constraint, the evaluated
    reference, the anchor facts, whether the anchor relation was relaxed, and the rewritten question."""

    relation: str
    time: str
    constraint: str
    reference: str
    anchor_facts: list[str]
    relaxed: bool
    rewritten: str


@dataclass(frozen=True, eq=False, repr=False)
class RewriteError(RewriteStep):
    """The LLM rewrite's reply was refused (the question stays)."""

    error: str


@dataclass(frozen=True, eq=False, repr=False)
class LLMRewriteStep(RewriteStep):
    """The LLM rewrite: what it proposed, whether the check accepted it, the question kept, and (refused
    only) why."""

    proposed: str
    accepted: bool
    rewritten: str
    refused: str | None = step_field(omit_default=True, default=None)


@dataclass(frozen=True, eq=False, repr=False)
class TKSStep(TraceStep):
    """Stages 3–4: the time-aware retriever used, whether φ_t reranked, the constraint it used (``None``:
    none), φ_t's normaliser and the facts given to the answer step."""

    tag = ("step", "tks")
    retriever: str
    rerank: bool
    time_constraint: str | None
    phi_norm: str
    facts: list[str]


@dataclass(frozen=True, eq=False, repr=False)
class DatasetFactsStep(TraceStep):
    """``facts=dataset``: the facts the dataset ships and where they came from."""

    tag = ("step", "dataset_facts")
    source: str
    facts: list[str]


@dataclass(frozen=True, eq=False, repr=False)
class ReasonStep(TraceStep):
    """Stage 5: the answers the model listed."""

    tag = ("step", "reason")
    answers: list[str]

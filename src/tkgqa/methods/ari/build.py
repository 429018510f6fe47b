"""Building a history memory: run ARI (without guidance) over history questions with gold answers, record
each process and its correctness, cluster the masked questions and induce the methodologies.

Where a benchmark ships no dev split with gold answers (the shared MultiTQ copy), the history questions can be
generated from the KG (`query.generate`: MultiTQ-style questions whose gold the executor computes);
the memory's ``meta`` records which source was used. History questions must never be the test questions
evaluated later: :class:`ARIMethod` refuses to answer a
question whose id and text are in its memory (unless ``allow_memory_overlap``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg.base import KGStore
from ...llm.base import LLMBackend
from ...usage import Usage
from .memory import ARIMemory

Progress = Callable[[str, int, int], None]

#: The split whose questions are evaluated: a memory is never built from it.
TEST_SPLIT = "test"


def check_history_split(split: str | None) -> None:
    """Refuse history questions from the test split (a ConfigError): what the memory holds would leak into
    the evaluation. ``None``: the questions come from no split (generated from the KG, or a file)."""
    if split == TEST_SPLIT:
        raise ConfigError("refusing to build a memory from the test split: it would leak into the evaluation")


def build_memory(
    questions: Sequence[Question],
    kg: KGStore,
    method: Any,
    *,
    n_clusters: int = 10,
    per_kind: int = 3,
    induce_with: LLMBackend | None = None,
    variants: Sequence[tuple[bool, bool]] = ((True, True),),
    meta: dict[str, Any] | None = None,
    progress: Progress | None = None,
    split: str | None = None,
) -> tuple[ARIMemory, Usage]:
    """Run ``method`` (an :class:`ARIMethod`, normally with ``no_guidance``) on ``questions``, then cluster
    and, when ``induce_with`` is given, induce the methodology ``variants`` ((clustered, incorrect) pairs).
    ``split``: the dataset split the questions come from, if any; the test split is refused
    (:func:`check_history_split`) and the split is recorded in the memory's ``meta``.

    Returns the memory and the LLM usage of the induction."""
    check_history_split(split)
    if not questions:
        raise ConfigError("no history questions to build the memory from")
    if not any(q.answers for q in questions):
        raise ConfigError(
            "history questions need gold answers (the memory stores correct/incorrect processes)"
        )
    memory = ARIMemory(n_clusters=n_clusters, meta=dict(meta or {}) | ({"split": split} if split else {}))
    for i, q in enumerate(questions, 1):
        record, _ = method.record(q, kg)
        memory.add(record)
        if progress is not None:
            progress("history", i, len(questions))
    embedder = method.embedder
    if embedder is None:
        raise ConfigError("clustering needs an embedder; use embedder='hashing' (no dependency)")
    memory.fit(embedder, seed=getattr(method.config, "seed", 0))
    usage = Usage()
    correct = sum(1 for r in memory.records if r.correct)
    memory.meta.update(
        n_records=len(memory),
        n_correct=correct,
        policy=method.config.policy,
        embedder=embedder.name,
        preset=str(getattr(method.config, "preset", "")),
    )
    if induce_with is not None:
        for clustered, incorrect in variants:
            _, used = memory.induce(
                induce_with,
                clustered=clustered,
                incorrect=incorrect,
                per_kind=per_kind,
                with_candidates=bool(getattr(method.config, "induction_candidates", False)),
                on_cluster=(lambda c: progress("induce", c + 1, n_clusters))
                if progress is not None
                else None,
            )
            usage = usage + used
    return memory, usage

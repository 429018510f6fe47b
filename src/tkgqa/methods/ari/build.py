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
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...datasets.base import Question
from ...datasets.core import refuse_test_split
from ...errors import ConfigError, NotFoundError
from ...kg.base import KGStore
from ...llm.base import LLMBackend
from ...usage import Usage
from .variants import MemoryVariant

if TYPE_CHECKING:
    from .memory import ARIMemory

Progress = Callable[[str, int, int], None]


def check_history_split(split: str | None) -> None:
    """Refuse history questions from the test split (a ConfigError): what the memory holds would leak into
    the evaluation. ``None``: the questions come from no split (generated from the KG, or a file)."""
    refuse_test_split(split, "build a memory")


def build_memory(
    questions: Sequence[Question],
    kg: KGStore,
    method: Any,
    *,
    n_clusters: int = 10,
    per_kind: int = 3,
    induce_with: LLMBackend | None = None,
    variants: Sequence[MemoryVariant] = (MemoryVariant.CLUSTERED,),
    meta: dict[str, Any] | None = None,
    progress: Progress | None = None,
    split: str | None = None,
) -> tuple[ARIMemory, Usage]:
    """Run ``method`` (an :class:`ARIMethod`, normally with ``no_guidance``) on ``questions``, then cluster
    and, when ``induce_with`` is given, induce the methodology ``variants``.
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
    from .memory import ARIMemory  # numpy, the embedders: imported when a memory is built

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
        for variant in variants:
            _, used = memory.induce(
                induce_with,
                clustered=variant.clustered,
                incorrect=variant.incorrect,
                per_kind=per_kind,
                with_candidates=bool(getattr(method.config, "induction_candidates", False)),
                on_cluster=(lambda c: progress("induce", c + 1, n_clusters))
                if progress is not None
                else None,
            )
            usage = usage + used
    return memory, usage


NO_DEV_SPLIT = ("multitq",)  # shared copies without a dev split with gold answers


class HistorySource(StrEnum):
    """Where a memory's history questions come from."""

    AUTO = "auto"  # generated for MultiTQ, dataset otherwise
    DATASET = "dataset"
    GENERATED = "generated"


def parse_variants(names: Sequence[str]) -> list[MemoryVariant]:
    """Methodology-set names (``--variant``) → :class:`MemoryVariant` for :func:`build_memory`; an unknown
    name is a ConfigError listing the known ones."""
    known = [v.value for v in MemoryVariant]
    bad = [v for v in names if v not in known]
    if bad:
        raise ConfigError(f"--variant must be among {', '.join(known)}; got {bad}")
    return [MemoryVariant(v) for v in names]


@dataclass(frozen=True)
class History:
    """The history questions of a memory, the KG they are answered over, what the memory's ``meta`` records
    about them, and the split they come from (``None``: generated from the KG)."""

    questions: list[Question]
    kg: KGStore
    meta: dict[str, Any]
    source: HistorySource
    split: str | None


def history_questions(
    dataset: str,
    *,
    data_dir: Path | None = None,
    questions: Path | None = None,
    kg: str | None = None,
    source: HistorySource = HistorySource.AUTO,
    patterns: str | None = None,
    n: int = 200,
    max_answers: int = 5,
    split: str = "dev",
    seed: int = 0,
) -> History:
    """The history questions of a memory: ``generated`` from the KG (``patterns`` or ``n`` questions over
    all patterns, gold computed by the executor; the default for MultiTQ, whose shared copy has only test
    questions) or a ``dataset`` split or file with gold (``n`` sampled by question type; never the test
    split)."""
    chosen = source
    if chosen is HistorySource.AUTO:
        no_dev = dataset in NO_DEV_SPLIT and questions is None
        chosen = HistorySource.GENERATED if no_dev else HistorySource.DATASET
    meta: dict[str, Any] = {"dataset": dataset, "source": chosen.value}
    if chosen is HistorySource.GENERATED:
        from ...query.generate.questions import generate_questions, parse_counts

        store = _dataset_kg(dataset, data_dir, kg)
        counts = parse_counts(patterns if patterns is not None else n)
        if not any(counts.values()):
            raise ConfigError(
                f"--patterns {patterns!r} asks for no question (every count is 0): give one above 0"
            )
        generated = generate_questions(store, counts, seed=seed, max_answers=max_answers)
        history = [g.question for g in generated]
        meta.update(
            kg=getattr(store, "name", ""),
            patterns={p.value: c for p, c in counts.items()},
            generated={p.value: sum(g.pattern is p for g in generated) for p in counts},
            max_answers=max_answers,
            seed=seed,
        )
        if not history:
            raise ConfigError("the generator found no question with a small non-empty answer set in this KG")
    else:
        from ...datasets.sampling import sample_questions

        check_history_split(split)
        qs, store = _load(dataset, data_dir, questions, kg, split)
        history = sample_questions([q for q in qs if q.answers], n, seed=seed)
        meta.update(split=split, questions=str(questions or data_dir or "demo"))
    meta["n"] = len(history)
    return History(history, store, meta, chosen, split if chosen is HistorySource.DATASET else None)


def _load(
    dataset: str, data_dir: Path | None, questions: Path | None, kg: str | None, split: str
) -> tuple[Any, Any]:
    from ...kg.loaders import load_demo_kg, load_kg

    if dataset == "demo":
        from ...datasets.demo import load_demo_questions

        qs = load_demo_questions()
        return qs, (load_kg(kg) if kg else load_demo_kg())
    from ...datasets import load_dataset

    try:
        ds = load_dataset(dataset, data_dir, questions, split=split)
    except NotFoundError as exc:
        raise NotFoundError(
            f"{exc}. The shared MultiTQ copy has only test questions: use --source generated (questions "
            "generated from the KG), another question file (--questions; never the questions you evaluate "
            "on), or --dataset demo"
        ) from None
    kg_path = kg or (str(ds.kg_path) if ds.kg_path else None)
    if kg_path is None:
        raise ConfigError("no KG file found for this dataset; pass --kg PATH")
    return ds.questions, load_kg(kg_path)


def _dataset_kg(dataset: str, data_dir: Path | None, kg: str | None) -> Any:
    """The KG of ``dataset`` (its questions are not used)."""
    from ...kg.loaders import load_demo_kg, load_kg

    if kg:
        return load_kg(kg)
    if dataset == "demo":
        return load_demo_kg()
    from ...datasets import load_dataset

    ds = load_dataset(dataset, data_dir)
    if ds.kg_path is None:
        raise ConfigError("no KG file found for this dataset; pass --kg PATH")
    return load_kg(str(ds.kg_path))

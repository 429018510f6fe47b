"""Batch job on an executor: LPKG planning data (``tkgqa lpkg data``) from one or more KGs.

The work is cut into shards, one per (KG, pattern) pair; each shard is grounded and verbalised with a seed
derived from the run's seed and its pattern (:func:`~tkgqa.methods.lpkg.data.shard_seed`), so a shard's
examples do not depend on where, when or next to what it is built. Locally the shards run in this process
in order. With Ray, each worker (a Ray actor) opens a KG once from its path, the first time it gets one of
its shards, and builds the shards it is sent; the driver keeps one shard in flight per worker, hands a dead
worker's shard to another (once), then merges: KGs in the order given (a KG given twice counts once),
patterns in `PatternType` order, qids renumbered ``<kg-slug>-<i>`` per KG.
Both executors therefore return the same examples, and ``tkgqa lpkg data`` writes the same files.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from ...eval.executor import LOCAL, ExecutorConfig, ExecutorKind, portable_kg_source
from ...eval.ray_session import actor_options, cluster_cpus, ray_session, run_shards

if TYPE_CHECKING:
    from ...kg.base import KGStore
    from ...query.generate.patterns import PatternType
    from .data import PlanningExample, PlanningShard, ShardBuilder


def kg_slug(path: str) -> str:
    """The qid prefix (without the dash) and per-KG file suffix of a KG path."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).stem) or "kg"


@dataclass(frozen=True)
class PlanningData:
    """The merged planning data: the examples (KG by KG, pattern by pattern), per-KG grounding counts,
    attempts and verbalisation stats (as ``summary.json`` records them), the KGs used, and how it ran."""

    examples: list[PlanningExample]
    grounding: dict[str, dict[str, Any]]
    kgs: list[str]
    executor: str
    workers: int
    wall_s: float
    per_kg: dict[str, int] = field(default_factory=dict)


class PlanningWorker:
    """A Ray worker: opens each KG once (on its first shard) and builds the shards it is sent."""

    def __init__(self, per_pattern: int, max_answers: int, seed: int, llm: str | None) -> None:
        self._args = (per_pattern, max_answers, seed)
        self._llm = llm
        self._builders: dict[str, ShardBuilder] = {}

    def build(self, path: str, pattern: str) -> PlanningShard:
        from ...query.generate.patterns import PatternType

        if path not in self._builders:
            from ...llm import resolve_llm_arg

            self._builders[path] = _builder(path, *self._args, resolve_llm_arg(self._llm))
        return self._builders[path].build(PatternType(pattern))


def _open(path: str) -> KGStore:
    from ...kg.loaders import load_kg

    return load_kg(portable_kg_source(path))


def _builder(path: str, per_pattern: int, max_answers: int, seed: int, llm: Any) -> ShardBuilder:
    from .data import ShardBuilder

    return ShardBuilder(_open(path), per_pattern=per_pattern, max_answers=max_answers, seed=seed, llm=llm)


def planning_data(
    kgs: list[str],
    *,
    per_pattern: int,
    max_answers: int = 10,
    seed: int = 0,
    llm: str | None = None,
    executor: ExecutorConfig = LOCAL,
    patterns: Sequence[PatternType] | None = None,
) -> PlanningData:
    """Ground, verbalise and merge the planning data of ``kgs`` (see the module docstring); ``llm`` is an
    LLM spec (each Ray worker resolves its own backend from it), ``None`` for templates; ``patterns``: only
    these (in :class:`~tkgqa.query.generate.patterns.PatternType` order; default all)."""
    from ...llm import resolve_llm_arg
    from ...query.generate.patterns import PatternType

    start = time.perf_counter()
    paths = list(dict.fromkeys(kgs))  # a KG given twice counts once
    wanted = [p for p in PatternType if patterns is None or p in set(patterns)]
    tasks = [(p, str(pattern)) for p in paths for pattern in wanted]
    workers = 1
    match executor.kind:
        case ExecutorKind.LOCAL:
            shards: dict[tuple[str, str], PlanningShard] = {}
            backend = resolve_llm_arg(llm)
            for path in paths:
                builder = _builder(path, per_pattern, max_answers, seed, backend)
                for pattern in wanted:
                    shards[(path, str(pattern))] = builder.build(pattern)
        case ExecutorKind.RAY:
            shards, workers = _ray_shards(executor, tasks, (per_pattern, max_answers, seed, llm))
        case _:
            assert_never(executor.kind)
    data = _merge(paths, tasks, shards)
    return PlanningData(
        examples=data[0],
        grounding=data[1],
        kgs=paths,
        executor=executor.kind.value,
        workers=workers,
        wall_s=round(time.perf_counter() - start, 3),
        per_kg=data[2],
    )


def _merge(
    paths: list[str], tasks: list[tuple[str, str]], shards: dict[tuple[str, str], PlanningShard]
) -> tuple[list[PlanningExample], dict[str, dict[str, Any]], dict[str, int]]:
    from .data import VerbalizationStats

    examples: list[PlanningExample] = []
    grounding: dict[str, dict[str, Any]] = {}
    per_kg: dict[str, int] = {}
    for path in paths:
        slug = kg_slug(path)
        counts: dict[str, int] = {}
        attempts: dict[str, int] = {}
        stats = VerbalizationStats()
        seen: set[str] = set()
        n = 0
        for key in (t for t in tasks if t[0] == path):
            shard = shards[key]
            counts[shard.pattern] = shard.found
            attempts[shard.pattern] = shard.attempts
            stats.template += shard.stats.template
            stats.llm += shard.stats.llm
            stats.llm_failed += shard.stats.llm_failed
            stats.usage = stats.usage + shard.stats.usage
            for ex in shard.examples:
                ident = ex.model_dump_json(include={"instance"})
                if ident in seen:
                    continue
                seen.add(ident)
                examples.append(ex.model_copy(update={"qid": f"{slug}-{n}"}))
                n += 1
        verbalized = {"template": stats.template, "llm": stats.llm, "llm_failed": stats.llm_failed,
                      "usage": stats.usage.model_dump()}  # fmt: skip
        grounding[path] = {"counts": counts, "attempts": attempts, "verbalized": verbalized}
        per_kg[path] = n
    return examples, grounding, per_kg


def _ray_shards(
    config: ExecutorConfig, tasks: list[tuple[str, str]], args: tuple[int, int, int, str | None]
) -> tuple[dict[tuple[str, str], PlanningShard], int]:
    """Build every shard of ``tasks`` on Ray workers; the shards and the worker count."""
    with ray_session(config) as (ray, actors):
        workers = max(1, min(config.workers or max(1, int(cluster_cpus(ray))), len(tasks)))
        remote = ray.remote(PlanningWorker).options(**actor_options(ray, workers))
        actors.update({i: remote.remote(*args) for i in range(workers)})
        portable = [(str(portable_kg_source(p)), pattern) for p, pattern in tasks]
        built = dict(
            run_shards(
                ray,
                actors,
                portable,
                lambda actor, task: actor.build.remote(*task),
                in_flight=1,
                lost="some planning-data shards were not built (the Ray workers died); run the same command "
                "again",
            )
        )
        return {task: built[p] for task, p in zip(tasks, portable, strict=True)}, workers

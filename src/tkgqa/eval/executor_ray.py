"""The Ray executor of ``tkgqa eval --executor ray``: the driver shards, workers answer, rows stream back.

- **Workers** are Ray actors (:class:`EvalWorker`), one CPU each (a share of one when more workers than CPUs
  are asked for). Each builds the method from the serialisable factory the driver sends (the CLI sends the
  method spec: name, LLM spec, options) and opens the shared KG once, from the path the driver passes (a KG
  file, whose binary npz cache the loader uses; any path ``load_kg`` reads) — or from the object store when
  the driver holds a derived store (``--as-of``/``--obfuscate``). Every node of a real cluster must see
  that path (a shared file system, or the same layout on each node).
- **The driver** cuts the questions into small chunks and keeps two chunks in flight per worker (so a
  worker never idles waiting for the next one). Each finished chunk's rows are yielded at once and the
  runner appends them to ``results.jsonl`` before anything else happens, so a crash loses no finished row.
- **A worker that dies** (killed, out of memory, node lost): its unfinished chunks are answered by the
  others; a question that was in flight on two dead workers is not tried a third time. When no worker is
  left, or questions are left over, a :class:`~tkgqa.errors.TKGQAError` says to run the same command again:
  it resumes after the rows already written.
- **LLM concurrency** is bounded over the whole cluster by one semaphore actor (:class:`CallSlots`) when
  ``llm_concurrency`` is set: each worker installs a gate (:func:`tkgqa.llm.cache.set_call_gate`) that
  holds a slot of it around every backend call (cache hits do not wait). Without it, concurrency is at most
  the number of workers (each answers one question at a time). A dead worker's slots are given back.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, TKGQAError
from .executor import ExecutorConfig, portable_kg_source
from .ray_session import actor_options, cluster_cpus, ray_session, run_shards

if TYPE_CHECKING:
    from ..datasets.base import Question
    from ..methods.base import Method
    from ..outcomes import ResultRow
    from .answering import KGs

#: Named actors of an eval run are called ``tkgqa-eval-<run>-<i>`` (``ray.util.list_named_actors()``).
ACTOR_PREFIX = "tkgqa-eval-"
#: Chunks kept in flight per worker.
IN_FLIGHT = 2
#: Seconds to wait for the workers to start (build the method, open the KG) before giving up.
START_TIMEOUT_S = 600.0


class CallSlots:
    """A counting semaphore shared by the workers (a Ray actor): ``llm_concurrency`` backend calls in flight
    at most. Slots are counted per holder, so the driver can give back a dead worker's slots."""

    def __init__(self, limit: int) -> None:
        self._sem = asyncio.Semaphore(limit)
        self._held: Counter[str] = Counter()
        self.peak = 0
        self._active = 0

    async def acquire(self, holder: str) -> None:
        await self._sem.acquire()
        self._held[holder] += 1
        self._active += 1
        self.peak = max(self.peak, self._active)

    async def release(self, holder: str, n: int = 1) -> None:
        n = min(n, self._held[holder])
        self._held[holder] -= n
        self._active -= n
        for _ in range(n):
            self._sem.release()

    async def release_all(self, holder: str) -> None:
        await self.release(holder, self._held[holder])

    async def stats(self) -> dict[str, int]:
        return {"peak": self.peak, "active": self._active}


class _SlotGate:
    """The gate a worker installs: one :class:`CallSlots` slot around each backend call."""

    def __init__(self, ray: ModuleType, slots: Any, holder: str) -> None:
        self._ray, self._slots, self._holder = ray, slots, holder

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        self._ray.get(self._slots.acquire.remote(self._holder))
        try:
            yield
        finally:
            self._slots.release.remote(self._holder)


class EvalWorker:
    """One Ray worker: builds the method and opens the KG in :meth:`ready`, then answers chunks."""

    def __init__(
        self,
        factory: Callable[[], Method],
        kg_source: Any,
        check_support: bool,
        slots: Any | None,
        holder: str,
    ) -> None:
        self._factory, self._source, self._check = factory, kg_source, check_support
        self._slots, self._holder = slots, holder
        self._method: Method | None = None
        self._kgs: KGs | None = None

    def ready(self) -> int:
        """Build the method and open the KG (once); the worker's pid."""
        if self._method is None:
            from .answering import KGs

            if self._slots is not None:
                import ray

                from ..llm.cache import set_call_gate

                set_call_gate(_SlotGate(ray, self._slots, self._holder))
            self._method = self._factory()
            self._kgs = KGs(self._source, None, self._check)
            self._kgs.shared()
        return os.getpid()

    def load_warnings(self) -> list[str]:
        """What opening the KG skipped on this worker (the driver reports it: it does not load the KG)."""
        self.ready()
        assert self._kgs is not None
        return list(self._kgs.warnings)

    def answer(self, questions: Sequence[Question]) -> list[ResultRow]:
        from .answering import answer_one

        self.ready()
        assert self._method is not None and self._kgs is not None
        return [answer_one(self._method, q, self._kgs) for q in questions]


def chunk_size_for(n_questions: int, workers: int, given: int | None) -> int:
    """``given``, else about eight chunks per worker, between 1 and 16 questions each (small chunks: a
    crash repeats little, and the last chunks balance the load)."""
    if given is not None:
        return given
    return max(1, min(16, math.ceil(n_questions / (workers * 8))))


def ray_rows(
    config: ExecutorConfig,
    factory: Callable[[], Method],
    questions: Sequence[Question],
    kgs: KGs,
) -> Iterator[ResultRow]:
    """Answer ``questions`` on Ray workers; yield each finished chunk's rows as they arrive."""
    if not questions:
        return
    slots: Any = None
    with ray_session(config) as (ray, actors):
        workers = _n_workers(ray, config, len(questions))
        source = portable_kg_source(kgs.source())
        kgs.description = _describe(source)
        if source is not None and not isinstance(source, str | Path):
            source = ray.put(source)  # a derived store (--as-of, --obfuscate): shipped once via the store
        if config.llm_concurrency is not None:
            slots = (
                ray.remote(CallSlots).options(num_cpus=0, max_concurrency=1000).remote(config.llm_concurrency)
            )
        remote_worker = ray.remote(EvalWorker)
        options = actor_options(ray, workers)
        run = uuid.uuid4().hex[:8]
        names = {i: f"{ACTOR_PREFIX}{run}-{i}" for i in range(workers)}
        for i, name in names.items():
            try:
                actors[i] = remote_worker.options(name=name, **options).remote(
                    factory, source, kgs.check_support, slots, name
                )
            except TypeError as exc:  # cloudpickle: a lock, an open file, a client in the method object
                raise ConfigError(
                    f"the method cannot be sent to Ray workers ({str(exc).splitlines()[0]}); pass the method "
                    "by name (tkgqa eval --method …) or a method_factory that builds it on the worker"
                ) from None
        _wait_ready(ray, actors)
        first = next(iter(actors.values()))  # every worker opened the same KG: one says what it skipped
        kgs.warnings.extend(w for w in ray.get(first.load_warnings.remote()) if w not in kgs.warnings)
        chunk = chunk_size_for(len(questions), workers, config.chunk_size)
        yield from _drive(ray, actors, names, slots, questions, chunk)


def _n_workers(ray: ModuleType, config: ExecutorConfig, n_questions: int) -> int:
    cpus = int(cluster_cpus(ray))
    workers = config.workers if config.workers is not None else max(1, cpus)
    return max(1, min(workers, n_questions))


def _describe(source: Any) -> str | None:
    if source is None:
        return None
    if isinstance(source, str | Path):
        return str(source)
    return str(getattr(source, "name", "kg"))


def _wait_ready(ray: ModuleType, actors: dict[int, Any]) -> None:
    refs = [a.ready.remote() for a in actors.values()]
    try:
        ready, pending = ray.wait(refs, num_returns=len(refs), timeout=START_TIMEOUT_S)
        if pending:
            raise ConfigError(
                f"{len(pending)} of {len(refs)} Ray workers did not start within {START_TIMEOUT_S:.0f} s; "
                "the cluster may lack CPUs or memory for them: pass fewer --workers"
            )
        ray.get(ready)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else None
        if isinstance(cause, TKGQAError):
            raise cause from None
        raise ConfigError(f"a Ray worker could not build the method or open the KG: {cause or exc}") from None
    except ray.exceptions.RayActorError as exc:
        raise ConfigError(f"a Ray worker died while starting: {exc}") from None


def _drive(
    ray: ModuleType,
    actors: dict[int, Any],
    names: dict[int, str],
    slots: Any,
    questions: Sequence[Question],
    chunk: int,
) -> Iterator[ResultRow]:
    """The driver loop: chunks to free workers, rows back as chunks finish, dead workers' chunks redone."""
    chunks = [list(questions[i : i + chunk]) for i in range(0, len(questions), chunk)]

    def drop(wid: int, actor: Any) -> None:
        with contextlib.suppress(Exception):
            ray.kill(actor)
        if slots is not None:  # the slots it held while dying are free again
            slots.release_all.remote(names[wid])

    def lost(given_up: list[list[Question]], queued: list[list[Question]]) -> str:
        crashed = sum(len(c) for c in given_up)
        left = crashed + sum(len(c) for c in queued)
        return (
            f"{left} question(s) were not answered: "
            + ("every Ray worker died" if not actors else f"{crashed} crashed two workers each")
            + "; the rows already finished are in results.jsonl — run the same command again to resume"
        )

    for _, rows in run_shards(
        ray,
        actors,
        chunks,
        lambda actor, part: actor.answer.remote(part),
        in_flight=IN_FLIGHT,
        lost=lost,
        on_dead=drop,
    ):
        yield from rows

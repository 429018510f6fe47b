"""What every Ray job of the eval layer shares: joining (or starting) the cluster, the actors' options,
stopping them at the end, and handing tasks to actors so that a dead actor's task is retried once.

Used by the evaluation executor (:mod:`.executor_ray`), KG embedding (:mod:`.executor_jobs`) and LPKG
planning data (:mod:`tkgqa.methods.lpkg.planning_jobs`)."""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

from ..errors import ConfigError, TKGQAError
from .executor import ExecutorConfig, forwarded_env, import_ray

T = TypeVar("T")


def connect(ray: ModuleType, config: ExecutorConfig) -> bool:
    """Join the cluster; whether this call started Ray (and so shuts it down at the end)."""
    if ray.is_initialized():
        return False
    address = config.address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address is None:
            ray.init(
                num_cpus=max(os.cpu_count() or 1, config.workers or 1),
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or "a new local instance"
        raise ConfigError(
            f"cannot start or join Ray at {where} ({type(exc).__name__}: {exc}); check --ray-address "
            "(e.g. ray://head:10001 or host:6379, from `ray start --head`), or drop it to run locally"
        ) from None
    return True


@contextlib.contextmanager
def ray_session(config: ExecutorConfig) -> Iterator[tuple[ModuleType, dict[int, Any]]]:
    """Ray and an (empty) actor table to fill; on exit the actors are killed and a Ray instance this call
    started is shut down."""
    ray = import_ray()
    started = connect(ray, config)
    actors: dict[int, Any] = {}
    try:
        yield ray, actors
    finally:
        for actor in actors.values():
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if started:
            ray.shutdown()


def cluster_cpus(ray: ModuleType) -> float:
    return float(ray.cluster_resources().get("CPU", 1.0))


def actor_options(ray: ModuleType, workers: int) -> dict[str, Any]:
    """Options of one worker actor: an equal share of the cluster's CPUs (at most one), no restart (the
    driver retries its task elsewhere), and the forwarded environment (:func:`forwarded_env`)."""
    return {
        "num_cpus": min(1.0, cluster_cpus(ray) / workers),
        "max_restarts": 0,
        "runtime_env": {"env_vars": forwarded_env()},
    }


def run_shards(
    ray: ModuleType,
    actors: dict[int, Any],
    tasks: Sequence[T],
    call: Callable[[Any, T], Any],
    *,
    in_flight: int,
    lost: str | Callable[[list[T], list[T]], str],
    on_dead: Callable[[int, Any], None] | None = None,
) -> Iterator[tuple[T, Any]]:
    """The one Ray shard driver: hand ``tasks`` to ``actors`` (``call(actor, task)`` returns the object ref),
    ``in_flight`` at a time per actor, and yield ``(task, result)`` as each finishes.

    A dead actor is dropped (then ``on_dead(worker id, actor)``, e.g. to give back what it held) and its task
    goes back to the front of the queue once; a task lost on two dead actors is given up. A task whose worker
    raised re-raises the worker's :class:`TKGQAError` (or one naming the task). When tasks are left (given
    up, or queued when every worker died): ``TKGQAError(lost)``, or ``TKGQAError(lost(given_up, queued))``."""
    queue: deque[int] = deque(range(len(tasks)))
    pending: dict[Any, tuple[int, int]] = {}  # ref -> (worker, task index)
    retried: set[int] = set()
    given_up: list[int] = []

    def submit(wid: int) -> None:
        if queue and wid in actors:
            i = queue.popleft()
            pending[call(actors[wid], tasks[i])] = (wid, i)

    def busy(wid: int) -> int:
        return sum(1 for w, _ in pending.values() if w == wid)

    for wid in list(actors):
        for _ in range(in_flight):
            submit(wid)
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        wid, i = pending.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayActorError:
            actor = actors.pop(wid, None)
            if actor is not None and on_dead is not None:
                on_dead(wid, actor)
            if i in retried:
                given_up.append(i)
            else:
                retried.add(i)
                queue.appendleft(i)
            for other in list(actors):  # keep the survivors busy with the returned work
                while busy(other) < in_flight and queue:
                    submit(other)
            continue
        except ray.exceptions.RayTaskError as exc:  # the worker raised (a bad KG file, an LLM error)
            cause = getattr(exc, "cause", None)
            if isinstance(cause, TKGQAError):
                raise cause from None
            raise TKGQAError(f"a Ray worker failed on task {i + 1} of {len(tasks)}: {cause or exc}") from None
        yield tasks[i], result
        submit(wid)
    if given_up or queue:
        if isinstance(lost, str):
            raise TKGQAError(lost)
        raise TKGQAError(lost([tasks[i] for i in given_up], [tasks[i] for i in queue]))

"""Bounded work queues for the service: one :class:`MethodSlot` per resolved method (spec, LLM, options), each
with its own worker threads, so a method waiting on a stalled LLM never takes the threads that answer
``/health``, KG queries or other methods.

A method instance keeps per-KG caches that are not thread-safe, so each instance answers one question at a
time; a slot holds ``workers`` instances (built on first use, in the worker, so a slow build blocks no one
else). ``queue_limit`` bounds the questions pending in a slot and ``max_pending`` those of the whole pool;
beyond either, :meth:`MethodPool.submit` raises :class:`~tkgqa.service.errors.BusyError` (429) with a
``Retry-After`` estimated from the slot's recent answer times. A job is a ``concurrent.futures.Future``:
cancelling it (the client went away, the deadline passed) removes a queued question; a running one stops at
its next step when the method reports steps (:class:`~tkgqa.service.stream.StepChannel`; counted as
``cancelled``), else finishes in its thread and its result is dropped. Worker threads are daemons, so a
stalled call never holds up the process's exit; :meth:`MethodPool.close` cancels everything queued when
the server stops.

A watchdog (one daemon thread per pool, with ``stuck_after_s``) replaces a stuck worker: a question running
longer than ``stuck_after_s`` (the server's longest deadline, so no client still waits for it) fails with
:class:`~tkgqa.service.errors.DeadlineError`, its thread is abandoned (it exits when its call returns, its
method instance dropped) and a fresh thread takes the queue, so one call that never returns (an LLM that
dribbles a byte a second, a plugin that loops) does not block every later question of that method. At most
:data:`MAX_STUCK` abandoned threads per method are kept waiting; ``/health`` reports them (``stuck_workers``,
``replaced_workers``) and says ``degraded`` while any is still stuck.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any, TypeVar

from ..api.resolve import build_method
from ..methods.base import Method, StepCancelled
from .errors import BusyError, DeadlineError, ShuttingDownError

log = logging.getLogger("tkgqa.service")

T = TypeVar("T")
Key = tuple[str, str, str]
Job = Callable[[Method], Any]
#: Abandoned (stuck) worker threads a slot keeps at most; beyond, a stuck worker is not replaced.
MAX_STUCK = 4


@dataclass
class _Worker:
    """One worker thread of a slot: the question it is answering (if any) and since when."""

    future: Future[Any] | None = None
    started: float = 0.0
    abandoned: bool = False


def _settle(future: Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Set the outcome unless the watchdog already failed the future (its worker was replaced)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except InvalidStateError:
        pass


def admit(
    pending: int, limit: int, *, closed: bool, stopping: str, busy: str, retry_after: Callable[[], float]
) -> None:
    """The admission rule of a slot and of the pool: :class:`ShuttingDownError` saying ``stopping`` once
    ``closed``, else :class:`BusyError` saying ``busy`` (with ``retry_after()``) when ``pending`` questions
    already fill ``limit``."""
    if closed:
        raise ShuttingDownError(stopping)
    if pending >= limit:
        raise BusyError(busy, retry_after=retry_after())


class MethodSlot:
    """One method configuration: its instances, its queue and its worker threads."""

    def __init__(
        self,
        key: Key,
        build: Callable[[], Method],
        *,
        workers: int,
        queue_limit: int,
        stuck_after_s: float | None = None,
    ) -> None:
        self.key = key
        self.stuck_after_s = stuck_after_s
        self._build = build
        self.workers = max(1, workers)
        self.queue_limit = max(1, queue_limit)
        self._cv = threading.Condition()
        self._jobs: deque[tuple[Future[Any], Job]] = deque()
        self._idle: list[Method] = []
        self._threads = 0
        self._waiting_threads = 0
        self.pending = 0  # queued + running, not yet done
        self.running = 0
        self.answered = 0
        self.cancelled = 0  # stopped between steps (StepCancelled): neither answered nor failed
        self._mean_s = 0.0
        self._closed = False
        self._workers: list[_Worker] = []
        self.stuck = 0  # abandoned workers whose call has not returned yet
        self.replaced = 0  # workers abandoned so far

    def retry_after(self) -> float:
        """Seconds until a place is likely free: the mean answer time × the queue per worker (≥ 1)."""
        return max(1.0, (self._mean_s or 1.0) * self.pending / self.workers)

    def submit(self, job: Job) -> Future[Any]:
        """Queue ``job(method)``; BusyError when ``queue_limit`` questions are already pending."""
        with self._cv:
            admit(
                self.pending,
                self.queue_limit,
                closed=self._closed,
                stopping="the server is stopping (or this method was unloaded); try again",
                busy=f"{self.pending} questions are already waiting for method {self.key[0]!r}; try later",
                retry_after=self.retry_after,
            )
            future: Future[Any] = Future()
            self.pending += 1
            future.add_done_callback(self._finished)
            if len(self._jobs) > 2 * self.queue_limit:  # drop cancelled entries a stalled worker left behind
                self._jobs = deque(j for j in self._jobs if not j[0].done())
            self._jobs.append((future, job))
            self._spawn()
            self._cv.notify()
            return future

    def _spawn(self) -> None:
        """A new worker thread when questions wait, no thread is idle and fewer than ``workers`` run
        (called with the lock held)."""
        if self._jobs and self._waiting_threads == 0 and self._threads < self.workers:
            self._threads += 1
            worker = _Worker()
            self._workers.append(worker)
            name = f"tkgqa-method-{self.key[0]}-{self._threads + self.replaced}"
            threading.Thread(target=self._work, args=(worker,), name=name, daemon=True).start()

    def _finished(self, _future: Future[Any]) -> None:
        with self._cv:
            self.pending -= 1

    def _next(self, worker: _Worker) -> tuple[Future[Any], Job] | None:
        with self._cv:
            while not self._jobs:
                if self._closed:
                    self._threads -= 1
                    self._workers.remove(worker)
                    return None
                self._waiting_threads += 1
                self._cv.wait()
                self._waiting_threads -= 1
            return self._jobs.popleft()

    def _work(self, worker: _Worker) -> None:
        while (item := self._next(worker)) is not None:
            future, job = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            with self._cv:
                self.running += 1
                worker.future, worker.started = future, time.monotonic()
                method = self._idle.pop() if self._idle else None
            stopped = False
            try:
                if method is None:
                    method = self._build()
                result = job(method)
            except StepCancelled as exc:  # its client went away: the method stopped between two steps
                stopped = True
                _settle(future, error=exc)
            except BaseException as exc:  # reaches the waiting request as its error
                _settle(future, error=exc)
            else:
                _settle(future, result=result)
            if not self._job_done(worker, method, stopped):
                return  # the watchdog replaced this thread: it ends here, its method is dropped

    def _job_done(self, worker: _Worker, method: Method | None, stopped: bool) -> bool:
        """Book a finished question; ``False`` when this worker was abandoned as stuck (it must end)."""
        elapsed = time.monotonic() - worker.started
        with self._cv:
            worker.future = None
            if worker.abandoned:
                self.stuck -= 1
                self._workers.remove(worker)
                log.warning("a replaced worker of method %r returned after %.1f s", self.key[0], elapsed)
                return False
            self.running -= 1
            if stopped:
                self.cancelled += 1
            else:
                self.answered += 1
                self._mean_s = elapsed if self.answered == 1 else 0.8 * self._mean_s + 0.2 * elapsed
            if method is not None:
                self._idle.append(method)
            return True

    def replace_stuck(self, now: float | None = None) -> int:
        """The watchdog's check: abandon every worker whose question has run longer than
        ``stuck_after_s`` (failing that question with DeadlineError) and start a fresh thread for the
        queue; at most :data:`MAX_STUCK` abandoned threads are kept. Returns how many were replaced."""
        if self.stuck_after_s is None:
            return 0
        now = time.monotonic() if now is None else now
        failed: list[Future[Any]] = []
        with self._cv:
            for worker in self._workers:
                if worker.future is None or worker.abandoned or now - worker.started <= self.stuck_after_s:
                    continue
                if self.stuck >= MAX_STUCK:
                    log.error("method %r: %d workers are stuck; not replacing more", self.key[0], self.stuck)
                    break
                worker.abandoned = True
                failed.append(worker.future)
                self.stuck += 1
                self.replaced += 1
                self.running -= 1
                self._threads -= 1
            if failed and not self._closed:
                self._spawn()
        for future in failed:
            log.error(
                "method %r: a question ran over %.0f s; its worker was replaced",
                self.key[0],
                self.stuck_after_s,
            )
            _settle(
                future,
                error=DeadlineError(
                    f"the method {self.key[0]!r} did not finish within {self.stuck_after_s:g} s (its LLM or "
                    "a step is stalled); its worker was replaced so later questions are answered"
                ),
            )
        return len(failed)

    def close(self, *, cancel: bool) -> None:
        """Take no new jobs; ``cancel`` also cancels the queued ones (running ones finish on their own)."""
        with self._cv:
            self._closed = True
            jobs = list(self._jobs) if cancel else []
            if cancel:
                self._jobs.clear()
            self._cv.notify_all()
        for future, _ in jobs:
            future.cancel()

    def stats(self) -> dict[str, Any]:
        with self._cv:
            return {
                "method": self.key[0],
                "llm": self.key[1] or None,
                "pending": self.pending,
                "running": self.running,
                "answered": self.answered,
                "cancelled": self.cancelled,
                "stuck": self.stuck,
                "replaced": self.replaced,
                "mean_s": round(self._mean_s, 4),
            }


class MethodPool:
    """:class:`MethodSlot` per (spec, LLM, options), least recently used dropped beyond ``size`` (a dropped
    slot finishes what it holds); at most ``max_pending`` questions over all slots. ``stuck_after_s``: the
    watchdog replaces a worker whose question has run longer (``None``: no watchdog)."""

    def __init__(
        self,
        size: int = 16,
        *,
        queue_limit: int = 64,
        max_pending: int = 256,
        workers: int = 1,
        stuck_after_s: float | None = None,
    ):
        self.size = max(1, size)
        self.queue_limit = queue_limit
        self.max_pending = max_pending
        self.workers = workers
        self.stuck_after_s = stuck_after_s
        self._slots: OrderedDict[Key, MethodSlot] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._retired: list[MethodSlot] = []  # dropped slots that still hold stuck workers
        self.pending = 0
        self.closed = False

    def _retire(self, slot: MethodSlot) -> None:
        """Drop ``slot`` (it finishes what it holds); kept for ``/health`` while a worker of it is stuck."""
        slot.close(cancel=False)
        self._retired = [s for s in [*self._retired, slot] if s.stuck]

    def _start_watchdog(self) -> None:
        """Start the watchdog thread on first use (called with the lock held)."""
        if self.stuck_after_s is None or self._watchdog is not None:
            return
        self._watchdog = threading.Thread(target=self._watch, name="tkgqa-watchdog", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        assert self.stuck_after_s is not None
        interval = min(1.0, max(0.05, self.stuck_after_s / 4))
        while not self._stop.wait(interval):
            with self._lock:
                slots = list(self._slots.values())
            for slot in slots:
                slot.replace_stuck()

    @staticmethod
    def key(spec: str, llm: str | None, options: Mapping[str, Any]) -> Key:
        import json

        return (spec.strip(), llm or "", json.dumps(dict(options), sort_keys=True, default=str))

    def _slot(self, spec: str, llm: str | None, options: Mapping[str, Any]) -> MethodSlot:
        key = self.key(spec, llm, options)
        slot = self._slots.get(key)
        if slot is not None:
            self._slots.move_to_end(key)
            return slot
        opts = dict(options)
        slot = MethodSlot(
            key,
            lambda: self._build(key, spec, llm, opts),
            workers=self.workers,
            queue_limit=self.queue_limit,
            stuck_after_s=self.stuck_after_s,
        )
        self._slots[key] = slot
        while len(self._slots) > self.size:
            _, old = self._slots.popitem(last=False)
            self._retire(old)
        return slot

    def _build(self, key: Key, spec: str, llm: str | None, options: dict[str, Any]) -> Method:
        try:
            return build_method(spec, llm=llm, options=options)
        except BaseException:
            with self._lock:  # a failed build is not cached: the next request tries again
                if key in self._slots and not self._slots[key].answered:
                    self._slots.pop(key).close(cancel=False)
            raise

    def submit(
        self, spec: str, llm: str | None, options: Mapping[str, Any], job: Callable[[Method], T]
    ) -> Future[T]:
        """Queue ``job(method)`` on the slot of (spec, llm, options); BusyError when full,
        ShuttingDownError after :meth:`close`."""
        with self._lock:
            admit(
                self.pending,
                self.max_pending,
                closed=self.closed,
                stopping="the server is stopping; try again in a moment",
                busy=f"the server has {self.pending} questions waiting; try again later",
                retry_after=lambda: max((s.retry_after() for s in self._slots.values()), default=1.0),
            )
            future = self._slot(spec, llm, options).submit(job)
            self.pending += 1
            self._start_watchdog()
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future[Any]) -> None:
        with self._lock:
            self.pending -= 1

    def warm(self, spec: str, llm: str | None) -> Method:
        """Build the default method now (a bad spec fails at startup) and keep it as its slot's instance."""
        method = build_method(spec, llm=llm)
        with self._lock:
            slot = self._slot(spec, llm, {})
            slot._idle.append(method)
        return method

    def reset(self) -> None:
        """Drop every method instance (after the KG changed: their per-KG caches are stale); what a slot
        holds finishes on the old instance, the next question builds a new one."""
        with self._lock:
            slots = list(self._slots.values())
            self._slots.clear()
            for slot in slots:
                self._retire(slot)

    def close(self) -> None:
        """Stop: new jobs get ShuttingDownError, queued ones are cancelled."""
        with self._lock:
            self.closed = True
            slots = list(self._slots.values())
        self._stop.set()
        for slot in slots:
            slot.close(cancel=True)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            slots = list(self._slots.values())
            retired = [s.stats() for s in self._retired]
            pending = self.pending
        methods = [s.stats() for s in slots]
        return {
            "pending": pending,
            "max_pending": self.max_pending,
            "stuck_workers": sum(m["stuck"] for m in [*methods, *retired]),
            "replaced_workers": sum(m["replaced"] for m in [*methods, *retired]),
            "methods": methods,
        }

"""Server-sent events of one question (``POST /api/ask/stream``) and the steps of a running method.

A :class:`StepChannel` joins a question's worker thread and its request: the job runs the method under
:func:`~tkgqa.methods.base.step_reporter`, so each :class:`~tkgqa.methods.base.StepEvent` a multi-step method
reports (ARI's actions, R3's branches and checks) lands in the channel, and the stream sends it as a ``step``
event. When the request ends early (the client closed the stream, the deadline passed, the server stops) the
channel is cancelled: the method's next step raises :class:`~tkgqa.methods.base.StepCancelled`, so it stops
between steps instead of running to the end for no one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import Any

from ..errors import TKGQAError
from ..loading import loading_now
from ..methods.base import StepCancelled, StepEvent
from .errors import DeadlineError, ShuttingDownError, error_body, exception_body, status_for
from .jobs import MethodPool

log = logging.getLogger("tkgqa.service")

#: The most step events a channel keeps unsent (older ones are dropped and counted).
MAX_BUFFERED_STEPS = 1000
#: How often the stream looks for new steps; ``progress`` is sent about once a second.
STEP_POLL_S = 0.05
PROGRESS_S = 1.0


class StepChannel:
    """Step events from a question's worker thread to its request, and the cancel flag back (thread-safe)."""

    def __init__(self, limit: int = MAX_BUFFERED_STEPS) -> None:
        self._events: deque[StepEvent] = deque(maxlen=limit)
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self.reported = 0

    def report(self, event: StepEvent) -> None:
        """The job's step reporter: keeps ``event``; raises StepCancelled once :meth:`cancel` was called."""
        if self._cancelled.is_set():
            n = self.reported
            raise StepCancelled(f"the question was cancelled after {n} step(s): its client went away")
        with self._lock:
            self._events.append(event)
            self.reported += 1

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def drain(self) -> list[StepEvent]:
        """The events not yet taken, oldest first."""
        with self._lock:
            out = list(self._events)
            self._events.clear()
        return out


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


def step_payload(seq: int, event: StepEvent) -> dict[str, Any]:
    """The data of a ``step`` event: the :class:`StepEvent` and its position in the stream."""
    return {"seq": seq, **event.to_dict()}


async def stream_job(
    future: Future[Any],
    payload: Callable[[Any], dict[str, Any]],
    timeout: float,
    pool: MethodPool,
    channel: StepChannel | None = None,
) -> AsyncIterator[bytes]:
    """The events of one queued question (see ``/api/ask/stream``): ``queued``, ``started``, ``step`` (each
    step the method reports, in order), ``progress`` (about once a second), then ``answer`` or ``error``.
    ``loading`` (``{"loading": [{"what", "elapsed_ms"}]}``) is sent whenever the models this server is
    loading change while the question runs (a first question to a method often loads one: "MiniLM"), and
    ``progress`` carries the same list. The job is cancelled when the stream ends early: dropped if still
    queued, stopped at its next step (through ``channel``) if running."""
    waiter = asyncio.wrap_future(future)
    waiter.add_done_callback(lambda f: f.cancelled() or f.exception())
    loop = asyncio.get_running_loop()
    begin = loop.time()
    last_progress = begin
    started = False
    shown_loads: list[object] = []
    seq = 0

    def steps() -> list[bytes]:
        nonlocal seq
        out = []
        for event in channel.drain() if channel is not None else []:
            out.append(sse("step", step_payload(seq, event)))
            seq += 1
        return out

    try:
        yield sse("queued", {"pending": pool.pending})
        while True:
            now = loop.time()
            if now - begin >= timeout:
                raise DeadlineError(
                    f"no answer within {timeout:g} s (the method or its LLM is slow or stalled)"
                )
            done, _ = await asyncio.wait({waiter}, timeout=min(STEP_POLL_S, timeout - (now - begin)))
            if (done or future.running()) and not started:
                started = True
                yield sse("started", {"elapsed_ms": round((loop.time() - begin) * 1000)})
            for chunk in steps():
                yield chunk
            current = loading_now() if started and not done else []
            if [x["what"] for x in current] != shown_loads:  # a load started or ended: say so now
                shown_loads = [x["what"] for x in current]
                yield sse("loading", {"loading": current})
            if done:
                if waiter.cancelled():
                    raise ShuttingDownError("the server is stopping; the question was cancelled")
                yield sse("answer", payload(waiter.result()))
                return
            if loop.time() - last_progress >= PROGRESS_S:
                last_progress = loop.time()
                elapsed = round((last_progress - begin) * 1000)
                progress = {"elapsed_ms": elapsed, "running": future.running(), "steps": seq}
                yield sse("progress", progress | {"loading": loading_now()})
    except TKGQAError as exc:
        yield sse("error", {**exception_body(exc), "status": status_for(exc)})
    except Exception as exc:  # a bug in a method: named, logged, never a hung stream
        log.exception("unexpected error in a streamed question")
        body = error_body(f"internal error ({type(exc).__name__}); see the server log", "InternalError")
        yield sse("error", {**body, "status": 500})
    finally:
        future.cancel()  # a no-op once it runs or is done
        if channel is not None:
            channel.cancel()  # a running method stops at its next step

"""One question onto the method pool, for every front end of the service (``POST /api/ask``, its stream and
the MCP server's ``ask`` tool): the request checked against the server's policy, the KG as of the asked
date, the job queued with a step channel, and what turns its answer into the answer's JSON. No FastAPI here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..api.resolve import answer_payload, takes_llm
from ..credentials import redact
from ..datasets.base import Question
from ..errors import ConfigError
from ..methods.base import Answer, Method, step_reporter
from .errors import DeadlineError, ShuttingDownError
from .jobs import MethodPool
from .state import ServiceState
from .stream import StepChannel

log = logging.getLogger("tkgqa.service")

#: How often a waiting request looks at its question (the client still there, steps, the deadline).
POLL_S = 0.2


@dataclass(frozen=True)
class Submitted:
    """A queued question: its job, the channel of its steps (and of its cancellation) and ``payload``,
    which turns its :class:`~tkgqa.methods.base.Answer` into the answer's JSON (latency from submission)."""

    future: Future[Any]
    channel: StepChannel
    payload: Callable[[Any], dict[str, Any]]


def submit_question(
    state: ServiceState,
    question: str,
    *,
    method: str | None = None,
    llm: str | None = None,
    options: Mapping[str, Any] | None = None,
    as_of: str | None = None,
    qid: str = "api",
) -> Submitted:
    """Check the request (a blank question is a ConfigError; method, LLM and options against the server's
    policy; ``as_of`` must be a date) and queue its question; BusyError when the method's queue is full.
    The server's LLM goes only to methods that use one."""
    started = time.perf_counter()
    text = question.strip()
    if not text:
        raise ConfigError("the question is empty: type a question, e.g. 'Who visited China in 2014?'")
    spec = state.policy.method(method)
    chosen_llm = state.policy.llm(llm) if takes_llm(spec) else None  # never to methods without an LLM
    checked = state.policy.check_options(options or {}, spec)
    kg = state.live.at(as_of)
    asked = Question(qid=qid, text=text)
    channel = StepChannel()

    def job(instance: Method) -> Answer:
        with step_reporter(channel.report):
            return instance.answer(asked, kg)

    future = state.pool.submit(spec, chosen_llm, checked, job)
    date = (as_of or "").strip() or None

    def payload(answer: Any) -> dict[str, Any]:
        latency = (time.perf_counter() - started) * 1000
        log.info("ask method=%s answers=%d latency_ms=%.1f", redact(spec), len(answer.answers), latency)
        suggest = state.live.derived.linkers.entities.suggest  # "did you mean" for unknown names
        return answer_payload(
            answer, latency, kg=kg, question=text, method=spec, llm=chosen_llm, as_of=date, suggest=suggest
        )

    return Submitted(future, channel, payload)


async def wait_for_answer(
    future: Future[Any],
    timeout: float,
    pool: MethodPool,
    channel: StepChannel | None = None,
    *,
    gone: Callable[[], Awaitable[bool]] | None = None,
    tick: Callable[[], Awaitable[None]] | None = None,
) -> Any:
    """The job's result, waiting at most ``timeout`` seconds; every :data:`POLL_S` while it waits, ``tick``
    runs (the MCP server reports progress there) and ``gone`` is asked whether the client left (its true
    ends the wait with :class:`ClientGone`). The job is cancelled (if still queued; at its next step through
    ``channel`` if running) when the deadline passes (DeadlineError), the client leaves or the server stops
    (ShuttingDownError)."""
    waiter = asyncio.wrap_future(future)
    waiter.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception not retrieved"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise DeadlineError(
                    f"no answer within {timeout:g} s (the method or its LLM is slow or stalled); the "
                    "question was dropped if it had not started"
                )
            done, _ = await asyncio.wait({waiter}, timeout=min(POLL_S, remaining))
            if done:
                if waiter.cancelled():
                    raise ShuttingDownError("the server is stopping; the question was cancelled")
                return waiter.result()
            if pool.closed:
                raise ShuttingDownError("the server is stopping; the question was cancelled")
            if gone is not None and await gone():
                raise ClientGone()
            if tick is not None:
                await tick()
    finally:
        future.cancel()  # a no-op once it runs or is done
        if channel is not None:
            channel.cancel()


class ClientGone(Exception):
    """The client closed the connection while its question waited."""

"""Asking: ``POST /api/ask`` and ``POST /api/ask/stream`` (server-sent events). Questions run on the
method's bounded queue (:mod:`tkgqa.service.jobs`) with a deadline and are cancelled when the client goes
away (:func:`wait_for_job`); what a client may choose is the server's
:class:`~tkgqa.service.policy.RequestPolicy`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, field_validator

from ..api.resolve import OptionValue
from ..sanitize import clean_text
from .jobs import MethodPool
from .models import AnswerOut, error_responses
from .policy import MAX_CLIENT_NAME_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS
from .state import ServiceState
from .stream import StepChannel, stream_job
from .submit import submit_question, wait_for_answer

log = logging.getLogger("tkgqa.service")


class AskRequest(BaseModel):
    """Body of ``POST /api/ask``; ``method``/``llm`` default to the server's ``--method``/``--llm``."""

    question: str = Field(
        max_length=MAX_QUESTION_CHARS, description="The question; empty or blank is a 400 ConfigError."
    )
    method: str | None = Field(
        default=None, max_length=MAX_CLIENT_NAME_CHARS, description="A method spec allowed by the server."
    )
    llm: str | None = Field(
        default=None, max_length=MAX_CLIENT_NAME_CHARS, description="An LLM spec allowed by the server."
    )
    options: dict[str, OptionValue] = Field(
        default_factory=dict,
        max_length=MAX_OPTIONS,
        description="Method options allowed by the server (short words, bounded numbers, booleans).",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=3600, description="Deadline in seconds (at most the server's)."
    )
    as_of: str | None = Field(
        default=None,
        max_length=40,
        description="Answer over the KG as of this date (e.g. 2014-06; all: the whole KG).",
    )

    @field_validator("question", "method", "llm", mode="before")
    @classmethod
    def _utf8_safe(cls, value: Any) -> Any:
        """Lone surrogates (a JSON ``\\ud800`` escape) become U+FFFD: the question is answered."""
        return clean_text(value) if isinstance(value, str) else value


BODY_RESPONSES = error_responses(
    {
        400: "Empty question, bad method spec or option value",
        403: "Method, LLM or option not allowed by the server",
        413: "Body over the size limit",
    }
)
ASK_RESPONSES = BODY_RESPONSES | error_responses(
    {
        429: "The method's queue is full (see Retry-After)",
        502: "The LLM backend failed",
        503: "The server is stopping",
        504: "No answer within the deadline",
    }
)


async def wait_for_job(
    future: Future[Any],
    request: Request,
    timeout: float,
    pool: MethodPool,
    channel: StepChannel | None = None,
) -> Any:
    """The job's result (:func:`~tkgqa.service.submit.wait_for_answer`), cancelled when the client
    disconnects (ClientGone), the deadline passes or the server stops."""
    return await wait_for_answer(future, timeout, pool, channel, gone=request.is_disconnected)


STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: queued, started, step (each step of a multi-step method), "
        "progress, then answer or error",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
}


STREAM_RESPONSES = ASK_RESPONSES | STREAM_RESPONSE


def ask_router(state: ServiceState) -> APIRouter:
    router = APIRouter()

    def submit(body: AskRequest) -> tuple[Future[Any], Callable[[Any], dict[str, Any]], StepChannel]:
        """Check the request and queue its question (:func:`~tkgqa.service.submit.submit_question`)."""
        job = submit_question(
            state, body.question, method=body.method, llm=body.llm, options=body.options, as_of=body.as_of
        )
        return job.future, job.payload, job.channel

    def deadline_of(body: AskRequest) -> float:
        return min(state.settings.request_timeout_s, body.timeout_s or state.settings.request_timeout_s)

    @router.post("/api/ask", responses=ASK_RESPONSES, response_model=AnswerOut)
    async def ask(body: AskRequest, request: Request) -> dict[str, Any]:
        """Answer a question. Runs on the method's bounded queue: 429 when it is full, 504 past the deadline,
        cancelled when the client disconnects. The server's LLM goes only to methods that use one; an LLM
        failure is a 502, never an abstention."""
        future, payload, channel = submit(body)
        answer = await wait_for_job(future, request, deadline_of(body), state.pool, channel)
        return payload(answer)

    @router.post("/api/ask/stream", responses=STREAM_RESPONSES, response_class=StreamingResponse)
    async def ask_stream(body: AskRequest) -> StreamingResponse:
        """``/api/ask`` as server-sent events: ``queued``, ``started``, ``step`` (each step a multi-step
        method reports as it runs: ARI's actions, R3's branches and checks; ``seq``, ``kind``, ``label``,
        ``count``, ``ok``, ``data``), ``progress`` (about once a second, with ``elapsed_ms``), then ``answer``
        (the AnswerOut object) or ``error`` (the ErrorBody with its ``status``). A request refused before it
        is queued gets the plain JSON error instead. Closing the connection cancels the question: dropped if
        queued, stopped at its next step if running."""
        future, payload, channel = submit(body)
        events = stream_job(future, payload, deadline_of(body), state.pool, channel)
        return StreamingResponse(events, media_type="text/event-stream", headers=STREAM_HEADERS)

    return router

"""The FastAPI application: :func:`create_app` builds one app around one loaded KG.

Endpoints: ``GET /`` (web UI), ``GET /health``, ``GET /api/kg``, ``GET /api/kg/query``,
``GET /api/entities?q=``, ``GET /api/methods``, ``GET /api/examples``, ``POST /api/ask``.

Every error has one shape, ``{"error", "type"}`` (``suggestions`` added for a NotFoundError); the statuses
are listed in :mod:`tkgqa.service.errors`. Questions run on bounded per-method queues
(:mod:`tkgqa.service.jobs`) with a deadline, and are cancelled when the client goes away, so a slow or
stalled LLM method never starves ``/health``, the KG endpoints or other methods. What clients may choose
(methods, LLMs, options) and the limits are the server's :class:`~tkgqa.service.policy.ServiceSettings`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..datasets.base import Question
from ..errors import ConfigError, TKGQAError
from ..kg.base import KGStore
from ..sanitize import clean_text
from .errors import (
    DeadlineError,
    ShuttingDownError,
    clip,
    error_body,
    exception_body,
    headers_for,
    status_for,
)
from .guard import RequestGuard
from .jobs import MethodPool
from .policy import LLM_PRESETS, MAX_OPTIONS, METHOD_PRESETS, RequestPolicy, ServiceSettings
from .queries import (
    QUERY_OPS,
    EntityIndex,
    KGLinkers,
    demo_examples,
    kg_summary,
    llm_backends,
    method_catalog,
    run_operator,
)
from .resolve import OptionValue, answer_payload, open_kg, redact, uses_llm

log = logging.getLogger("tkgqa.service")

MAX_QUESTION_CHARS = 2000
MAX_QUERY_FACTS = 1000
MAX_NAME_CHARS = 200
#: How often a waiting request checks whether its client is still there.
POLL_S = 0.2
_HTTP_TYPES = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}

API_DESCRIPTION = """Question answering over a temporal KG.

Errors are always `{"error": message, "type": name}` (plus `suggestions` for an unknown entity):
401 Unauthorized (the server has an API token: send `Authorization: Bearer <token>`), 403 NotAllowed (a
method, LLM or option outside the server's allow-list: see `allowed` in `/api/methods`), 413 PayloadTooLarge
(64 KB by default), 422 ValidationError (bad JSON, not UTF-8, nested too deep, out-of-range fields), 429 Busy
(the method's queue is full: retry after `Retry-After` seconds), 502 LLMError, 503 ShuttingDown, 504 Timeout
(no answer within the deadline: `timeout_s`, at most the server's `request_timeout_s`)."""


class AskRequest(BaseModel):
    """Body of ``POST /api/ask``; ``method``/``llm`` default to the server's ``--method``/``--llm``."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="A method spec allowed by the server."
    )
    llm: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="An LLM spec allowed by the server."
    )
    options: dict[str, OptionValue] = Field(
        default_factory=dict,
        max_length=MAX_OPTIONS,
        description="Method options allowed by the server (short words, bounded numbers, booleans).",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=3600, description="Deadline in seconds (at most the server's)."
    )

    @field_validator("question", "method", "llm", mode="before")
    @classmethod
    def _utf8_safe(cls, value: Any) -> Any:
        """Lone surrogates (a JSON ``\\ud800`` escape) become U+FFFD: the question is answered."""
        return clean_text(value) if isinstance(value, str) else value


class ErrorBody(BaseModel):
    """The one error shape."""

    error: str
    type: str
    suggestions: list[str] | None = None


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        400: "Bad method spec, option value or request",
        401: "API token missing or wrong",
        403: "Method, LLM or option not allowed by the server",
        413: "Body over the size limit",
        422: "Invalid request",
    }.items()
}
ASK_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        429: "The method's queue is full (see Retry-After)",
        502: "The LLM backend failed",
        503: "The server is stopping",
        504: "No answer within the deadline",
    }.items()
}


class ClientGone(Exception):
    """The client closed the connection while its question waited."""


@dataclass(frozen=True)
class ServiceState:
    """Everything the endpoints read: the KG and what is derived from it, the defaults, policy and pool."""

    kg: KGStore
    kg_path: str | None
    default_method: str
    default_llm: str | None
    settings: ServiceSettings
    policy: RequestPolicy
    pool: MethodPool
    linkers: KGLinkers
    entities: EntityIndex
    index_html: str
    is_demo: bool = field(default=False)


def _load_index_html() -> str:
    return resources.files("tkgqa.service").joinpath("static/index.html").read_text(encoding="utf-8")


def create_app(
    kg: KGStore | str | None = None,
    default_method: str = "symbolic",
    llm: str | None = None,
    *,
    settings: ServiceSettings | None = None,
    method_cache_size: int = 16,
) -> FastAPI:
    """A FastAPI app answering questions over ``kg`` (a loaded store, a KG file path, or ``None``/``"demo"``
    for the bundled demo KG). ``default_method`` and ``llm`` apply when a request names none; the default
    method is built here, so a bad spec fails at startup with :class:`ConfigError`. ``settings``: the
    allow-lists and limits (defaults: :class:`ServiceSettings`)."""
    settings = settings or ServiceSettings()
    path = kg if isinstance(kg, str) or kg is None else None
    store = open_kg(kg) if isinstance(kg, str) or kg is None else kg
    pool = MethodPool(
        method_cache_size,
        queue_limit=settings.queue_limit,
        max_pending=settings.max_pending,
        workers=settings.method_workers,
    )
    pool.warm(default_method.strip(), llm if uses_llm(default_method) else None)
    linkers = KGLinkers.from_kg(store)
    state = ServiceState(
        kg=store,
        kg_path=path,
        default_method=default_method.strip(),
        default_llm=llm,
        settings=settings,
        policy=RequestPolicy(settings, default_method, llm),
        pool=pool,
        linkers=linkers,
        entities=EntityIndex(store, linkers.entities),
        index_html=_load_index_html(),
        is_demo=path in (None, "demo"),
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.close()  # queued questions are cancelled; running ones end with the process

    app = FastAPI(
        title="tkgqa",
        version=__version__,
        summary="Question answering over temporal KGs",
        description=API_DESCRIPTION,
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
    )
    app.state.tkgqa = state
    app.add_middleware(
        RequestGuard,
        max_body_bytes=settings.max_body_bytes,
        max_json_depth=settings.max_json_depth,
        token=settings.api_token,
    )
    _add_error_handlers(app)
    _add_routes(app, state)
    _document_auth(app, settings)
    return app


def _error_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(TKGQAError)
    async def tkgqa_error(request: Request, exc: TKGQAError) -> JSONResponse:
        return _error_response(status_for(exc), exception_body(exc), headers_for(exc))

    @app.exception_handler(ClientGone)
    async def client_gone(request: Request, exc: ClientGone) -> JSONResponse:
        return _error_response(499, error_body("the client closed the request", "ClientClosedRequest"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = _HTTP_TYPES.get(exc.status_code, "HTTPError")
        message = (
            str(exc.detail) if exc.status_code != 404 else f"no such path {clip(request.url.path, 100)!r}"
        )
        return _error_response(exc.status_code, error_body(message, kind), dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in list(exc.errors())[:10]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
            problems.append(f"{clip(where, 80)}: {clip(str(err.get('msg', '')), 200)}")
        return _error_response(422, error_body("invalid request: " + "; ".join(problems), "ValidationError"))

    @app.exception_handler(Exception)
    async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        body = error_body(f"internal error ({type(exc).__name__}); see the server log", "InternalError")
        return _error_response(500, body)


async def wait_for_job(future: Future[Any], request: Request, timeout: float, pool: MethodPool) -> Any:
    """The job's result, waiting at most ``timeout`` seconds; the job is cancelled (if still queued) when
    the deadline passes (DeadlineError), the client disconnects (ClientGone) or the server stops."""
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
            if await request.is_disconnected():
                raise ClientGone()
    finally:
        future.cancel()  # a no-op once it runs or is done


def _add_routes(app: FastAPI, state: ServiceState) -> None:
    catalog: list[dict[str, Any]] = []

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(state.index_html)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness: answered on the event loop, never behind a method's queue."""
        return {
            "status": "ok",
            "version": __version__,
            "kg": getattr(state.kg, "name", None),
            "facts": len(state.kg),
            "pending": state.pool.pending,
        }

    @app.get("/api/kg")
    def kg_info(top: int = Query(10, ge=1, le=100)) -> dict[str, Any]:
        return kg_summary(state.kg, state.kg_path, top)

    @app.get("/api/kg/query")
    def kg_query(
        op: str = Query(..., max_length=40, description="ARI operator: " + ", ".join(QUERY_OPS)),
        head: str | None = Query(None, max_length=MAX_NAME_CHARS),
        rel: str | None = Query(None, max_length=MAX_NAME_CHARS),
        tail: str | None = Query(None, max_length=MAX_NAME_CHARS),
        time: str | None = Query(None, max_length=60),
        time2: str | None = Query(None, max_length=60),
        limit: int = Query(100, ge=1, le=MAX_QUERY_FACTS),
    ) -> dict[str, Any]:
        facts = run_operator(
            state.kg, state.linkers, op, head=head, rel=rel, tail=tail, time=time, time2=time2
        )
        return {"op": op, "count": len(facts), "facts": [f.to_dict() for f in facts[:limit]]}

    @app.get("/api/entities")
    def entities(
        q: str = Query(..., max_length=MAX_NAME_CHARS), k: int = Query(10, ge=1, le=50)
    ) -> dict[str, Any]:
        return {"query": q, "candidates": state.entities.complete(q, k)}

    @app.get("/api/methods")
    def methods() -> dict[str, Any]:
        """The methods, presets and LLMs this server allows clients to pick, and its limits."""
        allowed = state.policy.allowed_methods()
        if not catalog:
            catalog.extend(method_catalog())  # imports the method modules once, off the event loop
        names = {spec.partition(":")[0] for spec in allowed}
        return {
            "default": state.default_method,
            "default_llm": state.default_llm,
            "methods": [m for m in catalog if m["name"] in names],
            "presets": [p for p in METHOD_PRESETS if p in allowed],
            "llm_backends": llm_backends(),
            "llm_presets": [
                p for p in dict.fromkeys([*state.policy.llms, *LLM_PRESETS]) if p in state.policy.llms
            ],
            "allowed": state.policy.describe(),
        }

    @app.get("/api/examples")
    def examples() -> dict[str, Any]:
        return {"examples": demo_examples() if state.is_demo else []}

    @app.post("/api/ask", responses=ASK_RESPONSES)
    async def ask(body: AskRequest, request: Request) -> dict[str, Any]:
        """Answer a question. Runs on the method's bounded queue: 429 when it is full, 504 past the deadline,
        cancelled when the client disconnects."""
        started = time.perf_counter()
        text = body.question.strip()
        if not text:
            raise ConfigError("the question is empty")
        spec = state.policy.method(body.method)
        llm = state.policy.llm(body.llm) if body.llm or uses_llm(spec) else None  # the default: LLM methods
        options = state.policy.check_options(body.options)
        timeout = min(state.settings.request_timeout_s, body.timeout_s or state.settings.request_timeout_s)
        question = Question(qid="api", text=text)
        future = state.pool.submit(spec, llm, options, lambda method: method.answer(question, state.kg))
        answer = await wait_for_job(future, request, timeout, state.pool)
        latency = (time.perf_counter() - started) * 1000
        log.info("ask method=%s answers=%d latency_ms=%.1f", redact(spec), len(answer.answers), latency)
        return answer_payload(answer, latency)


def _document_auth(app: FastAPI, settings: ServiceSettings) -> None:
    """With an API token, the OpenAPI schema declares bearer authentication on every ``/api/`` path."""
    if settings.api_token is None:
        return

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            spec.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer"}
            }
            for path, operations in spec.get("paths", {}).items():
                if path.startswith("/api/"):
                    for operation in operations.values():
                        operation["security"] = [{"bearer": []}]
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = schema  # type: ignore[method-assign]

"""The FastAPI application: :func:`create_app` builds one app around one loaded KG.

Endpoints: ``GET /`` (web UI, its assets under ``/static``), ``GET /health``, ``GET /api/kg``,
``GET /api/kg/query``, ``GET /api/kg/neighbors``, ``POST /api/kg/facts`` (only with ``allow_append``),
``GET /api/entities?q=``, ``GET /api/methods``, ``GET /api/examples``, ``POST /api/ask``, the runs browser
(``/api/runs…``, with ``runs_dir``); ``/docs`` with its assets served locally (from the ``fastapi-offline``
package; absent without it). No ``/redoc`` (ReDoc fetches its logo from a CDN).

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
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..datasets.base import Question
from ..datasets.core import Dataset
from ..errors import ConfigError, TKGQAError
from ..kg.base import KGStore
from ..methods.base import Answer, Method, step_reporter
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
from .headers import SecurityHeaders, csp_with_script_hashes
from .jobs import MethodPool
from .kg_routes import add_kg_routes
from .live import LiveKG
from .models import AnswerOut, ErrorBody, ExamplesOut, HealthOut, MethodsOut
from .policy import LLM_PRESETS, MAX_OPTIONS, METHOD_PRESETS, RequestPolicy, ServiceSettings
from .queries import (
    dataset_examples,
    demo_examples,
    kg_examples,
    kg_summary,
    llm_backends,
    method_catalog,
    preset_catalog,
)
from .resolve import OptionValue, answer_payload, open_kg, redact, uses_llm
from .runs_routes import add_runs_routes
from .stream import StepChannel, stream_job
from .ui_routes import add_ui_routes

log = logging.getLogger("tkgqa.service")

MAX_QUESTION_CHARS = 2000
MAX_QUERY_FACTS = 1000
MAX_NAME_CHARS = 200
#: How often a waiting request checks whether its client is still there.
POLL_S = 0.2
_HTTP_TYPES = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}
DOCS_STATIC = "/static-docs"

API_DESCRIPTION = """Question answering over a temporal KG.

Errors are always `{"error": message, "type": name}` (plus `suggestions` for an unknown entity):

* 400 ConfigError: an empty question, a bad method spec or option value;
* 401 Unauthorized: the server has an API token: send `Authorization: Bearer <token>`;
* 403 NotAllowed: a method, LLM or option outside the server's allow-list (see `allowed` in `/api/methods`);
* 404 NotFound / NotFoundError: an unknown path / an unknown entity or relation (with `suggestions`);
* 405 MethodNotAllowed, 413 PayloadTooLarge (64 KB by default);
* 422 ValidationError / DataError: bad JSON, not UTF-8, nested too deep, out-of-range fields, a bad date;
* 429 Busy: the method's queue is full: retry after `Retry-After` seconds;
* 502 LLMError: the LLM backend failed (HTTP error, bad key, unreachable host); never an abstention;
* 503 ShuttingDown; 504 Timeout: no answer within the deadline (`timeout_s`, at most `request_timeout_s`)."""


class AskRequest(BaseModel):
    """Body of ``POST /api/ask``; ``method``/``llm`` default to the server's ``--method``/``--llm``."""

    question: str = Field(
        max_length=MAX_QUESTION_CHARS, description="The question; empty or blank is a 400 ConfigError."
    )
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
    as_of: str | None = Field(
        default=None, max_length=40, description="Answer over the KG as of this date (e.g. 2014-06)."
    )

    @field_validator("question", "method", "llm", mode="before")
    @classmethod
    def _utf8_safe(cls, value: Any) -> Any:
        """Lone surrogates (a JSON ``\\ud800`` escape) become U+FFFD: the question is answered."""
        return clean_text(value) if isinstance(value, str) else value


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        401: "API token missing or wrong",
        404: "Unknown path (or unknown entity/relation)",
        405: "Method not allowed on this path",
        422: "Invalid request",
    }.items()
}
BODY_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        400: "Empty question, bad method spec or option value",
        403: "Method, LLM or option not allowed by the server",
        413: "Body over the size limit",
    }.items()
}
ASK_RESPONSES: dict[int | str, dict[str, Any]] = BODY_RESPONSES | {
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
    live: LiveKG
    index_html: str
    is_demo: bool = field(default=False)
    #: Example questions from the benchmark the server was started with (``--dataset``), if any.
    dataset_examples: list[dict[str, Any]] | None = None


def _load_index_html() -> str:
    return resources.files("tkgqa.service").joinpath("static/index.html").read_text(encoding="utf-8")


def create_app(
    kg: KGStore | str | None = None,
    default_method: str = "symbolic",
    llm: str | None = None,
    *,
    settings: ServiceSettings | None = None,
    method_cache_size: int = 16,
    dataset: Dataset | None = None,
) -> FastAPI:
    """A FastAPI app answering questions over ``kg`` (a loaded store, a KG file path, or ``None``/``"demo"``
    for the bundled demo KG). ``default_method`` and ``llm`` apply when a request names none; the default
    method is built here, so a bad spec fails at startup with :class:`ConfigError`. ``settings``: the
    allow-lists and limits (defaults: :class:`ServiceSettings`). ``dataset``: the benchmark the KG comes
    from: ``/api/examples`` then offers a few of its questions (one per question type), and its KG file is
    served when ``kg`` is ``None``."""
    settings = settings or ServiceSettings()
    if kg is None and dataset is not None and dataset.kg_path is not None:
        kg = str(dataset.kg_path)
    path = kg if isinstance(kg, str) or kg is None else None
    store: KGStore
    if isinstance(kg, str) and kg.lower().endswith(".duckdb"):  # a persistent store, served from disk: this
        from ..kg.duckdb_store import DuckDBStore  # process is its one writer when appends are on (issue #14)

        store = DuckDBStore.open(kg, read_only=not settings.allow_append, create=settings.create_store)
    else:
        store = open_kg(kg) if isinstance(kg, str) or kg is None else kg
    pool = MethodPool(
        method_cache_size,
        queue_limit=settings.queue_limit,
        max_pending=settings.max_pending,
        workers=settings.method_workers,
        stuck_after_s=settings.request_timeout_s,  # no client waits longer: a worker still busy is stuck
    )
    pool.warm(default_method.strip(), llm if uses_llm(default_method) else None)
    state = ServiceState(
        kg=store,
        kg_path=path,
        default_method=default_method.strip(),
        default_llm=llm,
        settings=settings,
        policy=RequestPolicy(settings, default_method, llm),
        pool=pool,
        live=LiveKG(store),
        index_html=_load_index_html(),
        is_demo=path in (None, "demo"),
        dataset_examples=dataset_examples(dataset.questions, source=dataset.name) if dataset else None,
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
        docs_url=None,
        redoc_url=None,
    )
    app.state.tkgqa = state
    app.add_middleware(
        RequestGuard,
        max_body_bytes=settings.max_body_bytes,
        max_json_depth=settings.max_json_depth,
        token=settings.api_token,
        hosts=settings.allowed_hosts,
    )
    app.add_middleware(SecurityHeaders)  # outermost: the guard's refusals carry the headers too
    _add_error_handlers(app)
    _add_routes(app, state)
    add_kg_routes(app, state)
    add_runs_routes(app, state)
    add_ui_routes(app, state)
    _add_static(app)
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


async def wait_for_job(
    future: Future[Any],
    request: Request,
    timeout: float,
    pool: MethodPool,
    channel: StepChannel | None = None,
) -> Any:
    """The job's result, waiting at most ``timeout`` seconds; the job is cancelled (if still queued; at its
    next step through ``channel`` if running) when the deadline passes (DeadlineError), the client
    disconnects (ClientGone) or the server stops."""
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
        if channel is not None:
            channel.cancel()


STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: queued, started, step (each step of a multi-step method), "
        "progress, then answer or error",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
}


STREAM_RESPONSES = ASK_RESPONSES | STREAM_RESPONSE


def _add_routes(app: FastAPI, state: ServiceState) -> None:
    catalog: list[dict[str, Any]] = []

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(state.index_html)

    @app.get("/health", response_model=HealthOut)
    async def health() -> dict[str, Any]:
        """Liveness: answered on the event loop, never behind a method's queue. ``degraded`` while a method
        worker the watchdog replaced is still stuck (``stuck_workers``; see :mod:`tkgqa.service.jobs`)."""
        pool = state.pool.stats()
        return {
            "status": "degraded" if pool["stuck_workers"] else "ok",
            "version": __version__,
            "kg": getattr(state.kg, "name", None),
            "facts": len(state.kg),
            "pending": pool["pending"],
            "stuck_workers": pool["stuck_workers"],
            "replaced_workers": pool["replaced_workers"],
        }

    @app.get("/api/kg")
    def kg_info(top: int = Query(10, ge=1, le=100)) -> dict[str, Any]:
        """Counts, time span and the most frequent relations (``tkgqa kg info --json``); ``appendable``:
        whether ``POST /api/kg/facts`` is on; ``runs``: whether the runs browser is."""
        summary = kg_summary(state.kg, state.kg_path, top)
        return {**summary, "appendable": state.settings.allow_append, "runs": bool(state.settings.runs_dir)}

    @app.get("/api/methods", response_model=MethodsOut)
    def methods() -> dict[str, Any]:
        """The methods, presets and LLMs this server allows clients to pick, and its limits. ``fake`` (the
        scripted test LLM) is listed only when it is the server's ``--llm``."""
        allowed = state.policy.allowed_methods()
        if not catalog:
            catalog.extend(method_catalog())  # imports the method modules once, off the event loop
        names = {spec.partition(":")[0] for spec in allowed}
        show_fake = state.default_llm == "fake"
        presets = [p for p in METHOD_PRESETS if p in allowed]
        llm_presets = [
            p
            for p in dict.fromkeys([*state.policy.llms, *LLM_PRESETS])
            if p in state.policy.llms and (p != "fake" or show_fake)
        ]
        return {
            "default": state.default_method,
            "default_llm": state.default_llm,
            "methods": [m for m in catalog if m["name"] in names],
            "presets": presets,
            "preset_details": preset_catalog(presets),
            "llm_available": bool(llm_presets),
            "llm_backends": [b for b in llm_backends() if b != "fake" or show_fake],
            "llm_presets": llm_presets,
            "allowed": state.policy.describe(),
        }

    @app.get("/api/examples", response_model=ExamplesOut)
    def examples() -> dict[str, Any]:
        """Example questions: a few of the benchmark's own questions (one per question type) when the
        server was started with its dataset, else the bundled demo set over the demo KG, else questions
        generated from the KG's facts."""
        if state.dataset_examples is not None:
            return {"examples": state.dataset_examples}
        return {"examples": demo_examples() if state.is_demo else kg_examples(state.kg)}

    def submit(body: AskRequest) -> tuple[Future[Any], Callable[[Any], dict[str, Any]], StepChannel]:
        """Check the request and queue its question: the job, what turns its answer into the payload and
        the channel of its steps (and of its cancellation)."""
        started = time.perf_counter()
        text = body.question.strip()
        if not text:
            raise ConfigError("the question is empty: type a question, e.g. 'Who visited China in 2014?'")
        spec = state.policy.method(body.method)
        llm = state.policy.llm(body.llm) if uses_llm(spec) else None  # never to methods without an LLM
        options = state.policy.check_options(body.options, spec)
        kg = state.live.at(body.as_of)
        question = Question(qid="api", text=text)
        channel = StepChannel()

        def job(method: Method) -> Answer:
            with step_reporter(channel.report):
                return method.answer(question, kg)

        future = state.pool.submit(spec, llm, options, job)
        as_of = (body.as_of or "").strip() or None

        def payload(answer: Any) -> dict[str, Any]:
            latency = (time.perf_counter() - started) * 1000
            log.info("ask method=%s answers=%d latency_ms=%.1f", redact(spec), len(answer.answers), latency)
            suggest = state.live.derived.linkers.entities.suggest  # "did you mean" for unknown names
            return answer_payload(
                answer, latency, kg=kg, question=text, method=spec, llm=llm, as_of=as_of, suggest=suggest
            )

        return future, payload, channel

    def deadline_of(body: AskRequest) -> float:
        return min(state.settings.request_timeout_s, body.timeout_s or state.settings.request_timeout_s)

    @app.post("/api/ask", responses=ASK_RESPONSES, response_model=AnswerOut)
    async def ask(body: AskRequest, request: Request) -> dict[str, Any]:
        """Answer a question. Runs on the method's bounded queue: 429 when it is full, 504 past the deadline,
        cancelled when the client disconnects. The server's LLM goes only to methods that use one; an LLM
        failure is a 502, never an abstention."""
        future, payload, channel = submit(body)
        answer = await wait_for_job(future, request, deadline_of(body), state.pool, channel)
        return payload(answer)

    @app.post("/api/ask/stream", responses=STREAM_RESPONSES, response_class=StreamingResponse)
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


def _add_static(app: FastAPI) -> None:
    """The UI's assets (``/static``: the page's script and style, vendored ECharts) and, when the
    ``fastapi-offline`` package is installed, ``/docs`` (Swagger UI) with its assets served from it. There
    is no ``/redoc``: ReDoc loads its logo from a CDN."""
    static = resources.files("tkgqa.service").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    try:
        import fastapi_offline
    except ModuleNotFoundError:
        return
    from fastapi.openapi.docs import get_swagger_ui_html

    assets = resources.files(fastapi_offline).joinpath("static")
    app.mount(DOCS_STATIC, StaticFiles(directory=str(assets)), name="static-docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url="/openapi.json",
            title=f"{app.title} - API",
            swagger_js_url=f"{DOCS_STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_STATIC}/favicon.png",
        )
        csp = csp_with_script_hashes(bytes(page.body).decode("utf-8"))  # its one inline script, by hash
        page.headers["content-security-policy"] = csp
        return page


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

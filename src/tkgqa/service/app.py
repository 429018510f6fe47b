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

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..datasets.core import Dataset
from ..errors import TKGQAError
from ..kg.base import KGStore
from .ask_routes import ask_router
from .errors import clip, error_body, exception_body, headers_for, status_for
from .guard import RequestGuard
from .headers import SecurityHeaders, csp_with_script_hashes
from .info_routes import info_router
from .kg_routes import kg_router
from .models import error_responses
from .policy import ServiceSettings
from .runs_routes import runs_router
from .state import build_state
from .submit import ClientGone
from .ui_routes import ui_router

log = logging.getLogger("tkgqa.service")

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


ERROR_RESPONSES = error_responses(
    {
        401: "API token missing or wrong",
        404: "Unknown path (or unknown entity/relation)",
        405: "Method not allowed on this path",
        422: "Invalid request",
    }
)


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
    state = build_state(
        kg, default_method, llm, settings=settings, method_cache_size=method_cache_size, dataset=dataset
    )
    settings, pool = state.settings, state.pool

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
    app.add_middleware(RequestGuard, settings=settings)
    app.add_middleware(SecurityHeaders)  # outermost: the guard's refusals carry the headers too
    _add_error_handlers(app)
    # ui_router first: its /api/runs/{name}/questions/{qid:path}/gold-facts must win over the runs router's
    # /api/runs/{name}/questions/{qid:path} (a question id may contain '/').
    for router in (info_router, ask_router, kg_router, ui_router, runs_router):
        app.include_router(router(state))
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

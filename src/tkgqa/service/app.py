"""The FastAPI application: :func:`create_app` builds one app around one loaded KG.

Endpoints: ``GET /`` (web UI), ``GET /health``, ``GET /api/kg``, ``GET /api/kg/query``,
``GET /api/entities?q=``, ``GET /api/methods``, ``GET /api/examples``, ``POST /api/ask``.
Errors derived from :class:`~tkgqa.errors.TKGQAError` become ``{"error", "type", "suggestions"?}`` with
status 404 (NotFoundError), 400 (ConfigError), 422 (DataError, ParseError, invalid request), 502 (LLMError).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field

from .. import __version__
from ..datasets.base import Question
from ..errors import ConfigError, DataError, LLMError, NotFoundError, ParseError, TKGQAError
from ..kg.base import KGStore
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
from .resolve import MethodCache, OptionValue, answer_payload, open_kg, redact

log = logging.getLogger("tkgqa.service")

MAX_QUESTION_CHARS = 2000
MAX_QUERY_FACTS = 1000
LLM_PRESETS = ("fake", "llamacpp:smollm2", "openai:gpt-4o-mini")
METHOD_PRESETS = ("ari:policy=symbolic",)


class AskRequest(BaseModel):
    """Body of ``POST /api/ask``; ``method``/``llm`` default to the server's ``--method``/``--llm``."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: str | None = Field(default=None, max_length=200)
    llm: str | None = Field(default=None, max_length=200)
    options: dict[str, OptionValue] = Field(default_factory=dict)


@dataclass(frozen=True)
class ServiceState:
    """Everything the endpoints read: the KG and what is derived from it, the defaults and method cache."""

    kg: KGStore
    kg_path: str | None
    default_method: str
    default_llm: str | None
    methods: MethodCache
    linkers: KGLinkers
    entities: EntityIndex
    index_html: str
    is_demo: bool = field(default=False)


def _status_for(exc: TKGQAError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, DataError | ParseError):
        return 422
    if isinstance(exc, LLMError):
        return 502
    return 400


def error_body(exc: TKGQAError) -> dict[str, Any]:
    body: dict[str, Any] = {"error": str(exc), "type": type(exc).__name__}
    if isinstance(exc, NotFoundError):
        body["suggestions"] = list(exc.suggestions)
    return dict(redact(body))


def _load_index_html() -> str:
    return resources.files("tkgqa.service").joinpath("static/index.html").read_text(encoding="utf-8")


def create_app(
    kg: KGStore | str | None = None,
    default_method: str = "symbolic",
    llm: str | None = None,
    *,
    method_cache_size: int = 16,
) -> FastAPI:
    """A FastAPI app answering questions over ``kg`` (a loaded store, a KG file path, or ``None``/``"demo"``
    for the bundled demo KG). ``default_method`` and ``llm`` apply when a request names none; the default
    method is resolved here, so a bad spec fails at startup with :class:`ConfigError`."""
    path = kg if isinstance(kg, str) or kg is None else None
    store = open_kg(kg) if isinstance(kg, str) or kg is None else kg
    methods = MethodCache(method_cache_size)
    methods.get(default_method, llm=llm)
    linkers = KGLinkers.from_kg(store)
    state = ServiceState(
        kg=store,
        kg_path=path,
        default_method=default_method,
        default_llm=llm,
        methods=methods,
        linkers=linkers,
        entities=EntityIndex(store, linkers.entities),
        index_html=_load_index_html(),
        is_demo=path in (None, "demo"),
    )
    app = FastAPI(title="tkgqa", version=__version__, summary="Question answering over temporal KGs")
    app.state.tkgqa = state
    _add_error_handlers(app)
    _add_routes(app, state)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(TKGQAError)
    async def tkgqa_error(request: Request, exc: TKGQAError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=_status_for(exc))

    @app.exception_handler(Exception)
    async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        body = {
            "error": f"internal error ({type(exc).__name__}); see the server log",
            "type": "InternalError",
        }
        return JSONResponse(body, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
            problems.append(f"{where}: {err.get('msg', '')}")
        body = {"error": "invalid request: " + "; ".join(problems), "type": "ValidationError"}
        return JSONResponse(body, status_code=422)


def _add_routes(app: FastAPI, state: ServiceState) -> None:
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(state.index_html)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "version": __version__,
            "kg": getattr(state.kg, "name", None),
            "facts": len(state.kg),
        }

    @app.get("/api/kg")
    def kg_info(top: int = Query(10, ge=1, le=100)) -> dict[str, Any]:
        return kg_summary(state.kg, state.kg_path, top)

    @app.get("/api/kg/query")
    def kg_query(
        op: str = Query(..., description="ARI operator: " + ", ".join(QUERY_OPS)),
        head: str | None = None,
        rel: str | None = None,
        tail: str | None = None,
        time: str | None = None,
        time2: str | None = None,
        limit: int = Query(100, ge=1, le=MAX_QUERY_FACTS),
    ) -> dict[str, Any]:
        facts = run_operator(
            state.kg, state.linkers, op, head=head, rel=rel, tail=tail, time=time, time2=time2
        )
        return {"op": op, "count": len(facts), "facts": [f.to_dict() for f in facts[:limit]]}

    @app.get("/api/entities")
    def entities(q: str = Query(..., max_length=200), k: int = Query(10, ge=1, le=50)) -> dict[str, Any]:
        return {"query": q, "candidates": state.entities.complete(q, k)}

    @app.get("/api/methods")
    def methods() -> dict[str, Any]:
        return {
            "default": state.default_method,
            "default_llm": state.default_llm,
            "methods": method_catalog(),
            "presets": list(METHOD_PRESETS),
            "llm_backends": llm_backends(),
            "llm_presets": list(LLM_PRESETS),
        }

    @app.get("/api/examples")
    def examples() -> dict[str, Any]:
        return {"examples": demo_examples() if state.is_demo else []}

    @app.post("/api/ask")
    def ask(body: AskRequest) -> dict[str, Any]:
        text = body.question.strip()
        if not text:
            raise ConfigError("the question is empty")
        started = time.perf_counter()
        spec = body.method or state.default_method
        llm = body.llm or state.default_llm
        runner, lock = state.methods.get(spec, llm=llm, options=body.options)
        with lock:
            answer = runner.answer(Question(qid="api", text=text), state.kg)
        latency = (time.perf_counter() - started) * 1000
        log.info("ask method=%s answers=%d latency_ms=%.1f", redact(spec), len(answer.answers), latency)
        return answer_payload(answer, latency)

"""The page and what it reads first: ``GET /`` (the web UI), ``GET /health``, ``GET /api/kg`` (the KG's
summary), ``GET /api/methods`` (what clients may pick) and ``GET /api/examples``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from .. import __version__
from .models import ExamplesOut, HealthOut, MethodsOut
from .policy import LLM_PRESETS, METHOD_PRESETS
from .queries import demo_examples, kg_examples, kg_summary, llm_backends, method_catalog, preset_catalog
from .state import ServiceState


def info_router(state: ServiceState) -> APIRouter:
    router = APIRouter()
    catalog: list[dict[str, Any]] = []

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(state.index_html)

    @router.get("/health", response_model=HealthOut)
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

    @router.get("/api/kg")
    def kg_info(top: int = Query(10, ge=1, le=100)) -> dict[str, Any]:
        """Counts, time span and the most frequent relations (``tkgqa kg info --json``); ``appendable``:
        whether ``POST /api/kg/facts`` is on; ``runs``: whether the runs browser is."""
        summary = kg_summary(state.kg, state.kg_path, top)
        return {**summary, "appendable": state.settings.allow_append, "runs": bool(state.settings.runs_dir)}

    @router.get("/api/methods", response_model=MethodsOut)
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

    @router.get("/api/examples", response_model=ExamplesOut)
    def examples() -> dict[str, Any]:
        """Example questions: a few of the benchmark's own questions (one per question type) when the
        server was started with its dataset, else the bundled demo set over the demo KG, else questions
        generated from the KG's facts."""
        if state.dataset_examples is not None:
            return {"examples": state.dataset_examples}
        return {"examples": demo_examples() if state.is_demo else kg_examples(state.kg)}

    return router

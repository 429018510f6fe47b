"""What every endpoint reads: :class:`ServiceState` (the KG and what is derived from it, the defaults, the
settings, the request policy and the method pool), built once by :func:`build_state` — for the FastAPI app
(:func:`tkgqa.service.app.create_app`) and the MCP server (:mod:`tkgqa.mcp_server`) alike. Each route module
builds its :class:`fastapi.APIRouter` over it and never imports :mod:`tkgqa.service.app`, which only
assembles them. No FastAPI here."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..kg.base import KGStore
from .jobs import MethodPool
from .live import LiveKG
from .policy import RequestPolicy, ServiceSettings

if TYPE_CHECKING:
    from ..datasets.core import Dataset


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


def load_index_html() -> str:
    return resources.files("tkgqa.service").joinpath("static/index.html").read_text(encoding="utf-8")


def open_served_store(kg: KGStore | str | None, settings: ServiceSettings) -> KGStore:
    """The served store: ``kg`` itself when loaded, a DuckDB file opened on disk (read-write only with
    ``allow_append``: this process is its one writer), any other path loaded, ``None``/``"demo"`` the
    bundled demo KG."""
    from ..kg.formats import is_persistent_store

    if isinstance(kg, str) and is_persistent_store(kg):  # a persistent store, served from disk
        from ..errors import NotFoundError
        from ..kg.duckdb_store import DuckDBStore

        try:
            return DuckDBStore.open(kg, read_only=not settings.allow_append, create=settings.create_store)
        except NotFoundError as exc:
            hint = " With --allow-append, --create starts a new empty store there."
            raise NotFoundError(str(exc) + hint) from None
    if isinstance(kg, str) or kg is None:
        from ..api.resolve import open_kg

        return open_kg(kg)
    return kg


def build_state(
    kg: KGStore | str | None = None,
    default_method: str = "symbolic",
    llm: str | None = None,
    *,
    settings: ServiceSettings | None = None,
    method_cache_size: int = 16,
    dataset: Dataset | None = None,
) -> ServiceState:
    """The state of a server answering over ``kg`` (see :func:`tkgqa.service.app.create_app` for the
    arguments). The default method is built here (in the pool's worker), so a bad spec fails at start."""
    from ..api.resolve import takes_llm
    from .queries import dataset_examples

    settings = settings or ServiceSettings()
    if kg is None and dataset is not None and dataset.kg_path is not None:
        kg = str(dataset.kg_path)
    path = kg if isinstance(kg, str) or kg is None else None
    store = open_served_store(kg, settings)
    pool = MethodPool(
        method_cache_size,
        queue_limit=settings.queue_limit,
        max_pending=settings.max_pending,
        workers=settings.method_workers,
        stuck_after_s=settings.request_timeout_s,  # no client waits longer: a worker still busy is stuck
    )
    pool.warm(default_method.strip(), llm if takes_llm(default_method) else None)
    return ServiceState(
        kg=store,
        kg_path=path,
        default_method=default_method.strip(),
        default_llm=llm,
        settings=settings,
        policy=RequestPolicy(settings, default_method, llm),
        pool=pool,
        live=LiveKG(store),
        index_html=load_index_html(),
        is_demo=path in (None, "demo"),
        dataset_examples=dataset_examples(dataset.questions, source=dataset.name) if dataset else None,
    )

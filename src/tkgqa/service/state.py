"""What every endpoint reads: :class:`ServiceState` (the KG and what is derived from it, the defaults, the
settings, the request policy and the method pool), built once by :func:`tkgqa.service.app.create_app`. Each
route module builds its :class:`fastapi.APIRouter` over it and never imports :mod:`tkgqa.service.app`,
which only assembles them."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..kg.base import KGStore
from .jobs import MethodPool
from .live import LiveKG
from .policy import RequestPolicy, ServiceSettings


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

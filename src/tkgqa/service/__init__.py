"""HTTP service and web UI for tkgqa (``tkgqa serve``).

``create_app(kg=..., default_method=..., llm=...)`` builds the FastAPI app; FastAPI and uvicorn come with the
``[service]`` extra and are imported only when the app is built, so ``import tkgqa.service`` works without
them. What the service shares with ``tkgqa ask`` (opening a KG, resolving a method, the answer's JSON) is in
:mod:`tkgqa.api.resolve` and :mod:`tkgqa.api.views`, below the service.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app", "require_service"]


def require_service(*, server: bool = False) -> None:
    """Raise :class:`ConfigError` unless FastAPI (and uvicorn, when ``server``) are importable."""
    needed = ["fastapi", "uvicorn"] if server else ["fastapi"]
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"the tkgqa service needs {' and '.join(missing)}: install tkgqa[service] "
            "(pip install 'tkgqa[service]')"
        )


def __getattr__(name: str) -> Any:
    if name == "create_app":
        require_service()
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

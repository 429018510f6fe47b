"""tkgqa: question answering over temporal knowledge graphs.

The entry points, imported on first use (``import tkgqa`` stays light: no pandas, torch, DuckDB or FastAPI):

    tkgqa.ask("Who visited China in November 2014?")               # an Answer, over the bundled demo KG
    kg = tkgqa.load_kg("path/to/kg.txt")                             # a KG file, or "demo"
    tkgqa.evaluate("symbolic", tkgqa.load_dataset("multitq", ...), None, "runs/symbolic")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    ConfigError,
    ContextWindowError,
    DataError,
    LLMError,
    NotFoundError,
    ParseError,
    RateLimitError,
    ReplayMiss,
    TKGQAError,
)
from .lazy import lazy_exports

if TYPE_CHECKING:
    from .api.ask import ask
    from .datasets import load_dataset
    from .eval.runner import evaluate
    from .kg.loaders import load_kg

__version__ = "0.1.0"

#: The entry points and the module each comes from, imported on first access.
_LAZY = {
    "ask": "tkgqa.api.ask",
    "evaluate": "tkgqa.eval.runner",
    "load_kg": "tkgqa.kg.loaders",
    "load_dataset": "tkgqa.datasets",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())  # each imported once, on first access


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "ConfigError",
    "ContextWindowError",
    "DataError",
    "LLMError",
    "NotFoundError",
    "ParseError",
    "RateLimitError",
    "ReplayMiss",
    "TKGQAError",
    "__version__",
    "ask",
    "evaluate",
    "load_dataset",
    "load_kg",
]

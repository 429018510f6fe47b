"""Imports the built-in methods so they register themselves in :data:`tkgqa.methods.base.METHODS`.

Each import is guarded: a method whose optional dependencies are missing is simply not registered.
"""

from __future__ import annotations

import importlib

for _module in ("symbolic", "ari", "baselines", "timer4", "cik", "hybrid"):
    try:
        importlib.import_module(f"tkgqa.methods.{_module}")
    except ModuleNotFoundError as exc:  # not written yet, or an optional dependency is missing
        if not (exc.name or "").startswith(("tkgqa.methods.", "torch", "sentence_transformers", "faiss")):
            raise

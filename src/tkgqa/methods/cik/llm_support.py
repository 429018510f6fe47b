"""Small LLM helpers shared by the CIK-LLM and TimeR4 methods: resolving a backend and usage accounting."""

from __future__ import annotations

from typing import Any

from ...llm.base import LLMBackend, Usage, resolve_llm
from ...llm.cache import price_for
from ..base import empty_usage


def resolve_backend(llm: str | LLMBackend | None) -> LLMBackend | None:
    """``None`` stays ``None``; a spec string goes through :func:`resolve_llm`; a backend is used as is."""
    if llm is None or isinstance(llm, LLMBackend):
        return llm
    return resolve_llm(llm)


def usage_dict(usage: Usage, llm: LLMBackend | None) -> dict[str, float]:
    """:class:`Usage` → the ``Answer.usage`` dict, with the cost from the model's price table."""
    out = empty_usage()
    out["llm_calls"] = usage.calls
    out["prompt_tokens"] = usage.prompt_tokens
    out["completion_tokens"] = usage.completion_tokens
    out["parse_failures"] = usage.parse_failures
    if llm is not None:
        price_in, price_out = price_for(str(getattr(llm, "model_id", "")))
        out["cost_usd"] = (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1e6
    return out


def error_usage(exc: BaseException) -> Usage:
    """The usage a failed :func:`complete_parsed` carried (``ParseError.usage``), else one failed call."""
    found: Any = getattr(exc, "usage", None)
    return found if isinstance(found, Usage) else Usage(calls=1)

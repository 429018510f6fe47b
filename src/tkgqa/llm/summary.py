"""Sums over the run log: per question (:func:`usage_summary`) and per model/method (:func:`summarize_log`).

Each row becomes a :class:`~tkgqa.usage.Usage` (:func:`row_usage`) priced by
:func:`~tkgqa.llm.pricing.usage_cost`, the same function that prices ``Answer.usage``, so the log and an
eval report of the same calls agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ..usage import Usage
from .cache import LLMCache
from .pricing import PRICES_PER_MTOK, is_local, price_key, usage_cost


class UsageTotals(BaseModel):
    """Counters summed over run-log rows: calls, cache hits, errors, parse failures, tokens, latency, cost."""

    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0


class QuestionUsage(UsageTotals):
    """Calls, tokens and estimated cost of one (method, question_id)."""

    method: str | None = None
    question_id: str | None = None


class UsageSummary(BaseModel):
    rows: list[QuestionUsage]
    total: QuestionUsage

    def by_question(self) -> dict[str | None, QuestionUsage]:
        return {r.question_id: r for r in self.rows}


class GroupUsage(UsageTotals):
    """Calls, tokens, latency and estimated cost of one group of run-log rows (a model, a method)."""

    key: str | None = None


class LogSummary(BaseModel):
    """The run log summed up: overall, per model and per method (``None`` = untagged calls).

    ``unpriced_models`` lists the remote models with uncached calls but no entry in the price table (their
    cost is counted as 0)."""

    total: GroupUsage
    by_model: list[GroupUsage]
    by_method: list[GroupUsage]
    unpriced_models: list[str]


def row_usage(call: Mapping[str, Any]) -> Usage:
    """The :class:`Usage` one run-log row stands for (a cached row: one cached call, its tokens cached)."""
    if call["kind"] == "parse_failure":
        return Usage(parse_failures=1)
    fresh = Usage(prompt_tokens=call["prompt_tokens"], completion_tokens=call["completion_tokens"], calls=1)
    return fresh.as_cache_hit() if call["cached"] else fresh


def priced_model(call: Mapping[str, Any]) -> str:
    """The model a row is priced by: the one asked for (``request_model``; rows logged before schema 2
    have only the one that answered)."""
    return str(call.get("request_model") or call["model"] or "")


def row_cost(call: Mapping[str, Any], prices: Mapping[str, tuple[float, float]] | None = None) -> float:
    return usage_cost(row_usage(call), priced_model(call), backend=call["backend"] or "", prices=prices)


def _accumulate(
    acc: UsageTotals, call: Mapping[str, Any], prices: Mapping[str, tuple[float, float]] | None
) -> None:
    usage = row_usage(call)
    acc.parse_failures += usage.parse_failures
    acc.calls += usage.calls
    acc.cached_calls += usage.cached_calls
    acc.prompt_tokens += usage.prompt_tokens
    acc.completion_tokens += usage.completion_tokens
    if call["kind"] == "parse_failure":
        return
    acc.errors += call["error"] is not None
    acc.latency_s += call["latency_s"]
    acc.cost_usd += row_cost(call, prices)


def usage_summary(
    path: str | os.PathLike[str] | None = None,
    *,
    method: str | None = None,
    since: float | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> UsageSummary:
    """Per-(method, question) calls/tokens and cost from the run log (priced by :func:`row_cost`)."""
    rows: dict[tuple[str | None, str | None], QuestionUsage] = {}
    total = QuestionUsage(method=method)
    for call in LLMCache(path).calls(method=method, since=since):
        q = rows.setdefault(
            (call["method"], call["question_id"]),
            QuestionUsage(method=call["method"], question_id=call["question_id"]),
        )
        for acc in (q, total):
            _accumulate(acc, call, prices)
    return UsageSummary(rows=list(rows.values()), total=total)


def summarize_log(
    path: str | os.PathLike[str] | None = None,
    *,
    method: str | None = None,
    since: float | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> LogSummary:
    """Sum the run log per model and per method, priced by :func:`row_cost` with ``prices`` (default
    :data:`~tkgqa.llm.pricing.PRICES_PER_MTOK`)."""
    table = PRICES_PER_MTOK if prices is None else prices
    total = GroupUsage(key=method)
    by_model: dict[str | None, GroupUsage] = {}
    by_method: dict[str | None, GroupUsage] = {}
    unpriced: set[str] = set()
    for call in LLMCache(path).calls(method=method, since=since):
        model = call["model"] or None
        billable = not is_local(call["backend"] or "") and not call["cached"] and call["kind"] == "call"
        if billable and priced_model(call) and price_key(priced_model(call), table) is None:
            unpriced.add(priced_model(call))
        for acc in (
            total,
            by_model.setdefault(model, GroupUsage(key=model)),
            by_method.setdefault(call["method"], GroupUsage(key=call["method"])),
        ):
            _accumulate(acc, call, table)
    return LogSummary(
        total=total,
        by_model=sorted(by_model.values(), key=_by_calls),
        by_method=sorted(by_method.values(), key=_by_calls),
        unpriced_models=sorted(unpriced),
    )


def _by_calls(group: GroupUsage) -> tuple[int, str]:
    return (-group.calls, group.key or "")

"""Prices and the one rule that turns :class:`~tkgqa.usage.Usage` into an estimated cost in USD.

:func:`usage_cost` is used for every cost figure tkgqa shows: ``Answer.usage`` (hence ``report.json``),
``tkgqa llm complete`` and ``tkgqa llm log``. The rule:

- a call served from the cache costs $0 (its tokens are still reported, as cached);
- a local backend (:data:`LOCAL_BACKENDS`) costs $0;
- any other call costs ``prompt_tokens * input + completion_tokens * output`` (USD per 1M tokens) at the
  price of the model *asked for* (the longest price-table entry prefixing its name; unknown models cost 0).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from ..errors import ConfigError
from ..usage import Usage
from ..userfiles import parse_json, read_input

#: USD per 1M tokens (input, output). Unknown and local models cost 0.
PRICES_PER_MTOK: Mapping[str, tuple[float, float]] = MappingProxyType(
    {
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4o": (2.50, 10.00),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-3.5-turbo": (0.50, 1.50),
    }
)

#: Backends that run locally: their calls cost nothing whatever the model is called.
LOCAL_BACKENDS = frozenset({"llamacpp", "fake", "replay"})


def price_key(model: str, table: Mapping[str, tuple[float, float]] | None = None) -> str | None:
    """The entry of ``table`` (default :data:`PRICES_PER_MTOK`) that prices ``model``: the longest one
    prefixing its name (after any ``backend:`` or ``org/`` prefix), case-insensitive; ``None`` if none."""
    prices = PRICES_PER_MTOK if table is None else table
    name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower()
    return max((k for k in prices if k and name.startswith(k.lower())), key=len, default=None)


def price_for(model: str, table: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
    """(input, output) USD per 1M tokens of ``model`` (see :func:`price_key`), else ``(0, 0)``."""
    prices = PRICES_PER_MTOK if table is None else table
    best = price_key(model, prices)
    return prices[best] if best is not None else (0.0, 0.0)


def is_local(backend: str) -> bool:
    """Whether calls to the backend called ``backend`` are free (it runs on this machine)."""
    return backend in LOCAL_BACKENDS


def usage_cost(
    usage: Usage,
    model: str,
    *,
    backend: str = "",
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> float:
    """Estimated USD cost of ``usage`` spent on ``model`` through the backend called ``backend``.

    The module docstring states the rule; cached tokens (``usage.cached_*_tokens``) are free.
    ``prices`` defaults to :data:`PRICES_PER_MTOK`."""
    if is_local(backend) or not model:
        return 0.0
    price_in, price_out = price_for(model, prices)
    return (usage.fresh_prompt_tokens * price_in + usage.fresh_completion_tokens * price_out) / 1e6


def load_price_table(path: str | os.PathLike[str]) -> dict[str, tuple[float, float]]:
    """Read a JSON price table: ``{"model-prefix": [input, output]}`` or ``{"model-prefix": {"input": x,
    "output": y}}`` in USD per 1M tokens. ConfigError on anything else."""
    file = Path(path)
    try:
        data = parse_json(read_input(file, what="the price table", limit=1 << 20))
    except ValueError as exc:  # not UTF-8, not JSON, nested too deep, a huge integer
        raise ConfigError(f"the price table {file} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the price table {file} must be a JSON object of model -> [input, output]")
    table: dict[str, tuple[float, float]] = {}
    for model, value in data.items():
        pair = [value.get("input"), value.get("output")] if isinstance(value, dict) else value
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in pair)
        ):
            raise ConfigError(
                f"bad price for {model!r} in {file}: use [input, output] or {{'input': x, 'output': y}} "
                "(USD per 1M tokens, >= 0)"
            )
        table[str(model).lower()] = (float(pair[0]), float(pair[1]))
    return table

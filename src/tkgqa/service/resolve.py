"""What ``tkgqa ask`` and the HTTP service share: opening a KG, resolving a method (with its LLM) and
serializing an :class:`~tkgqa.methods.base.Answer` to JSON.

Nothing here imports FastAPI, so the CLI uses it without the ``[service]`` extra.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..kg.memory import TemporalKG
from ..methods.base import Answer, Method, resolve_method

OptionValue = str | int | float | bool

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|bearer|credential)", re.I)
_SECRET_TEXT = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+[A-Za-z0-9._\-]{20,})")
REDACTED = "***"


def open_kg(path: str | None) -> TemporalKG:
    """``None`` or ``"demo"`` → the bundled demo KG; otherwise load (and cache) the file at ``path``."""
    from ..kg.loaders import load_demo_kg, load_kg

    if path is None or path == "demo":
        return load_demo_kg()
    return load_kg(path)


def method_options(
    llm: str | None = None, policy: str | None = None, options: Mapping[str, OptionValue] | None = None
) -> dict[str, Any]:
    """Keyword arguments for :func:`~tkgqa.methods.base.resolve_method`: ``options`` plus ``llm``/``policy``
    when given (those two win over the same keys in ``options``)."""
    opts: dict[str, Any] = dict(options or {})
    for key in opts:
        if not key.isidentifier():
            raise ConfigError(f"bad method option name {key!r}; use identifiers such as 'policy'")
    if llm:
        opts["llm"] = llm
    if policy:
        opts["policy"] = policy
    return opts


def build_method(
    spec: str,
    *,
    llm: str | None = None,
    policy: str | None = None,
    options: Mapping[str, OptionValue] | None = None,
) -> Method:
    """The method for ``spec`` (``"symbolic"``, ``"ari:policy=symbolic"``, ``"timer4"``…) configured with
    an LLM spec (``"fake"``, ``"openai:gpt-4o-mini"``, ``"llamacpp:smollm2"``) and extra options."""
    if not spec or not spec.strip():
        raise ConfigError("no method given; use e.g. 'symbolic' or 'ari:policy=symbolic'")
    return resolve_method(spec.strip(), **method_options(llm, policy, options))


def redact(value: Any) -> Any:
    """``value`` with secrets masked: values under keys like ``api_key``/``authorization`` and strings that
    look like API keys (``sk-…``, ``Bearer …``)."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _SECRET_TEXT.sub(REDACTED, value)
    return value


def answer_payload(answer: Answer, latency_ms: float | None = None) -> dict[str, Any]:
    """The JSON object of ``tkgqa ask --json`` and ``POST /api/ask``: ``answers``, ``evidence`` (facts as
    ``{subject, relation, object, start, end}``), ``trace``, ``usage``, ``abstained``, ``reason``,
    ``raw_output`` and ``latency_ms``; JSON-safe (odd trace values become strings) with secrets masked."""
    data = answer.to_dict()
    data["latency_ms"] = round(latency_ms, 1) if latency_ms is not None else None
    safe = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return dict(redact(safe))


class MethodCache:
    """Resolved methods keyed by (spec, llm, options), least recently used dropped beyond ``size``.

    Each entry carries a lock: methods keep per-KG caches that are not thread-safe, so one method instance
    answers one question at a time (different methods run concurrently)."""

    def __init__(self, size: int = 16) -> None:
        self.size = max(1, size)
        self._entries: OrderedDict[tuple[str, str, str], tuple[Method, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, spec: str, *, llm: str | None = None, options: Mapping[str, OptionValue] | None = None
    ) -> tuple[Method, threading.Lock]:
        key = (spec.strip(), llm or "", json.dumps(dict(options or {}), sort_keys=True, default=str))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            entry = (build_method(spec, llm=llm, options=options), threading.Lock())
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return entry

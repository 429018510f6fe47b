"""Core LLM types: messages, requests, responses, usage, the backend interface and its registry."""

from __future__ import annotations

import contextvars
import hashlib
import importlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..registry import Registry

Role = Literal["system", "user", "assistant"]

#: Keys never taken into a cache key (nor stored): anything that looks like a credential.
SECRET_KEY_PATTERN = re.compile(r"(api[_-]?key|authorization|token|secret|password)", re.IGNORECASE)


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str

    @classmethod
    def system(cls, content: str) -> Message:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        return cls(role="assistant", content=content)


class LLMRequest(BaseModel):
    """Everything that determines a completion. ``extra`` holds backend-specific body parameters."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int | None = 256
    stop: tuple[str, ...] | None = None
    json_schema: dict[str, Any] | None = None
    grammar: str | None = None
    choices: tuple[str, ...] | None = None
    model: str | None = None
    seed: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    def cache_key(self, backend_id: str = "") -> str:
        """sha256 of this request and ``backend_id`` as sorted JSON; secret-looking ``extra`` keys dropped."""
        data = self.model_dump(mode="json")
        data["extra"] = {k: v for k, v in self.extra.items() if not SECRET_KEY_PATTERN.search(k)}
        blob = json.dumps({"backend": backend_id, "request": data}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Usage(BaseModel):
    """Token and call counts; ``a + b`` adds them up."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    parse_failures: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            parse_failures=self.parse_failures + other.parse_failures,
        )


class LLMResponse(BaseModel):
    """The text a backend returned, with usage, wall-clock latency and the model that answered."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False


def make_request(messages: Sequence[Message] | str, **kw: Any) -> LLMRequest:
    """Build an :class:`LLMRequest`; a bare string becomes one user message."""
    msgs = (Message.user(messages),) if isinstance(messages, str) else tuple(messages)
    for key in ("stop", "choices"):
        if kw.get(key) is not None:
            kw[key] = tuple(kw[key])
    return LLMRequest(messages=msgs, **kw)


def choice_instruction(choices: Sequence[str]) -> str:
    """The instruction appended to a prompt whose answer must be one of ``choices``."""
    listed = "\n".join(f"- {c}" for c in choices)
    return f"Answer with exactly one of the following options, copied verbatim, and nothing else:\n{listed}"


def with_choice_instruction(messages: Sequence[Message], choices: Sequence[str]) -> list[Message]:
    """``messages`` plus the choice instruction as a final user message."""
    return [*messages, Message.user(choice_instruction(choices))]


class LLMBackend(ABC):
    """A chat-completion backend. Subclasses set ``name`` and ``model_id`` and implement ``complete``."""

    name: str = "llm"
    model_id: str = ""

    @abstractmethod
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Run one request."""

    def cache_namespace(self) -> str:
        """What, besides the request, determines the answer (no secrets); part of the cache key."""
        return f"{self.name}:{self.model_id}"

    def chat(self, messages: Sequence[Message] | str, **request_kw: Any) -> LLMResponse:
        """Convenience: ``complete(make_request(messages, **request_kw))``."""
        return self.complete(make_request(messages, **request_kw))

    def complete_many(self, requests: Iterable[LLMRequest], max_workers: int = 4) -> list[LLMResponse]:
        return complete_many(self, requests, max_workers=max_workers)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"


def complete_many(
    llm: LLMBackend, requests: Iterable[LLMRequest], *, max_workers: int = 4
) -> list[LLMResponse]:
    """Run requests on a bounded thread pool, keeping order; the first failure is raised.

    Each task runs in a copy of the caller's context, so :func:`llm_context` tags carry over.
    """
    reqs = list(requests)
    if max_workers < 1:
        raise ConfigError(f"max_workers must be >= 1, got {max_workers}")
    if max_workers == 1 or len(reqs) <= 1:
        return [llm.complete(r) for r in reqs]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(reqs))) as pool:
        futures = [pool.submit(contextvars.copy_context().run, llm.complete, r) for r in reqs]
        return [f.result() for f in futures]


LLM_BACKENDS: Registry[LLMBackend] = Registry("LLM backend")

#: Modules whose import registers the built-in backends (imported on first resolve).
BUILTIN_BACKEND_MODULES = ("tkgqa.llm.openai_backend", "tkgqa.llm.llamacpp_backend", "tkgqa.testing")


def _load_builtin_backends() -> None:
    for mod in BUILTIN_BACKEND_MODULES:
        importlib.import_module(mod)


def resolve_llm(
    spec: str | type | LLMBackend,
    *,
    cache: bool = True,
    cache_path: str | None = None,
    log: bool = True,
    **kwargs: Any,
) -> LLMBackend:
    """Resolve ``"openai:gpt-4o-mini"``, ``"llamacpp:smollm2"``, ``"fake"``, a class or an instance.

    The result is wrapped in :class:`~tkgqa.llm.cache.CachedLLM`, which caches temperature-0 requests
    (unless ``cache=False``) and logs every call (unless ``log=False``) under ``$TKGQA_HOME``.
    """
    from .cache import CachedLLM

    _load_builtin_backends()
    if isinstance(spec, CachedLLM):
        return spec
    backend = LLM_BACKENDS.resolve(spec, **kwargs)
    if not callable(getattr(backend, "complete", None)):
        raise ConfigError(f"{spec!r} is not an LLM backend (it has no complete(request) method)")
    return CachedLLM(backend, cache=cache, path=cache_path, log=log)

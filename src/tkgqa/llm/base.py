"""Core LLM types: messages, requests, responses, usage, the backend interface and its registry."""

from __future__ import annotations

import contextvars
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..credentials import without_secrets
from ..errors import ConfigError
from ..registry import Registry
from ..usage import Usage

Role = Literal["system", "user", "assistant"]


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

    def stored(self) -> dict[str, Any]:
        """This request as JSON-ready data without credentials: what the cache key hashes and the run log
        stores (credentials removed from ``extra`` by :func:`tkgqa.credentials.without_secrets`; nothing
        else)."""
        data = self.model_dump(mode="json")
        data["extra"] = without_secrets(data["extra"])
        return data

    def cache_key(self, backend_id: str = "") -> str:
        """sha256 of :meth:`stored` and ``backend_id`` (the backend's cache namespace) as sorted JSON."""
        blob = json.dumps(
            {"backend": backend_id, "request": self.stored()}, sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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
    #: Whether :class:`~tkgqa.llm.cache.CachedLLM` may serve this backend's temperature-0 replies from the
    #: response cache (``False`` for ``replay:``, whose replies come from a file already).
    cacheable: bool = True

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

#: The built-in backends: name → (``"module:attr"`` of the implementation, the ``tkgqa`` extra its optional
#: dependencies come from). Registered at import as lazy references, so ``LLM_BACKENDS.names()`` lists them
#: all in a fresh interpreter while none of their modules is imported until one is resolved. Third-party
#: backends use the ``tkgqa.llm_backends`` entry-point group.
BUILTIN_BACKENDS: dict[str, tuple[str, str | None]] = {
    "openai": ("tkgqa.llm.openai_backend:OpenAIBackend", "llm"),
    "llamacpp": ("tkgqa.llm.llamacpp_backend:LlamaCppBackend", "local"),
    "fake": ("tkgqa.testing:FakeLLM", None),
    "replay": ("tkgqa.llm.replay_backend:ReplayLLM", None),
}
for _name, (_target, _extra) in BUILTIN_BACKENDS.items():
    LLM_BACKENDS.add_lazy(_name, _target, extra=_extra)

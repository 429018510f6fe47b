"""Test helpers: :class:`FakeLLM`, a scripted backend registered as ``"fake"``; :class:`ListStore`, the naive
reference :class:`~tkgqa.kg.KGStore` of the store conformance suite."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from .errors import LLMError
from .kg.reference import ListStore as ListStore
from .llm.base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse
from .llm.tokens import count_message_tokens, count_tokens
from .usage import Usage

Responder = Callable[[LLMRequest], str]


def default_responder(request: LLMRequest) -> str:
    """Answer for an unscripted FakeLLM: the first choice, ``{}`` for a JSON schema, else ``"OK"``."""
    if request.choices:
        return request.choices[0]
    if request.json_schema is not None:
        return "{}"
    return "OK"


@LLM_BACKENDS.register("fake")
class FakeLLM(LLMBackend):
    """Returns scripted responses (a list consumed in order, or ``responder(request) -> str``).

    Every request received is appended to ``requests``. Token usage uses the offline counter.
    """

    name = "fake"

    def __init__(
        self,
        responses: Sequence[str] | Responder | None = None,
        *,
        model: str = "fake",
        spec: str | None = None,
    ) -> None:
        self.model_id = spec or model
        self.requests: list[LLMRequest] = []
        self._responder: Responder | None = None
        self._script: list[str] | None = None
        if callable(responses):
            self._responder = responses
        elif responses is None:
            self._responder = default_responder
        elif isinstance(responses, str):
            self._script = [responses]
        else:
            self._script = list(responses)
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return len(self.requests)

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
            if self._script is not None and index >= len(self._script):
                last = request.messages[-1].content[:200] if request.messages else ""
                raise LLMError(
                    f"FakeLLM ran out of scripted responses: {len(self._script)} given, call #{index + 1} "
                    f"asked for one more (last message: {last!r})"
                )
        text = self._script[index] if self._script is not None else self._responder(request)  # type: ignore[misc]
        usage = Usage(
            prompt_tokens=count_message_tokens(request.messages),
            completion_tokens=count_tokens(text),
            calls=1,
        )
        return LLMResponse(text=text, usage=usage, latency_s=0.0, model=request.model or self.model_id)

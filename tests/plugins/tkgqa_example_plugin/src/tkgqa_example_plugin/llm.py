"""The ``echo`` LLM backend: answers with the last message, prefixed by its spec (``echo:PREFIX``)."""

from __future__ import annotations

from tkgqa.llm import LLMBackend, LLMRequest, LLMResponse, Usage


class EchoLLM(LLMBackend):
    name = "echo"

    def __init__(self, spec: str | None = None) -> None:
        self.model_id = spec or "echo"

    def complete(self, request: LLMRequest) -> LLMResponse:
        last = request.messages[-1].content if request.messages else ""
        return LLMResponse(text=f"{self.model_id}: {last}", usage=Usage(calls=1), model=self.model_id)

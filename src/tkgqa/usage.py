"""Token and call counts of LLM calls (:class:`Usage`): a leaf module (it imports nothing from tkgqa), so
the error types (:mod:`tkgqa.errors`) can carry the usage of a failed call without depending on the LLM layer.
The public name is :data:`tkgqa.llm.Usage`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """Token and call counts; ``a + b`` adds them up.

    ``calls`` counts every call, ``cached_calls`` those of them served from the cache;
    ``prompt_tokens``/``completion_tokens`` count every call's tokens, ``cached_prompt_tokens``/
    ``cached_completion_tokens`` the part of them that came from the cache. A cache hit is recorded once,
    by :meth:`as_cache_hit`: one call, one cached call, its tokens reported and marked cached — so it costs
    nothing under :func:`tkgqa.llm.pricing.usage_cost`, the one place usage becomes money.
    """

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    parse_failures: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    #: Calls answered by the ``replay:`` backend (:mod:`tkgqa.llm.replay_backend`): by the same prompt, by
    #: question id and stage, as a parse re-ask of a recorded exchange, or not at all (a ``ReplayMiss``).
    #: Zero for every other backend.
    replay_exact: int = 0
    replay_by_id: int = 0
    replay_reask: int = 0
    replay_miss: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def fresh_calls(self) -> int:
        """Calls the backend actually served (not from the cache)."""
        return self.calls - self.cached_calls

    @property
    def fresh_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.cached_prompt_tokens

    @property
    def fresh_completion_tokens(self) -> int:
        return self.completion_tokens - self.cached_completion_tokens

    def as_cache_hit(self) -> Usage:
        """The usage of one call answered from the cache with a response that cost ``self`` when fresh."""
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            calls=1,
            cached_calls=1,
            cached_prompt_tokens=self.prompt_tokens,
            cached_completion_tokens=self.completion_tokens,
        )

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})

"""Token and call counts of LLM calls (:class:`Usage`): a leaf module (it imports nothing from tkgqa), so
the error types (:mod:`tkgqa.errors`) can carry the usage of a failed call without depending on the LLM layer.
The public name is :data:`tkgqa.llm.Usage`; :class:`AnswerUsage` is what one answer spent, priced."""

from __future__ import annotations

from dataclasses import dataclass, field

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


#: The written form of a priced :class:`AnswerUsage` (``tkgqa.llm.USAGE_KEYS``), and of one never priced
#: (a method that calls no LLM).
PRICED_KEYS = (
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "parse_failures",
    "cost_usd",
)
UNPRICED_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "parse_failures", "cost_usd")
#: Written only when the ``replay:`` backend answered (or missed) a call.
REPLAY_FIELDS = ("replay_exact", "replay_by_id", "replay_reask", "replay_miss")
_FIELD = {"llm_calls": "calls"}


@dataclass(frozen=True)
class AnswerUsage:
    """What one answer spent (``Answer.usage``): the call and token ``counts``, their estimated cost and
    whether they were ``priced`` (made into an answer's usage by :func:`tkgqa.llm.answer_usage`; a method
    that calls no LLM leaves the usage unpriced). ``a + b`` adds two up (a method answering in parts).

    :meth:`to_dict` is the written form (``results.jsonl``, the API): the keys of :data:`PRICED_KEYS` (plus
    the replay counts when any is set) or of :data:`UNPRICED_KEYS`; a sum writes its parts' keys in order."""

    counts: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    priced: bool = False
    #: the keys :meth:`to_dict` writes, in order (derived from the above unless given by a sum)
    keys: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.keys:
            keys: tuple[str, ...] = PRICED_KEYS if self.priced else UNPRICED_KEYS
            if self.priced and any(getattr(self.counts, key) for key in REPLAY_FIELDS):
                keys += REPLAY_FIELDS
            object.__setattr__(self, "keys", keys)

    def __add__(self, other: AnswerUsage) -> AnswerUsage:
        if not isinstance(other, AnswerUsage):
            return NotImplemented
        return AnswerUsage(
            self.counts + other.counts,
            self.cost_usd + other.cost_usd,
            self.priced or other.priced,
            tuple(dict.fromkeys(self.keys + other.keys)),
        )

    def to_dict(self) -> dict[str, float]:
        return {
            key: self.cost_usd if key == "cost_usd" else getattr(self.counts, _FIELD.get(key, key))
            for key in self.keys
        }

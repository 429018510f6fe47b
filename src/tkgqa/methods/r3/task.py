"""What kind of query R3 is answering (yes/no question, claim, choice among options) and how it talks back:
the verdict in the dataset's words (``extra["choices"]``: ``yes``/``no``, ``true``/``false``), the options of
a preference query, and how a refused reply is told (:func:`short_error`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ...datasets.base import Question
from ...llm import LLMBackend
from ...prompts.ask import Asker, without_raw
from .prompts.ours import Verdict


class TaskKind(StrEnum):
    YES_NO = "yes_no"
    CLAIM = "claim"
    CHOICE = "choice"


@dataclass(frozen=True)
class Option:
    id: str
    text: str


@dataclass(frozen=True)
class Task:
    kind: TaskKind
    words: tuple[str, str] = ("yes", "no")  # the answers for TRUE and FALSE
    options: tuple[Option, ...] = ()

    @classmethod
    def of(cls, question: Question) -> Task:
        extra = question.extra or {}
        raw_options = extra.get("options")
        choices = [str(c) for c in extra.get("choices") or []]
        if isinstance(raw_options, list) and raw_options:
            opts = tuple(
                Option(str(o.get("id", i)), str(o.get("text", ""))) for i, o in enumerate(raw_options)
            )
            return cls(TaskKind.CHOICE, options=opts)
        if len(choices) > 2:
            return cls(TaskKind.CHOICE, options=tuple(Option(str(i), c) for i, c in enumerate(choices)))
        claim = question.qtype == "claim"
        if len(choices) == 2:
            return cls(TaskKind.CLAIM if claim else TaskKind.YES_NO, (choices[0], choices[1]))
        return cls(TaskKind.CLAIM, ("true", "false")) if claim else cls(TaskKind.YES_NO)

    @property
    def claim(self) -> bool:
        return self.kind == TaskKind.CLAIM

    def word(self, verdict: Verdict) -> str | None:
        """The answer string of a verdict (``None`` for UNKNOWN)."""
        if verdict == Verdict.TRUE:
            return self.words[0]
        if verdict == Verdict.FALSE:
            return self.words[1]
        return None


def short_error(exc: BaseException, limit: int = 300) -> str:
    text = without_raw(exc)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def calls_of(llm: LLMBackend, max_tokens: int) -> Asker:
    """The LLM calls of one question: usage summed, refused replies re-asked; an
    :class:`~tkgqa.errors.LLMError` (the backend failed) propagates with the failed call's own usage."""
    return Asker(llm, max_tokens=max_tokens, charge=False, describe=short_error)

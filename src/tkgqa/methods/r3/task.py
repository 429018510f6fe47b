"""What kind of query R3 is answering (yes/no question, claim, choice among options) and how it talks back:
the verdict in the dataset's words (``extra["choices"]``: ``yes``/``no``, ``true``/``false``), the options of
a preference query, and the LLM calls of one question with their usage and rejected replies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from ...datasets.base import Question
from ...errors import ParseError
from ...llm import LLMBackend, Message, ParsedResponse, Usage, complete_parsed, error_usage
from ...prompts.r3 import Verdict

T = TypeVar("T")


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
    text = str(exc).split("; raw text:", 1)[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Calls:
    """The LLM calls of one question: usage summed, each rejected reply's reason kept.

    A :class:`ParseError` after the retries is raised to the caller (who decides what the step yields); an
    :class:`~tkgqa.errors.LLMError` (the backend failed) is never caught here."""

    llm: LLMBackend
    max_tokens: int = 512
    usage: Usage = field(default_factory=Usage)

    def ask(
        self,
        messages: Sequence[Message],
        parser: Callable[[str], T],
        *,
        retries: int = 1,
        rejected: list[str] | None = None,
        max_tokens: int | None = None,
    ) -> ParsedResponse[T]:
        errors: list[str] = []

        def logged(text: str) -> T:
            try:
                return parser(text)
            except ParseError as exc:
                errors.append(short_error(exc))
                raise

        try:
            parsed = complete_parsed(
                self.llm, list(messages), logged, retries=retries, max_tokens=max_tokens or self.max_tokens
            )
        except ParseError as exc:
            self.usage = self.usage + error_usage(exc)
            raise
        finally:
            if rejected is not None:
                rejected.extend(errors)
        self.usage = self.usage + parsed.usage
        return parsed

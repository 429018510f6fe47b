"""Prompt convention: a prompt is a pure ``build(context) -> list[Message]`` plus a ``parse(text) -> T``.

Method authors either implement :class:`PromptSpec` or wrap two functions in :class:`Prompt`, then call
:func:`~tkgqa.prompts.ask.ask`, which handles the LLM call, parsing, the re-ask on a parse error and the
outcome (a parsed value or a refusal with a reason). A request built elsewhere is a :class:`Bound`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from ..llm.base import Message

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

Context = Mapping[str, Any]


@runtime_checkable
class PromptSpec(Protocol[T_co]):
    """What every prompt provides: a name, a pure message builder and a parser (raising ParseError)."""

    @property
    def name(self) -> str: ...

    def build(self, context: Context) -> list[Message]: ...

    def parse(self, text: str) -> T_co: ...


@dataclass(frozen=True)
class Prompt(Generic[T]):
    """A :class:`PromptSpec` made of two functions."""

    name: str
    builder: Callable[[Context], list[Message]]
    parser: Callable[[str], T]

    def build(self, context: Context) -> list[Message]:
        return self.builder(context)

    def parse(self, text: str) -> T:
        return self.parser(text)


@dataclass(frozen=True)
class Bound(Generic[T]):
    """A :class:`PromptSpec` already built for one call: its ``messages`` and a ``parse`` that may close over
    what they listed (the choices, the fact ids shown)."""

    name: str
    messages: Sequence[Message]
    parse: Callable[[str], T]

    def build(self, context: Context | None = None) -> list[Message]:
        return list(self.messages)

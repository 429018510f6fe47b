"""The one way a method asks an LLM: build a :class:`~tkgqa.prompts.base.PromptSpec`, call, parse, re-ask,
and get a typed outcome.

    outcome = ask(llm, ANSWER_PROMPT, {"question": q}, retries=1, max_tokens=64)
    match outcome:
        case Parsed():
            answers = outcome.value
        case Refused():
            return Answer.abstain(outcome.reason, trace, raw_output=outcome.raw)

The ladder, written once here:

1. the messages are ``prompt.build(context)``; the reply is read by ``prompt.parse`` (which raises
   :class:`~tkgqa.errors.ParseError`);
2. an unreadable reply is re-asked ``retries`` times with the reply and the reason appended (each failure
   counts in ``usage.parse_failures``; see :func:`~tkgqa.llm.complete_parsed`);
3. after the last failed reading the outcome is :class:`Refused` with the caller's abstention ``reason``, the
   last raw text and what the attempts spent — never an exception the caller must remember to catch;
4. an :class:`~tkgqa.errors.LLMError` (the backend is down, a timeout, a bad key) propagates: an
   infrastructure failure is an error, never an abstention. ``spent`` (what earlier steps of the question
   cost) is charged to it first (:func:`~tkgqa.llm.charge`) so the error row carries the question's usage.
   The one exception, when ``window=True``: a :class:`~tkgqa.errors.ContextWindowError` (a property of this
   question's prompt, not of the infrastructure) is :class:`Refused` too.

:class:`Asker` is the same with a running usage total (the LLM calls of one question). :func:`vote` is the
self-consistency variant: several sampled replies, the most frequent one read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from ..errors import ConfigError, ContextWindowError, LLMError, ParseError
from ..llm import LLMBackend, Usage, charge, complete_parsed, error_usage
from ..llm.parsing import error_reason
from ..outcomes import AbstainReason
from .base import Context, PromptSpec

T = TypeVar("T")

#: The default abstention reason of a reply that could not be read after the re-asks.
UNPARSABLE: str = AbstainReason.UNPARSABLE_OUTPUT
#: The abstention reason of a prompt that does not fit the model's context window (``window=True``).
CONTEXT_WINDOW: str = AbstainReason.CONTEXT_WINDOW

_NO_CONTEXT: Mapping[str, Any] = {}


class Refusal(StrEnum):
    """Why an ask yielded no value."""

    UNPARSABLE = "unparsable"  # every reply failed the prompt's parser (or the backend's own check)
    CONTEXT_WINDOW = "context_window"  # the prompt did not fit (only with ``window=True``)


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """The parsed reply: ``value``, its raw ``text``, what the attempts spent, and how many there were."""

    value: T
    text: str
    usage: Usage
    attempts: int


@dataclass(frozen=True)
class Refused:
    """No value: ``reason`` (the caller's abstention reason), the error behind it, what the attempts spent."""

    reason: str
    error: ParseError | ContextWindowError
    usage: Usage

    @property
    def kind(self) -> Refusal:
        return Refusal.CONTEXT_WINDOW if isinstance(self.error, ContextWindowError) else Refusal.UNPARSABLE

    @property
    def raw(self) -> str:
        """The last raw reply (``""`` when the prompt did not fit)."""
        return self.error.raw if isinstance(self.error, ParseError) else ""

    @property
    def message(self) -> str:
        """The error as the traces show it: ``str(error)``, at most 300 characters."""
        return str(self.error)[:300]

    @property
    def brief(self) -> str:
        """The error without the raw reply :class:`~tkgqa.errors.ParseError` appends (:func:`without_raw`)."""
        return without_raw(self.error)


def without_raw(exc: BaseException) -> str:
    """``str(exc)`` without the ``; raw text: …`` part a :class:`~tkgqa.errors.ParseError` appends."""
    return str(exc).split("; raw text:", 1)[0]


Outcome = Parsed[T] | Refused


def ask(
    llm: LLMBackend,
    prompt: PromptSpec[T],
    context: Context = _NO_CONTEXT,
    *,
    retries: int = 1,
    reason: str = UNPARSABLE,
    spent: Usage | None = None,
    window: bool = False,
    on_reject: Callable[[ParseError], object] | None = None,
    **request_kw: Any,
) -> Parsed[T] | Refused:
    """Ask ``llm`` with ``prompt`` over ``context`` (see the module docstring for the ladder).

    ``retries``: re-asks after an unreadable reply (0: none, as ARI's paper preset). ``reason``: the
    :class:`Refused` reason. ``spent``: the usage of the question's earlier steps, charged to a propagating
    :class:`~tkgqa.errors.LLMError` (``None``: the caller charges it itself, or not at all). ``window``:
    a context-window overflow is :class:`Refused` (reason :data:`CONTEXT_WINDOW`) instead of an error.
    ``on_reject``: called with each reply the parser refused (not with a backend's own refusals).
    ``request_kw``: the request's options (``max_tokens``, ``choices``, …)."""
    parser: Callable[[str], T] = prompt.parse
    if on_reject is not None:
        report = on_reject

        def parser(text: str) -> T:
            try:
                return prompt.parse(text)
            except ParseError as exc:
                report(exc)
                raise

    try:
        got = complete_parsed(llm, prompt.build(context), parser, retries=retries, **request_kw)
    except ParseError as exc:
        return Refused(reason, exc, error_usage(exc))
    except ContextWindowError as exc:
        if window:
            return Refused(CONTEXT_WINDOW, exc, error_usage(exc))
        if spent is not None:
            charge(exc, spent)
        raise
    except LLMError as exc:
        if spent is not None:
            charge(exc, spent)
        raise
    return Parsed(got.value, got.text, got.usage, got.attempts)


def vote(
    llm: LLMBackend,
    prompt: PromptSpec[T],
    context: Context,
    n: int,
    *,
    temperature: float,
    reason: str = UNPARSABLE,
    **request_kw: Any,
) -> Parsed[T] | Refused:
    """Self-consistency: ``n`` sampled replies to ``prompt`` (sample ``i`` with seed ``i`` at
    ``temperature``); the most frequent reply text (stripped) wins — the first to reach the top count on a
    tie — and is read by ``prompt.parse``: :class:`Parsed` (``attempts`` = ``n``, the usage of every
    sample), or :class:`Refused` with ``reason`` when the winner cannot be read (not re-asked: re-asking one
    sample would break the vote). An :class:`~tkgqa.errors.LLMError` propagates."""
    if n < 1:
        raise ConfigError(f"a vote needs at least one sample, got {n}")
    messages = prompt.build(context)
    usage = Usage()
    counts: dict[str, int] = {}
    for i in range(n):
        try:
            got = complete_parsed(
                llm, messages, str.strip, retries=0, temperature=temperature, seed=i, **request_kw
            )
        except ParseError as exc:  # the backend refused its own reply (e.g. outside ``choices``)
            spent = usage + error_usage(exc)
            return Refused(reason, ParseError(without_raw(exc), raw=exc.raw, usage=spent), spent)
        usage = usage + got.usage
        counts[got.value] = counts.get(got.value, 0) + 1
    top = max(counts.values())
    winner = next(reply for reply, c in counts.items() if c == top)
    try:
        return Parsed(prompt.parse(winner), winner, usage, n)
    except ParseError as exc:
        failed = usage + Usage(parse_failures=1)
        return Refused(reason, ParseError(without_raw(exc), raw=winner, usage=failed), failed)


def run_prompt(
    llm: LLMBackend, prompt: PromptSpec[T], context: Context, *, retries: int = 1, **request_kw: Any
) -> Parsed[T]:
    """:func:`ask` for a caller that treats a refused reply as an exception: its ParseError is raised."""
    outcome = ask(llm, prompt, context, retries=retries, **request_kw)
    if isinstance(outcome, Refused):
        raise outcome.error
    return outcome


@dataclass
class Asker:
    """The LLM calls of one question: :func:`ask` with defaults, each outcome's usage summed in ``usage``.

    ``charge``: charge the running total to a propagating :class:`~tkgqa.errors.LLMError` (R3 leaves it off:
    its error rows carry the failed call's own usage, as they always have). ``describe``: how a refused
    reply is told in an ask's ``rejected`` list."""

    llm: LLMBackend
    max_tokens: int | None = None
    retries: int = 1
    charge: bool = True
    describe: Callable[[ParseError], str] = error_reason
    usage: Usage = field(default_factory=Usage)

    def ask(
        self,
        prompt: PromptSpec[T],
        context: Context = _NO_CONTEXT,
        *,
        retries: int | None = None,
        rejected: list[str] | None = None,
        **kw: Any,
    ) -> Parsed[T] | Refused:
        """:func:`ask` (``retries``/``max_tokens`` default to the asker's); ``rejected`` collects
        the :attr:`describe` of each reply the parser refused."""
        if self.max_tokens is not None:
            kw.setdefault("max_tokens", self.max_tokens)
        if rejected is not None:
            describe = self.describe
            kw["on_reject"] = lambda exc: rejected.append(describe(exc))
        outcome = ask(
            self.llm,
            prompt,
            context,
            retries=self.retries if retries is None else retries,
            spent=self.usage if self.charge else None,
            **kw,
        )
        self.usage = self.usage + outcome.usage
        return outcome

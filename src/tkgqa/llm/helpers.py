"""What every LLM-using method needs from the LLM layer: resolve its ``llm`` argument, turn the
:class:`~tkgqa.usage.Usage` it spent into the ``Answer.usage`` dict, and account for the usage a failed
call carried (:func:`error_usage`, :func:`charge`, :func:`error_usage_dict`)."""

from __future__ import annotations

from ..errors import LLMError, ParseError
from ..usage import PRICED_KEYS, AnswerUsage, Usage
from .base import LLMBackend
from .cache import resolve_llm
from .pricing import usage_cost

#: The keys of :func:`usage_dict` (``Answer.usage``; summed by the eval report).
USAGE_KEYS = PRICED_KEYS
#: ``Answer.usage`` keys added only when the ``replay:`` backend answered (or missed) a call: how its
#: replies were found (``report.json``'s ``replay``: exact, by_id, reask, miss).
REPLAY_KEYS = {
    "replay_exact": "exact",
    "replay_by_id": "by_id",
    "replay_reask": "reask",
    "replay_miss": "miss",
}


def resolve_llm_arg(llm: str | LLMBackend | None) -> LLMBackend | None:
    """``None`` stays ``None``; a spec string goes through :func:`~tkgqa.llm.resolve_llm` (cached and
    logged); a backend instance is used as given."""
    if llm is None or isinstance(llm, LLMBackend):
        return llm
    return resolve_llm(llm)


def answer_usage(usage: Usage, llm: LLMBackend | None = None) -> AnswerUsage:
    """``usage`` as an ``Answer.usage``, priced by :func:`~tkgqa.llm.pricing.usage_cost` for ``llm``'s model
    and backend (``None``: no cost)."""
    if llm is None:
        return _priced(usage, None, None)
    return _priced(usage, llm.model_id, llm.name)


def usage_dict(usage: Usage, llm: LLMBackend | None = None) -> dict[str, float]:
    """``usage`` in the written form of ``Answer.usage`` (:data:`USAGE_KEYS`), priced as by
    :func:`answer_usage`.

    ``llm_calls`` counts every call, ``cached_calls`` those served from the cache (which cost nothing)."""
    return answer_usage(usage, llm).to_dict()


def _priced(usage: Usage, model: str | None, backend: str | None) -> AnswerUsage:
    cost = usage_cost(usage, model, backend=backend or "") if model else 0.0
    return AnswerUsage(usage, cost, priced=True)


def error_usage(exc: BaseException) -> Usage:
    """The usage behind a failed LLM step: the ``usage`` a :class:`ParseError` or :class:`LLMError` carries
    (what the attempts and steps before the failure spent, the failed call included); without one, one
    parse failure (ParseError) or one failed call (any other error)."""
    if isinstance(exc, ParseError):
        return exc.usage if exc.usage is not None else Usage(parse_failures=1)
    if isinstance(exc, LLMError) and exc.usage is not None:
        return exc.usage
    return Usage(calls=1)


def charge(exc: LLMError, spent: Usage) -> LLMError:
    """Add ``spent`` (the usage of the attempts or steps before the failure) to ``exc.usage`` and return
    ``exc``, so that what a question cost reaches its error row::

        except LLMError as exc:
            charge(exc, usage)
            raise
    """
    exc.usage = spent + error_usage(exc)
    return exc


def error_usage_dict(exc: BaseException) -> dict[str, float]:
    """The ``Answer.usage`` dict of a failed question: :func:`error_usage` of ``exc``, priced for the LLM
    named on an :class:`LLMError` (``backend``/``model``, set by ``CachedLLM``); ``{}`` for an exception
    that is neither an LLM nor a parse error (no LLM call is known to have been made)."""
    if not isinstance(exc, LLMError | ParseError):
        return {}
    if isinstance(exc, LLMError):
        return _priced(error_usage(exc), exc.model, exc.backend).to_dict()
    return _priced(error_usage(exc), None, None).to_dict()

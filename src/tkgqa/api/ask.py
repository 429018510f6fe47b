"""``tkgqa.ask``: answer one question with one method, the library's one-line entry point (what ``tkgqa ask``
does, without the terminal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..datasets.base import Question
from ..errors import ConfigError
from ..kg.base import KGStore
from ..llm.base import LLMBackend
from ..methods.base import Answer, Method
from ..time import TimePoint, parse_as_of
from .resolve import build_method, open_kg


def ask(
    question: str | Question,
    kg: KGStore | str | Path | None = None,
    method: str | Method = "symbolic",
    llm: str | LLMBackend | None = None,
    *,
    as_of: str | int | TimePoint | None = None,
    **options: Any,
) -> Answer:
    """Answer ``question`` over ``kg`` (a store, a KG file, or ``None``/``"demo"`` for the bundled demo KG)
    with ``method``: a spec (``"symbolic"``, ``"ari:policy=symbolic"``, ``"timer4"``…) configured with
    ``llm`` (a spec such as ``"openai:gpt-4o-mini"`` or a backend) and ``options`` (the method's settings,
    as keyword arguments; unknown ones are a ConfigError), or a built :class:`~tkgqa.methods.base.Method`.
    ``as_of``: answer over the KG as of that time (its ``as_of`` view; :func:`tkgqa.time.parse_as_of`: a
    year, month or date; ``None`` or ``"all"``: the whole KG).

        answer = tkgqa.ask("Who visited China in November 2014?")
        answer.answers, answer.evidence, answer.trace
        tkgqa.ask("Who visited China?", as_of="2014-06")  # what the KG knew before June 2014
    """
    cutoff = parse_as_of(as_of)  # a bad time fails before the method is built
    if isinstance(method, Method):
        if llm is not None or options:
            raise ConfigError("pass llm and options when naming the method, not with a built Method")
        runner = method
    else:
        runner = build_method(method, options={**options, **({"llm": llm} if llm is not None else {})})
    if isinstance(question, str):
        if not question.strip():
            raise ConfigError("the question is empty: e.g. tkgqa.ask('Who visited China in 2014?')")
        question = Question(qid="ask", text=question.strip())
    store = kg if isinstance(kg, KGStore) else open_kg(None if kg is None else str(kg))
    return runner.answer(question, store if cutoff is None else store.as_of(cutoff))

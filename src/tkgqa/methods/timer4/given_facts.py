"""``timer4:facts=dataset``: TimeR4's answer step over the facts the dataset ships with each question.

TimeR4's authors published, for TimeQuestions, the facts their retrieval found for every test question and
what gpt-3.5 answered over them (``tkgqa data fetch timer4-chatgpt``, then ``--llm replay:timer4-chatgpt``).
This mode skips FKS, the rewrite, TKS and the rerank and sends the answer prompt exactly as the authors' code
rendered it — the header sentence of Figure 6, ``Historical facts:`` directly followed by the fact list as
Python writes a list of strings (``str(list)``: quotes chosen per item, non-printable characters escaped),
then ``Question:``, a line break, a space, the *original* question and a ``?`` — so a replay of their
recording matches by prompt, byte for byte. The reply is read by TimeR4's own answer parser
(:func:`tkgqa.methods.timer4.prompts.parse_answers`).

Facts: ``Question.extra["retrieved_facts"]`` (the sentences as shipped, see
:data:`~tkgqa.datasets.base.RETRIEVED_FACTS`), else the question's parsed ``context`` verbalised by the
project's verbaliser (then the prompt cannot match the authors' byte for byte; the trace says which).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...datasets.base import RETRIEVED_FACTS, Question
from ...errors import ConfigError
from ...kg import KGStore
from ...llm.base import Message
from ...prompts.base import Context, Prompt
from ...retrieval.verbalize import verbalize_facts
from .prompts import parse_answers

#: The answer prompt as the authors' code renders it (the recorded ``prompt`` fields): Figure 6's text with
#: their spacing (``prompts.REASON_TEMPLATE`` is the figure's layout, with a JSON fact list).
AUTHORS_REASON_TEMPLATE = (
    "Based on the historical facts, please answer the given question. Please keep the answer as simple as "
    "possible and return all the possible answers as a list.\n"
    "Historical facts:{facts}\n"
    "Question:\n {question}?"
)


def authors_reason_text(question: str, facts: Sequence[str]) -> str:
    """The authors' answer prompt: ``facts`` written as Python writes a list of strings (``repr``; no code is
    run), the question followed by ``?`` as their code appends one."""
    return AUTHORS_REASON_TEMPLATE.format(facts=repr([str(f) for f in facts]), question=question)


def build_authors_reason(context: Context) -> list[Message]:
    return [Message.user(authors_reason_text(context["question"], context["facts"]))]


AUTHORS_REASON_PROMPT: Prompt[list[str]] = Prompt(
    "timer4.reason_authors", build_authors_reason, parse_answers
)


def dataset_facts(question: Question, kg: KGStore) -> tuple[list[str], str]:
    """The facts the dataset ships for ``question`` and where they came from (``dataset text`` or
    ``dataset context, verbalised``). ConfigError when the dataset gives none at all."""
    shipped = question.extra.get(RETRIEVED_FACTS)
    if isinstance(shipped, list):
        return [str(f) for f in shipped], "dataset text"
    if question.context is not None:
        return verbalize_facts(question.context, kg), "dataset context, verbalised"
    raise ConfigError(
        f"timer4 facts=dataset: question {question.qid!r} comes without the dataset's retrieved facts; load "
        "a dataset that ships them (TimeQuestions with --context retrieved) or use facts=retrieve"
    )

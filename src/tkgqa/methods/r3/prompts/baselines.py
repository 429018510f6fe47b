"""Prompts of the baselines in R3's tables: 0-shot and 2-shot chain-of-thought (Kojima et al.; Wei et al.) and
KAPING (Baek et al.: the top retrieved triples, then the question). All end in a verdict parsed by
:func:`~tkgqa.methods.r3.prompts.ours.parse_verdict`; KAPING may cite fact ids, which are collected but not
enforced (that is R3's difference). The two CoT examples are ours.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ....llm.base import Message
from ....llm.parsing import extract_choice
from ....prompts.base import Bound
from .ours import _FACT_ID, Verdict, listed, parse_verdict

VERDICT_FORMAT = (
    "End your reply with one line: 'Final answer: Yes', 'Final answer: No' or 'Final answer: I dont know'."
)
COT_EXAMPLES = (
    (
        "Could Marie Curie have watched a television broadcast?",
        "Regular television broadcasts began around 1928. Marie Curie died in 1934, after that. So she could "
        "have watched one.\nFinal answer: Yes",
    ),
    (
        "Would a vegetarian eat a beef burger?",
        "A beef burger is made of beef, which is meat, and vegetarians do not eat meat.\nFinal answer: No",
    ),
)


def _what(claim: bool) -> str:
    return "Claim (is it correct?)" if claim else "Question"


def build_cot_messages(question: str, *, shots: int = 0, claim: bool = False) -> list[Message]:
    """0-shot ("Let's think step by step") or k-shot (our worked examples) chain of thought."""
    examples = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in COT_EXAMPLES[:shots])
    return [
        Message.system("You answer yes/no questions and verify claims. " + VERDICT_FORMAT),
        Message.user(f"{examples}{_what(claim)}: {question}\nAnswer: Let's think step by step."),
    ]


def build_kaping_messages(
    question: str, facts: Sequence[tuple[str, str]], *, claim: bool = False
) -> list[Message]:
    """KAPING: the retrieved triples, then the question (and the verdict format; citing fact ids invited)."""
    return [
        Message.system("You answer yes/no questions and verify claims. " + VERDICT_FORMAT),
        Message.user(
            "Below are facts in the form of the triple meaningful to answer the question.\n"
            f"{listed(facts)}\n{_what(claim)}: {question}\n"
            "Explain briefly, citing the facts you use as [F1], then give the final answer."
        ),
    ]


@dataclass(frozen=True)
class BaselineReply:
    verdict: Verdict
    cited: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()


def parse_baseline_reply(text: str, fact_ids: Collection[str] = ()) -> BaselineReply:
    """The verdict and the fact ids cited (those not listed are kept apart: they count against grounding)."""
    verdict = parse_verdict(text)
    ids = tuple(dict.fromkeys(f"F{n}" for n in _FACT_ID.findall(text)))
    return BaselineReply(
        verdict, tuple(i for i in ids if i in fact_ids), tuple(i for i in ids if i not in fact_ids)
    )


def build_choice_messages(
    question: str, options: Sequence[str], facts: Sequence[tuple[str, str]] = ()
) -> list[Message]:
    """A multiple-choice request (Recipe-MPR's GPT-3 instruction), with KAPING's retrieved facts if given."""
    listed_options = "\n".join(f"{i}. {o}" for i, o in enumerate(options, 1))
    context = (
        "Below are facts in the form of the triple meaningful to answer the question.\n"
        + listed(facts)
        + "\n"
        if facts
        else ""
    )
    return [
        Message.system(
            "Given the request and the options, choose the option that best satisfies the request."
        ),
        Message.user(
            f"{context}Request: {question}\nOptions:\n{listed_options}\nThink step by step, citing facts as "
            "[F1] if you use them, then end with one line 'Option: <the chosen option, copied verbatim>'."
        ),
    ]


def parse_choice(text: str, options: Sequence[str]) -> str:
    """The option named after the last ``Option:`` (or in the whole reply), exactly as listed."""
    tail = text.rsplit("Option:", 1)[-1] if "Option:" in text else text
    return extract_choice(tail.strip(), options)


def choice_prompt(question: str, options: Sequence[str], facts: Sequence[tuple[str, str]] = ()) -> Bound[str]:
    """:func:`build_choice_messages`, read by :func:`parse_choice`."""
    return Bound(
        "r3.baseline_choice",
        build_choice_messages(question, options, facts),
        lambda t: parse_choice(t, options),
    )


def reply_prompt(messages: Sequence[Message], fact_ids: Collection[str] = ()) -> Bound[BaselineReply]:
    """A CoT or KAPING request (``messages``), read by :func:`parse_baseline_reply` over ``fact_ids``."""
    return Bound("r3.baseline", messages, lambda t: parse_baseline_reply(t, fact_ids))

"""R3's prompts as the paper prints them (Toroghi et al. 2024, Appendix D) — the ``paper`` preset — and the
parsers of the replies they ask for.

* **Axiom**: the paper's instruction verbatim (the "<an explanation> Therefore, a helpful rule is:\\n Rule: …"
  format and its last sentence: "If you can't produce a helpful rule …, just try to make understanding the
  question easier by giving a hint or defining terms"), no Premises/Conclusion block: the reply is read by
  :func:`~tkgqa.methods.r3.prompts.ours.parse_axiom` with ``hint_ok=True``.
* **Pruning** (``LLM_T`` of Eq. 4): the LLM *copies the relevant triples* ("Just copy the selected facts and
  don't generate facts on your own"); :func:`parse_copied_facts` maps each copied triple to the listed one
  it reproduces (case, accents and punctuation aside) — a triple that is not listed is not picked.
* **Answer** (Eq. 5): "Answer: <your reason> Therefore, the answer is: <Yes | No | I don't know …>" with
  the facts cited in prose ("Fact 4 tells us", "Facts 2 and 5", "Fact “(h, r, t)”") and the rules as
  "General rule 1"; :func:`parse_paper_answer` reads the verdict, splits the reasoning into sentences with
  their citations, and is the same *mechanical grounding check* as ours: a cited fact number that is not in
  the list (or a quoted triple that is not listed) is a ParseError, so the question is re-asked.

Facts and rules are listed as the authors' demonstrations list them: ``1- (h, r, t)``, one per line. The
apostrophes the paper's PDF text lost ("dont") are restored as in the authors' released prompt files. Few-shot
demonstrations (:class:`Demo`) are passed in: the authors' own (``tkgqa.methods.r3.demos`` loads them at run
time) or :data:`OURS_AXIOM_DEMOS` / :data:`OURS_ANSWER_DEMOS` (ours, in the paper's format), as alternating
user/assistant turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ....errors import ParseError
from ....kg.linking import normalize
from ....llm.base import Message
from .ours import GroundedAnswer, Step, Verdict, id_order, parse_verdict

PAPER_AXIOM_SYSTEM = (
    "Task: You are a helpful assistant trying to give us some guidance about answering a question. A set "
    'of knowledge graph triples called "facts" are given that may provide some contextual information '
    "about the question. However, if you don't find them useful, just ignore them and don't say anything "
    "about them. We may later look for additional facts to answer the question. Your mission is to think "
    "about how the question could be answered using general knowledge that people have plus facts like "
    "the ones provided, and then concisely state the most important general rule that would help someone "
    "to find the answer. But, you must not directly answer the question and you must not judge whether "
    "the question is answerable or not. Focus on what general information can help in giving a yes/no "
    'answer to the question.\nYour response must follow the following format: "<an explanation> '
    "Therefore, a helpful rule is:\\n Rule: <An entity or Something relevant to it> must <have some "
    'property> to <property identified in question>." Try your best to use your general knowledge. Be '
    "smart. Don't ask or state conditions on obvious information that most average humans would know. "
    "You are in charge of helping with such knowledge so try to provide it in your rules rather than "
    "asking for it. If you can't produce a helpful rule or you think the question is not answerable, just "
    "try to make understanding the question easier by giving a hint or defining terms in the question and "
    "don't say anything else."
)
PAPER_PRUNE_SYSTEM = (
    "Task: You are a helpful assistant that is trying to help us answer a question. Given the question, a "
    "general rule that will help us answer the question, and a list of knowledge graph triples which we "
    "call them facts. Consider the facts and think about their relation to the question and general rule "
    "and try to extract the facts that may help answering the question. The facts may be insufficient to "
    "answer the question, but try your best to extract the relevant facts.\nYour response must follow "
    "this format:\n<an explanation> Therefore, the relevant facts are: <list of relevant facts>\nJust copy "
    "the selected facts and don't generate facts on your own or adjust the facts in any way. Try your best "
    'to select the relevant facts. If there are no relevant facts, just output "None".'
)
PAPER_ANSWER_SYSTEM = (
    "Task: You are a helpful assistant that is trying to help us answer a question. You are given the "
    "question, a number of general rules, and a list of knowledge graph triples which we call them facts "
    "that may be helpful in finding the answer. First, go over the facts and general rules one by one. "
    "Try to think of how each fact may help you answer the question. Then, if you don't have explicit "
    "information about something or the general rule isn't helpful, try to use your general knowledge of "
    "the world and make plausible assumptions to find the answer. Be smart. Don't ask for obvious "
    "information that most average humans would know.\nYour response must follow the following format:\n"
    'Answer: <your reason> Therefore, the answer is: <your final answer(beginning with "Yes", "No", or "I '
    'don\'t know")>\nYou must only begin your response with "Yes" or "No" if you want to give the '
    "answer to the question. Try your best to use facts, general rules, and plausible assumptions to give "
    "the answer. If using the current set of general rules and facts is not enough to answer the question "
    'even with plausible assumptions, in the beginning of your answer, you must only say "I don\'t know".'
)


@dataclass(frozen=True)
class Demo:
    """One few-shot demonstration: the user turn and the assistant turn."""

    input: str
    output: str


# Ours, in the paper's formats (well-known entities, no benchmark question): used when the authors'
# demonstrations are not available.
OURS_AXIOM_DEMOS = (
    Demo(
        "Question: Could Marie Curie have watched a television broadcast?\nEntities: Marie Curie\n"
        "FACTS: 1- (Marie Curie, occupation, physicist)\n2- (Marie Curie, date of birth, 7 November 1867)",
        "The question asks whether Marie Curie could have watched a television broadcast. Regular "
        "television broadcasts started around 1928, so the question depends on whether she was still "
        "alive then. Therefore, a helpful rule is:\\n\nRule: Marie Curie must have been alive after 1928 "
        "to have watched a television broadcast.",
    ),
)
OURS_ANSWER_DEMOS = (
    Demo(
        "Question: Could Marie Curie have watched a television broadcast?\nGeneral Rule: 1- Marie Curie "
        "must have been alive after 1928 to have watched a television broadcast.\nFacts: 1- (Marie Curie, "
        "occupation, physicist)\n2- (Marie Curie, date of death, 4 July 1934)",
        "Answer: General rule 1 tells us that Marie Curie must have been alive after 1928. Fact 2 tells us "
        "that she died on 4 July 1934, which is after 1928, so she was alive when regular broadcasts began. "
        "Therefore, the answer is: Yes, Marie Curie could have watched a television broadcast.",
    ),
    Demo(
        "Question: Was Marie Curie a citizen of Brazil?\nGeneral Rule: 1- Marie Curie must have held "
        "Brazilian citizenship to be a citizen of Brazil.\nFacts: 1- (Marie Curie, occupation, physicist)",
        "Answer: General rule 1 tells us that Marie Curie must have held Brazilian citizenship. Fact 1 "
        "tells us that she was a physicist, but no fact tells us her citizenship, and we cannot make a "
        "plausible assumption about it. Therefore, the answer is: I don't know.",
    ),
)


def numbered(items: Sequence[str]) -> str:
    """``1- a\\n2- b`` (the authors' listing of facts and rules)."""
    return "\n".join(f"{i}- {text}" for i, text in enumerate(items, 1))


def few_shot(system: str, demos: Sequence[Demo], user: str) -> list[Message]:
    """The system turn, each demonstration as a user/assistant pair, then the request."""
    turns = [Message.system(system)]
    for d in demos:
        turns += [Message.user(d.input), Message.assistant(d.output)]
    return [*turns, Message.user(user)]


def build_paper_axiom_messages(
    question: str,
    entities: Sequence[str],
    facts: Sequence[str],
    *,
    demos: Sequence[Demo] = OURS_AXIOM_DEMOS,
    system: str = PAPER_AXIOM_SYSTEM,
    lead: str = "Question",
    previous: Sequence[str] = (),
) -> list[Message]:
    """The axiom request in the authors' input layout (``Question`` / ``Entities`` / ``FACTS``); ``previous``
    (ours: the paper says a new branch surfaces a *new* axiom, not how) lists the rules already tried."""
    parts = [f"{lead}: {question}"]
    if entities:
        parts.append("Entities: " + "\n".join(entities))
    if facts:
        parts.append("FACTS: " + numbered(facts))
    if previous:
        parts.append(
            "Rules already tried (they did not lead to an answer; state a different one):\n"
            + "\n".join(f"- {r}" for r in previous)
        )
    return few_shot(system, demos, "\n".join(parts))


def build_paper_prune_messages(
    question: str,
    rule: str,
    facts: Sequence[str],
    *,
    lead: str = "Question",
    demos: Sequence[Demo] = (),
    system: str = PAPER_PRUNE_SYSTEM,
) -> list[Message]:
    """``LLM_T`` of Eq. 4: the pruning instruction, the rule, the numbered triples to copy from, after the
    authors' few-shot examples (``relevant_facts.yaml``) when given; the questions' template ends with
    ``Answer:`` as the authors' does (not the claims')."""
    user = f"{lead}: {question}\nGeneral Rule: {rule}\nFacts: {numbered(facts)}"
    if lead == "Question" and demos:
        user += "\nAnswer:"
    return few_shot(system, demos, user)


# --- the other steps in the authors' input layouts (their released templates) ----------------------
def build_paper_entity_messages(
    question: str, *, demos: Sequence[Demo], system: str, lead: str = "Question"
) -> list[Message]:
    """``LLM_E(q)`` with the authors' ``identify_entities`` prompt: ``Question: q`` (``Sentence:`` for
    claims); the reply lists ``Selected entity/entities:`` one per line."""
    return few_shot(system, demos, f"{lead}: {question}")


def build_paper_need_messages(
    question: str,
    rules: Sequence[str],
    facts: Sequence[str],
    proposed: str,
    *,
    demos: Sequence[Demo],
    system: str,
    lead: str = "Question",
) -> list[Message]:
    """The missing evidence (``identify_missing``): the question, ``General Rule:``, ``Facts:`` joined by
    `` / `` and the ``Proposed Answer:`` that was not certain, as the authors' template renders them."""
    parts = [f"{lead}: {question}"]
    if rules:
        parts.append("General Rule: " + "\n".join(rules))
    if facts:
        parts.append("Facts: " + " / ".join(facts))
    if proposed:
        parts.append(f"Proposed Answer: {proposed}")
    return few_shot(system, demos, "\n".join(parts))


def build_paper_next_entity_messages(
    question: str,
    need: str,
    facts: Sequence[str],
    chosen: Sequence[str],
    *,
    demos: Sequence[Demo],
    system: str,
    lead: str = "Question",
) -> list[Message]:
    """The entity to expand (``decide_next_entity``): ``Information Need:``, ``Facts:`` and ``Previously
    chosen entities:`` joined by `` / ``; the reply is ``Selected Entity: <name>``."""
    parts = [f"{lead}: {question}", f"Information Need: {need}"]
    if facts:
        parts.append("Facts: " + " / ".join(facts))
    if chosen:
        parts.append("Previously chosen entities: " + " / ".join(chosen))
    return few_shot(system, demos, "\n".join(parts))


def recipe_lines(options: Sequence[str]) -> str:
    """``Recipe 1- …`` one per line (the authors' listing of the recipes)."""
    return "\n".join(f"Recipe {i}- {text}" for i, text in enumerate(options, 1))


def build_paper_preference_axiom_messages(
    query: str, facts: Sequence[str], options: Sequence[str], *, demos: Sequence[Demo], system: str
) -> list[Message]:
    """Recipe-MPR's rule about the user (``MPR_RRR_inference_rule_v4``): ``Query:``, the user's ``Facts:``
    numbered, the ``Recipes:``; the reply ends ``Rule: …``."""
    parts = [f"Query: {query}"]
    if facts:
        parts.append("Facts: " + numbered(facts))
    if options:
        parts.append("Recipes: " + recipe_lines(options))
    return few_shot(system, demos, "\n".join(parts))


def build_paper_choice_messages(
    query: str, rules: Sequence[str], options: Sequence[str], *, demos: Sequence[Demo], system: str
) -> list[Message]:
    """Recipe-MPR's one choice among all recipes (``MPR_RRR_decide_answer``): ``Query:``, ``General rule:``,
    ``Recipes:``; the reply ends ``Therefore, the selected recipe is: N``."""
    parts = [f"Query: {query}"]
    if rules:
        parts.append("General rule: " + "\n".join(rules))
    parts.append("Recipes: " + recipe_lines(options))
    return few_shot(system, demos, "\n".join(parts))


_SELECTED = re.compile(r"selected\s+recipe\s+is\s*[:：]?\s*\**\s*(?:recipe\s*)?(\d+)", re.IGNORECASE)


def parse_selected_recipe(text: str, n_options: int) -> int:
    """The 0-based index of ``Therefore, the selected recipe is: N`` (the last such statement); ParseError
    when there is none or N is not one of the ``n_options`` listed."""
    found = _SELECTED.findall(text)
    if not found:
        raise ParseError(
            "no selected recipe found", raw=text, expected="'Therefore, the selected recipe is: <number>'"
        )
    number = int(found[-1])
    if not 1 <= number <= n_options:
        raise ParseError(
            f"recipe {number} is not one of the {n_options} listed", raw=text, expected=f"1 to {n_options}"
        )
    return number - 1


def strip_answer_lead(text: str) -> str:
    """A reply without the ``Answer:`` its demonstrations begin with (the missing-evidence replies)."""
    return re.sub(r"^\s*answer\s*[:：]\s*", "", text, flags=re.IGNORECASE)


def build_paper_answer_messages(
    question: str,
    rules: Sequence[str],
    facts: Sequence[str],
    *,
    demos: Sequence[Demo] = OURS_ANSWER_DEMOS,
    system: str = PAPER_ANSWER_SYSTEM,
    lead: str = "Question",
) -> list[Message]:
    """Eq. 5's request in the authors' input layout: ``Question`` (``Sentence`` for claims with the
    authors' claim prompts), ``General Rule: 1- …``, ``Facts: 1- …`` (omitted when there are none)."""
    parts = [f"{lead}: {question}"]
    if rules:
        parts.append("General Rule: " + numbered(rules))
    if facts:
        parts.append("Facts: " + numbered(facts))
    return few_shot(system, demos, "\n".join(parts))


# --- pruning: copied triples ------------------------------------------------------------------------
_SPAN = re.compile(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_ITEM_PREFIX = re.compile(r"^\s*(?:\d+\s*[-.)]|[-*•])\s*")


def _key(text: str) -> str:
    return normalize(text.strip().strip("\"'“”‘’`").strip().strip("()"))


def parse_copied_facts(text: str, facts: Sequence[str]) -> list[int]:
    """Indices (0-based, in reply order) of the listed ``facts`` copied after ``the relevant facts are:``
    (anywhere when that phrase is absent): each parenthesised triple, else each line, read as the fact it
    reproduces (case, accents and punctuation aside). ``None`` → []. A copied triple that is not listed is
    not picked (the prompt forbids generating facts); a reply that copies nothing listed and does not say
    ``None`` is a ParseError."""
    tail = re.split(r"relevant facts are\s*[:：]?", text, flags=re.IGNORECASE)[-1]
    index: dict[str, int] = {}
    for i, fact in enumerate(facts):
        index.setdefault(_key(fact), i)
    pieces = ["(" + m.group(1) + ")" for m in _SPAN.finditer(tail)]
    pieces += [_ITEM_PREFIX.sub("", line) for line in tail.splitlines()]
    found = [index[k] for k in (_key(p) for p in pieces) if k in index]
    picked = list(dict.fromkeys(found))
    if not picked and not re.search(r"\bnone\b", tail, flags=re.IGNORECASE):
        raise ParseError(
            "no listed fact copied",
            raw=text,
            expected="'Therefore, the relevant facts are: <the relevant facts, copied>' or 'None'",
        )
    return picked


# --- the answer: prose citations --------------------------------------------------------------------
# "4", "2 and 5", "2, 3 and 5" (a list continues only when it is closed by "and": "Fact 5, 1951 is …" is
# Fact 5 alone)
_NUMS = r"(\d+(?:(?:\s*,\s*\d+)*\s*,?\s*(?:and|&)\s*\d+)?)"
_FACT_PROSE = re.compile(r"\bfacts?\s*(?:#|no\.?|number)?\s*" + _NUMS, re.IGNORECASE)
_RULE_PROSE = re.compile(r"\b(?:general\s+)?rules?\s*(?:#|no\.?|number)?\s*" + _NUMS, re.IGNORECASE)
_QUOTED_TRIPLE = re.compile(r"[“\"]\s*(\([^()“”\"]*(?:\([^()]*\)[^()“”\"]*)*\))\s*[”\"]")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<![A-Z]\.)\s+(?=[A-Z\"“(])")
_ASSUMES = re.compile(r"assum|plausib|general knowledge|typically", re.IGNORECASE)
_ANSWER_LEAD = re.compile(r"^\s*\**\s*answer\s*\**\s*[:：]\s*", re.IGNORECASE)
_THEREFORE = re.compile(r"(therefore,?\s+)?the\s+(?:final\s+)?answer\s+is\s*[:：]?", re.IGNORECASE)


def _numbers(pattern: re.Pattern[str], text: str) -> list[int]:
    return [
        int(n) if len(n) < 10 else 10**10
        for m in pattern.finditer(text)
        for n in re.findall(r"\d+", m.group(1))
    ]


def _sentence(
    text: str, fact_ids: Sequence[str], rule_ids: Sequence[str], by_text: dict[str, str]
) -> tuple[Step, list[str]]:
    """One sentence as a step, and what it cites that is not listed (for the error)."""
    bad: list[str] = []
    facts: list[str] = []
    for n in _numbers(_FACT_PROSE, text):
        if 1 <= n <= len(fact_ids):
            facts.append(fact_ids[n - 1])
        else:
            bad.append(f"Fact {n}")
    for m in _QUOTED_TRIPLE.finditer(text):
        if m.group(1).count(",") < 2:
            continue
        fid = by_text.get(_key(m.group(1)))
        if fid is None:
            bad.append(m.group(1))
        else:
            facts.append(fid)
    rule_text = _FACT_PROSE.sub(" ", text)
    rules: list[str] = []
    for n in _numbers(_RULE_PROSE, rule_text):
        if 1 <= n <= len(rule_ids):
            rules.append(rule_ids[n - 1])
        else:
            bad.append(f"General rule {n}")
    step = Step(
        " ".join(text.split())[:1000],
        tuple(dict.fromkeys(facts)),
        tuple(dict.fromkeys(rules)),
        bool(_ASSUMES.search(text)),
    )
    return step, bad


def parse_paper_answer(
    text: str,
    fact_ids: Sequence[str],
    rule_ids: Sequence[str] = (),
    *,
    fact_texts: Sequence[str] = (),
    require_fact: bool = False,
) -> GroundedAnswer:
    """The paper's answer format, read: the verdict (:func:`~.ours.parse_verdict`) and the
    reasoning as sentences with their citations. ``fact_ids``/``rule_ids`` are the ids of the facts/rules
    *in the order they were listed* ("Fact 4" is the fourth listed); ``fact_texts`` their texts (a quoted
    triple cites the listed fact it reproduces). ParseError when a citation is not listed (the mechanical
    check), or, with ``require_fact``, when a Yes/No cites no fact."""
    verdict = parse_verdict(text)
    by_text = {_key(t): fid for t, fid in zip(fact_texts, fact_ids, strict=False)}
    body = _ANSWER_LEAD.sub("", text.strip(), count=1)
    ends = list(_THEREFORE.finditer(body))
    reasoning, final = (body[: ends[-1].start()], body[ends[-1].start() :]) if ends else (body, "")
    sentences = [s for s in _SENTENCE_END.split(reasoning.strip()) if s.strip()]
    if final.strip():
        sentences.append(final.strip())
    steps: list[Step] = []
    for n, sentence in enumerate(sentences, 1):
        step, bad = _sentence(sentence, fact_ids, rule_ids, by_text)
        if bad:
            listed = f"facts 1-{len(fact_ids)}" if fact_ids else "no facts"
            rules = f", general rules 1-{len(rule_ids)}" if rule_ids else ""
            raise ParseError(
                f"sentence {n} cites {', '.join(bad)}, which {'is' if len(bad) == 1 else 'are'} not among "
                f"the listed facts and rules ({listed}{rules}); cite only listed facts",
                raw=text,
                expected="citations of listed facts ('Fact 2') and rules ('General rule 1')",
            )
        steps.append(step)
    answer = GroundedAnswer(tuple(steps), verdict)
    if require_fact and verdict != Verdict.UNKNOWN and not answer.cited_facts:
        raise ParseError(
            "a Yes/No answer must cite at least one listed fact ('Fact 2 tells us …'), or say I don't know",
            raw=text,
            expected="prose citations of listed facts",
        )
    return answer


def cited_in_order(answer: GroundedAnswer) -> list[str]:
    """The fact ids an answer cites, in id order (for traces and tests)."""
    return sorted(answer.cited_facts, key=id_order)

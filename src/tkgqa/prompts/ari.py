"""ARI prompts: action selection (paper Figure 8) and abstract methodology induction (Figure 9).

Both work on plain strings (actions are their texts) so that the prompt layer does not depend on the
method's classes. Parsers never evaluate model output; they raise :class:`ParseError` with the raw text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..errors import ParseError
from ..llm.base import Message
from ..llm.parsing import extract_choice

TASK_DEFINITION = """Please use the tool provided below to interact with the knowledge graph. \
You will find a list of actions categorized into time-based queries, entity queries, and specific time \
queries. There may be more than one answer to the question, but you only need to answer one correct \
answer that satisfies the question.

Time-based Queries:
Retrieve the time of a specific event based on the head/subject entity, relation and tail/object \
entity by using the $get_time(HEAD, RELATION, TAIL)$ function.
Identify entities/events that occurred before a given time by using the $get_before(ENTITY_LIST, \
SPECIFIED_TIME)$ function.
Identify entities/events that occurred after a given time by using the $get_after(ENTITY_LIST, \
SPECIFIED_TIME)$ function.
Identify entities/events that occurred between two specific times by using the \
$get_between(ENTITY_LIST, START_TIME, END_TIME)$ function.

Entity Queries:
Identify the tail/object entity based on the head/subject entity and relation by using the \
$get_tail_entity(CURRENT_HEAD, RELATION, OPTIONAL_TIME_CONSTRAINT)$ function.
Identify the head/subject entity based on the tail/object entity and relation by using the \
$get_head_entity(CURRENT_TAIL, RELATION, OPTIONAL_TIME_CONSTRAINT)$ function.

Specific Time Queries:
Pinpoint entities with the earliest occurrence by using the $get_first(ENTITY_LIST)$ function.
Identify entities with the latest occurrence by using the $get_last(ENTITY_LIST)$ function.
To provide your answer, use the $answer(YOUR_ANSWER)$ function."""

# The sentence of Fig. 8 (and of the authors' DECISION_INSTRUCTION) missing from the Fig. 9 task definition.
FIG8_GUIDE = (
    "To solve this question, you need to first identify the entities and relationships in the question, "
    "selecting the appropriate actions to retrieve the required information, and finally, providing the "
    "correct answer."
)


class ExampleSet(StrEnum):
    """Worked examples in the action-selection prompt (Fig. 8 ``{examples}``): ``paper`` — the paper's
    own MultiTQ exemplars (Table 8); ``ours`` — examples invented for this library."""

    PAPER = "paper"
    OURS = "ours"


Example = tuple[str, tuple[tuple[str, str, str], ...]]  # question, (action, response, reason) per step

# The paper's exemplars for MultiTQ (Table 8), verbatim except: function names as Fig. 8 writes them
# (get_time, not getTime), "no time" written as the action template's "no time constraints", and the answer
# step's response "Correct!" (as in the table). The elided lists ("...") are the paper's.
PAPER_EXAMPLES: tuple[Example, ...] = (
    (
        "In which month did the City Mayor of Philippines first praise Ona?",
        (
            (
                "get_time(City_Mayor_(Philippines),Praise_or_endorse,Ona)",
                "entities = [('City_Mayor_(Philippines)', '2014-10-07')]",
                "",
            ),
            ("get_first({entities})", "entities = [('City_Mayor_(Philippines)', '2014-10-07')]", ""),
            ("answer(2014-10)", "", ""),
        ),
    ),
    (
        "Before Mali's militant, which country was the last to criticise France?",
        (
            (
                "get_time(Militant_(Mali),Criticize_or_denounce,France)",
                "entities = [('Militant_(Mali)', '2013-01-21')]",
                "",
            ),
            ("get_first({entities})", 'entities = [("Government_(Cote_d\'Ivoire)", ...]', ""),
            ("get_last({entities})", "entities = [('Royal_Administration_(Spain)', '2015-12-24')]", ""),
            ("answer(Royal_Administration_(Spain))", "", ""),
        ),
    ),
    (
        "Who was the last to give a criticism to Iran before Pervez Musharraf did?",
        (
            (
                "get_time(Pervez_Musharraf,Criticize_or_denounce,Iran)",
                "entities = [('Pervez_Musharraf', '2006-01-17')]",
                "",
            ),
            (
                "get_head_entity(Iran,Criticize_or_denounce,no time constraints)",
                "entities = [('Shirin_Ebadi', '2005-01-05'), ...]",
                "",
            ),
            ("get_before({entities},2006-01-17)", "entities = [('Shirin_Ebadi', '2005-01-05'),...]", ""),
            ("get_last({entities})", "entities = [('Angela_Merkel', '2006-01-16')]", ""),
            ("answer(Angela_Merkel)", "", ""),
        ),
    ),
    (
        "At what time did Xi Jinping first make optimistic remarks on Japan?",
        (
            (
                "get_time(Xi_Jinping,Make_optimistic_comment,Japan)",
                "entities = [('Xi_Jinping', '2008-04-18'), ...]",
                "",
            ),
            ("get_first({entities})", "entities = [('Xi_Jinping', '2008-04-18')]", ""),
            ("answer(2008-04-18)", "", ""),
        ),
    ),
    (
        "Who wanted to cooperate with Japan in November, 2005?",
        (
            (
                "get_head_entity(Japan,Express_intent_to_cooperate,2005-11)",
                "entities = [('Government_Official_(Russia)', ...]",
                "",
            ),
            ("answer(South_Korea)", "", ""),
        ),
    ),
)

# Hand-written worked examples (invented for this library; not benchmark questions), with reasons (CoT KB).
EXAMPLES: tuple[Example, ...] = (
    (
        "Who was the last to host a visit from Angela Merkel before 2016?",
        (
            (
                "get_head_entity(Angela Merkel, Host a visit, no time constraints)",
                "entities = [('France', '2005-11-23'), '...', ('China', '2019-09-06')] (41 results)",
                "Find who hosted Angela Merkel; the constraint is not a single period, so take all times.",
            ),
            (
                "get_before({entities}, 2016)",
                "entities = [('France', '2005-11-23'), '...', ('Turkey', '2015-10-18')] (23 results)",
                "Keep the visits before 2016.",
            ),
            (
                "get_last({entities})",
                "entities = [('Turkey', '2015-10-18')]",
                "The question asks for the last one.",
            ),
            ("answer(Turkey)", "", "The remaining entity answers the question."),
        ),
    ),
    (
        "In which month did Barack Obama first visit China?",
        (
            (
                "get_time(Barack Obama, Make a visit, China)",
                "entities = [('Barack Obama', '2009-11-15'), ('Barack Obama', '2014-11-10'), "
                "('Barack Obama', "
                "'2016-09-03')]",
                "Both entities are known: retrieve the times of the event.",
            ),
            (
                "get_first({entities})",
                "entities = [('Barack Obama', '2009-11-15')]",
                "We need the first visit.",
            ),
            ("answer(2009-11)", "", "The question asks for a month, so answer at month granularity."),
        ),
    ),
    (
        "Who visited China in November 2014?",
        (
            (
                "get_head_entity(China, Make a visit, 2014-11)",
                "entities = [('Barack Obama', '2014-11-10')]",
                "Find who visited China during that month.",
            ),
            ("answer(Barack Obama)", "", "The result answers the question."),
        ),
    ),
)


def format_examples(n: int, *, with_reasons: bool = False, source: ExampleSet = ExampleSet.OURS) -> str:
    """The first ``n`` worked examples of ``source`` in the prompt's action/response format (reasons only
    where the examples have them: the paper's have none)."""
    blocks = []
    examples = PAPER_EXAMPLES if source is ExampleSet.PAPER else EXAMPLES
    for i, (question, steps) in enumerate(examples[:n]):
        lines = [f"Example {i}:", f"Question: {question}"]
        for k, (action, response, reason) in enumerate(steps):
            lines.append(f"Action {k}: ${action}$")
            if with_reasons and reason:
                lines.append(f"Reason: {reason}")
            lines.append(f"Response {k}: {response or 'Correct!'}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "(none)"


def format_history(steps: Sequence[tuple[str, str]]) -> str:
    """Previous actions with their (truncated) results."""
    if not steps:
        return "(none yet)"
    lines = []
    for k, (action, result) in enumerate(steps):
        lines.append(f"Action {k}: ${action}$")
        lines.append(f"Response {k}: {result}")
    return "\n".join(lines)


def build_action_messages(
    question: str,
    actions: Sequence[str],
    *,
    history: str = "(none yet)",
    methodology: str | None = None,
    examples: str = "(none)",
    constrained: bool = False,
    react: bool = False,
    schema: str | None = None,
) -> list[Message]:
    """The action-selection prompt (Figure 8). ``constrained``: the answer is decoded from the action list
    by the backend (choices), so the list and output format are replaced by a one-line instruction.
    ``react``: ReAct-style output (Thought, then Action). ``schema``: instead of a list of actions, what the
    model is told about the KB (CoT KB writes its actions itself)."""
    head, _, rest = TASK_DEFINITION.partition("\n\n")
    parts = [
        f"{head}\n\n{FIG8_GUIDE}\n\n{rest}",
        "Note: Always enclose the selected action in $ and provide a reason for your choice if necessary.",
        f"Examples for your reference:\n{examples}\n(end of examples)",
        "Current Challenge:",
        f"Question: {question}",
    ]
    if methodology is not None:
        parts.append(f"Methodology: {methodology}\n(end of methodology)")
    parts.append(f"Previous Actions:\n{history}\n(end of previous actions)")
    if constrained:
        parts.append(
            "Choose your next action from the options listed below. If you have found the answer, "
            "choose an answer(...) action."
        )
        return [Message.user("\n\n".join(parts))]
    if schema is not None:
        parts.append(f"Knowledge graph:\n{schema}")
        parts.append(
            "Think step by step as in the examples, then write your next action. If you have found the "
            "answer, remember to use the answer function."
        )
    else:
        listed = "\n".join(f"{i + 1}. ${a}$" for i, a in enumerate(actions))
        parts.append(f"Available Actions:\n{listed}")
        parts.append(
            "Choose your next action from the available actions above, ensuring its completeness. If "
            "you have found the answer, remember to use the answer function."
        )
    if react:
        parts.append(
            "Organize your output by strictly following the format below:\nThought:\n<Think about "
            "what to do next.>\nAction:\n<The chosen action, enclosed in $.>"
        )
    else:
        parts.append(
            "Organize your output by strictly following the format below:\nAction:\n<Choose your next "
            "action from the available actions above. Note: Always enclose the selected action in $. "
            "Replace {your specified time} with a specified time in the format YYYY or YYYY-MM or "
            "YYYY-MM-DD>\nReason:\n<Explain the reason for choosing this action.>"
        )
    return [Message.user("\n\n".join(parts))]


@dataclass(frozen=True)
class ActionChoice:
    """A parsed choice: the index of a listed action, or a free ``answer(...)`` text."""

    index: int | None = None
    free_answer: str | None = None


_DOLLAR = re.compile(r"\$([^$\n]+?)\$")
_ANSWER = re.compile(r"^\s*answer\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_ACTION_LINE = re.compile(r"action\s*\d*\s*:\s*(.+)", re.IGNORECASE)
_INDEX = re.compile(r"^\s*(?:action\s*)?#?(\d{1,3})[.):]?\s*$", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\{?\s*(your|answer|entity|entities|specified|time)\b", re.IGNORECASE)
_SPACE = re.compile(r"[\s_]+")
EXPECTED_ACTION = "one of the available actions, enclosed in $, e.g. $answer(...)$"


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.strip().strip("$`'\" .")).casefold().replace(" ,", ",").replace(", ", ",")


def parse_action_choice(text: str, actions: Sequence[str], *, allow_free_answer: bool = True) -> ActionChoice:
    """Which of ``actions`` the model chose: a ``$...$`` span or an ``Action:`` line matching an action
    (exactly up to spaces/underscores/case, else fuzzily), an action number, or any action text quoted in
    the output. ``answer(X)`` that is not listed is accepted as a free answer when ``allow_free_answer``."""
    if not actions and not allow_free_answer:
        raise ParseError("no actions to choose from", raw=text)
    index = {_norm(a): i for i, a in enumerate(actions)}
    spans = [m.group(1) for m in _DOLLAR.finditer(text)]
    spans += [m.group(1).strip() for m in _ACTION_LINE.finditer(text)]
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    spans.append(first_line)
    for span in spans:
        found = index.get(_norm(span))
        if found is not None:
            return ActionChoice(index=found)
    for span in spans:
        m = _INDEX.match(span)
        if m and 1 <= int(m.group(1)) <= len(actions):
            return ActionChoice(index=int(m.group(1)) - 1)
    for span in spans:
        m = _ANSWER.match(span.strip().strip("$"))
        if m and allow_free_answer:
            value = m.group(1).strip().strip("'\"")
            if value and not _PLACEHOLDER.match(value):
                return ActionChoice(free_answer=value)
    low = _norm(text)
    contained = [i for a, i in index.items() if a and a in low]
    if contained:
        return ActionChoice(index=max(contained, key=lambda i: len(actions[i])))
    for span in [s for s in spans if "(" in s]:
        try:
            choice = extract_choice(span.strip().strip("$"), list(actions), min_score=90.0)
        except ParseError:
            continue
        return ActionChoice(index=list(actions).index(choice))
    raise ParseError("the output names none of the available actions", raw=text, expected=EXPECTED_ACTION)


def parse_constrained_choice(text: str, actions: Sequence[str]) -> ActionChoice:
    """Parser for choice-constrained requests: the output is (nearly) one of the action texts."""
    try:
        choice = extract_choice(text, list(actions))
    except ParseError:
        return parse_action_choice(text, actions, allow_free_answer=False)
    return ActionChoice(index=list(actions).index(choice))


# --- methodology induction (Figure 9) ----------------------------------------------------------------
_EXAMPLE_OUTPUT = """Overall Instruction:
This type of problem involves the sequential determination of events, e.g. Who {Relation R} {entity \
C} before {entity B}. To find the answer {entity A} we reason in three steps: first determine the \
temporal anchor, i.e. the time t of {entity B, Relation R, entity C}; then find which head entities \
have a Relation R connection with {entity C}; finally keep the answers that satisfy the time \
requirement before t.

Step-by-step Guide:
1. Use get_time to find the time, $get_time(entity B, Relation R, entity C)$, which gives {entity B, \
Relation R, entity C, Time t};
2. use get_head_entity to get the head entities, $get_head_entity(entity C, Relation R, no time \
constraints)$, which gives a list of (entity, time) pairs;
3. use get_before to keep the entities that satisfy the constraint, $get_before({entities}, t)$;
4. complete the reasoning by answering the entity found, $answer(entity A)$."""


def build_methodology_messages(correct: Sequence[str], incorrect: Sequence[str] | None) -> list[Message]:
    """The methodology-induction prompt (Figure 9). ``incorrect`` ``None``: the no-incorrect-examples
    ablation (the incorrect section is left out)."""
    samples = f"Correct samples:\n{chr(10).join(correct) if correct else '(none)'}"
    if incorrect is not None:
        samples += f"\n\nIncorrect samples:\n{chr(10).join(incorrect) if incorrect else '(none)'}"
    kinds = "correct and incorrect examples" if incorrect is not None else "correct examples"
    text = "\n\n".join(
        [
            f"Carefully analyze the following {kinds}. From these, extract and summarize the corresponding "
            f"patterns and principles. Based on these examples, provide a comprehensive methodology that "
            f"describes how to correctly tackle this type of problem, highlighting the key steps and common "
            f"pitfalls to avoid.",
            f"Task Definition:\n{TASK_DEFINITION}\n(end of Task Definition)",
            f"Here is an example output:\nExample 1:\n{_EXAMPLE_OUTPUT}\n(end of example output)",
            f"Here are the samples for the current question type:\n{samples}\n(end of samples)",
            "Now start writing. Please design a methodology that describes how to correctly tackle this type "
            "of problem. The goal is to provide a comprehensive guide that highlights the key steps and "
            "common pitfalls to avoid when approaching this type of problem. Organize your output by strictly"
            " following the output format below:\n\nOverall Instruction:\n<Define this methodology in detail."
            " Provide a concise guide or inference. Note that the guidance you provide should be at a "
            "methodological level, for this type of question, not for a specific one.>\n\nStep-by-step "
            "Guide:\n<A step-by-step guide or procedure detailing how to approach and solve this kind of "
            "question. Note that the steps proposed should be specific and relevant to this type of question,"
            " tell which type of action should be used in each step and the reason.>",
        ]
    )
    return [Message.user(text)]


_OVERALL = re.compile(r"overall\s+(?:methodology\s+)?instruction\s*:?", re.IGNORECASE)


def parse_methodology(text: str, *, max_chars: int = 2500) -> str:
    """The methodology text: from ``Overall Instruction`` on when present, else the whole output."""
    m = _OVERALL.search(text)
    body = text[m.start() :] if m else text
    body = body.strip()
    if len(re.findall(r"\w+", body)) < 5:
        raise ParseError("the methodology is empty or too short", raw=text, expected="a methodology text")
    return body[:max_chars]


_CALL = re.compile(r"\b(get_\w+|answer)\s*\(([^\n]*)\)", re.IGNORECASE)


def parse_written_action(text: str, actions: Sequence[str]) -> ActionChoice:
    """For a model that writes its action itself (CoT KB): the first function call in the output, grounded
    to the nearest executable action of the same function (fuzzy match on the arguments); ``answer(X)``
    becomes a free answer unless it names a listed answer action."""
    spans = [m.group(1) for m in _DOLLAR.finditer(text)] + [text]
    for span in spans:
        m = _CALL.search(span)
        if m is None:
            continue
        func, args = m.group(1).lower(), m.group(2).strip()
        written = f"{func}({args})"
        if func == "answer":
            value = args.strip("'\" ")
            listed = {_norm(a): i for i, a in enumerate(actions)}
            found = listed.get(_norm(written))
            if found is not None:
                return ActionChoice(index=found)
            if value and not _PLACEHOLDER.match(value):
                return ActionChoice(free_answer=value)
            continue
        same = [(i, a) for i, a in enumerate(actions) if a.lower().startswith(func + "(")]
        if not same:
            continue
        from rapidfuzz import fuzz, process

        best = process.extractOne(_norm(written), [_norm(a) for _, a in same], scorer=fuzz.ratio)
        if best is not None:
            return ActionChoice(index=same[best[2]][0])
    raise ParseError("no executable function call in the output", raw=text, expected=EXPECTED_ACTION)

"""ARI prompts: action selection (paper Figure 8) and abstract methodology induction (Figure 9).

Both work on plain strings (actions are their texts) so that the prompt layer does not depend on the
method's classes. Parsers never evaluate model output; they raise :class:`ParseError` with the raw text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources

from ...errors import DataError, ParseError
from ...llm.base import Message
from ...prompts.base import Bound

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

#: The file beside this module holding the worked examples, one set per :class:`ExampleSet` value
#: (``{"note": …, "examples": [{"question": …, "steps": [{"action": …, "response": …, "reason": …}]}]}``;
#: an absent ``response``/``reason`` is ``""``: the answer step's response is written "Correct!").
EXEMPLARS_FILE = "exemplars.json"
_STEP_KEYS = ("action", "response", "reason")


def _text(value: object, where: str, *, required: bool = True) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise DataError(f"{where} must be a{' non-empty' if required else ''} string", path=EXEMPLARS_FILE)
    return value


def _entries(value: object, where: str) -> list[dict[str, object]]:
    """``value``: a non-empty list of JSON objects (DataError naming ``where`` else)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise DataError(f"{where} must be a non-empty list of objects", path=EXEMPLARS_FILE)
    return value


def _example(entry: dict[str, object], where: str) -> Example:
    if set(entry) - {"question", "steps"}:
        raise DataError(f"{where} has keys other than question and steps", path=EXEMPLARS_FILE)
    steps = []
    for k, step in enumerate(_entries(entry.get("steps"), f"{where}.steps")):
        at = f"{where}.steps[{k}]"
        if set(step) - set(_STEP_KEYS):
            raise DataError(f"{at} has keys other than {', '.join(_STEP_KEYS)}", path=EXEMPLARS_FILE)
        action = _text(step.get("action"), f"{at}.action")
        response, reason = (_text(step.get(key, ""), f"{at}.{key}", required=False) for key in _STEP_KEYS[1:])
        steps.append((action, response, reason))
    return _text(entry.get("question"), f"{where}.question"), tuple(steps)


def parse_exemplars(data: object) -> dict[ExampleSet, tuple[Example, ...]]:
    """The worked examples of :data:`EXEMPLARS_FILE`'s parsed JSON, one tuple per :class:`ExampleSet`;
    a :class:`DataError` naming the file and the faulty place when it is malformed."""
    if not isinstance(data, dict) or set(data) - {"note", *ExampleSet}:
        raise DataError(f"must be an object of note and {', '.join(ExampleSet)}", path=EXEMPLARS_FILE)
    sets = {}
    for source in ExampleSet:
        block = data.get(source.value)
        if not isinstance(block, dict) or set(block) - {"note", "examples"}:
            raise DataError(f"{source.value} must be an object of note and examples", path=EXEMPLARS_FILE)
        entries = _entries(block.get("examples"), f"{source.value}.examples")
        sets[source] = tuple(_example(e, f"{source.value}.examples[{i}]") for i, e in enumerate(entries))
    return sets


def _read_exemplars() -> dict[ExampleSet, tuple[Example, ...]]:
    text = resources.files(__package__).joinpath(EXEMPLARS_FILE).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DataError(f"not valid JSON ({exc})", path=EXEMPLARS_FILE) from None
    return parse_exemplars(data)


_EXEMPLARS = _read_exemplars()
# The paper's exemplars for MultiTQ (Table 8), verbatim except: function names as Fig. 8 writes them
# (get_time, not getTime), "no time" written as the action template's "no time constraints", and the answer
# step's response "Correct!" (as in the table). The elided lists ("...") are the paper's.
PAPER_EXAMPLES: tuple[Example, ...] = _EXEMPLARS[ExampleSet.PAPER]
# Hand-written worked examples (invented for this library; not benchmark questions), with reasons (CoT KB).
EXAMPLES: tuple[Example, ...] = _EXEMPLARS[ExampleSet.OURS]


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
    # The paper's instruction to fill in a time only where an offered action has a placeholder for it.
    fill = (
        " Replace {your specified time} with a specified time in the format YYYY or YYYY-MM or YYYY-MM-DD"
        if any(TIME_PLACEHOLDER.search(a) for a in actions)
        else ""
    )
    if react:
        parts.append(
            "Organize your output by strictly following the format below:\nThought:\n<Think about "
            "what to do next.>\nAction:\n<The chosen action, enclosed in $.>"
        )
    else:
        parts.append(
            "Organize your output by strictly following the format below:\nAction:\n<Choose your next "
            f"action from the available actions above. Note: Always enclose the selected action in $.{fill}>"
            "\nReason:\n<Explain the reason for choosing this action.>"
        )
    return [Message.user("\n\n".join(parts))]


@dataclass(frozen=True)
class ActionChoice:
    """A parsed choice: the index of an offered action (with the times the model wrote into its
    ``{your specified time}`` placeholders, if it has any), or a free ``answer(...)`` text."""

    index: int | None = None
    free_answer: str | None = None
    filled: tuple[str, ...] = ()

    def written(self, actions: Sequence[str]) -> str:
        """The chosen action written out (placeholders filled with the model's times, no ``$``)."""
        if self.index is None:
            return f"answer({self.free_answer})"
        return fill_placeholders(actions[self.index], self.filled)


class ActionRefusal(StrEnum):
    """Why a reply does not choose an offered action."""

    NO_ACTION = "no_action"  # names no action at all
    NOT_OFFERED = "not_offered"  # writes an action that is not one of the offered ones
    AMBIGUOUS = "ambiguous"  # no explicit action, and its prose mentions several offered actions
    BAD_TIME = "bad_time"  # a placeholder is not filled with a time (YYYY, YYYY-MM or YYYY-MM-DD)
    FREE_ANSWER = "free_answer"  # answer(X) with X not offered, and free answers are off
    BAD_INDEX = "bad_index"  # an action number outside the list


class ActionRefused(ParseError):
    """A reply refused by :func:`parse_action_choice`: a :class:`ParseError` with its
    :class:`ActionRefusal`."""

    def __init__(self, refusal: ActionRefusal, message: str, *, raw: str) -> None:
        super().__init__(message, raw=raw, expected=EXPECTED_ACTION)
        self.refusal = refusal


_DOLLAR = re.compile(r"\$([^$\n]+?)\$")
_ANSWER = re.compile(r"^\s*answer\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_CALL_SPAN = re.compile(r"^\s*[A-Za-z_]\w*\s*\(.*\)\s*$", re.DOTALL)
_ACTION_LINE = re.compile(r"action\s*\d*\s*:[ \t]*\n?[ \t]*(.+)", re.IGNORECASE)
_INDEX = re.compile(r"^\s*(?:action\s*)?#?(\d{1,3})[.):]?\s*$", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\{?\s*(your|answer|entity|entities|specified|time)\b", re.IGNORECASE)
#: The ARI authors' time placeholders (``{your specified time}``; start/end for ``get_between``).
TIME_PLACEHOLDER = re.compile(r"\{your specified (?:start |end )?time\}", re.IGNORECASE)
_TIME_VALUE = re.compile(r"^-?\d{1,4}(?:-\d{2}(?:-\d{2})?)?$")
_SPACE = re.compile(r"[\s_]+")
_PUNCT_SPACE = re.compile(r"\s*([(),])\s*")
EXPECTED_ACTION = "one of the available actions, enclosed in $, e.g. $answer(...)$"


def _written_key(action: str) -> str:
    """A written action for comparison with the executable ones: :func:`_norm` with ``_`` read as a space and
    ``{}`` dropped (``get_first(entities)`` is ``get_first({entities})``)."""
    return _norm(action.replace("_", " ").replace("{", "").replace("}", ""))


def _norm(text: str) -> str:
    """An action for comparison: case, underscores and spacing around ``(``, ``,`` and ``)`` ignored."""
    return _PUNCT_SPACE.sub(r"\1", _SPACE.sub(" ", text.strip().strip("$`'\" .")).casefold())


def fill_placeholders(action: str, times: Sequence[str]) -> str:
    """``action`` (without ``$``) with its ``{your specified … time}`` placeholders replaced by ``times``."""
    values = iter(times)
    return TIME_PLACEHOLDER.sub(lambda m: next(values, m.group(0)), action.strip().strip("$").strip())


def _template(action: str) -> re.Pattern[str] | None:
    """A pattern matching ``action`` (normalised) with each time placeholder captured; ``None`` when the
    action has no placeholder."""
    norm = _norm(action)
    parts = TIME_PLACEHOLDER.split(norm)
    if len(parts) == 1:
        return None
    return re.compile("(.+?)".join(re.escape(p) for p in parts))


def _explicit(text: str) -> str | None:
    """The action the reply writes out: its ``Action:`` line (the ``$…$`` in it), else the first ``$…$``
    call, else its first line — whichever is a call or an action number first."""
    spans: list[str] = []
    for m in _ACTION_LINE.finditer(text):
        line = m.group(1).strip()
        dollar = _DOLLAR.search(line)
        spans.append(dollar.group(1) if dollar else line)
    spans += [m.group(1) for m in _DOLLAR.finditer(text)]
    spans.append(text.strip().splitlines()[0] if text.strip() else "")
    for span in spans:
        bare = span.strip().strip("$`*").strip()
        if _CALL_SPAN.match(bare) or _INDEX.match(bare):
            return bare
    return None


def parse_action_choice(text: str, actions: Sequence[str], *, allow_free_answer: bool = True) -> ActionChoice:
    """Which of ``actions`` the model chose, or :class:`ActionRefused` saying why none — never another.

    The reply's explicit action (see :func:`_explicit`) must be one of ``actions`` up to spaces,
    underscores and case, or fill an offered action's ``{your specified time}`` placeholders with times
    (the ARI authors' notation), or be an action number. ``answer(X)`` that is not offered is a free answer
    when ``allow_free_answer``. Without an explicit action, the one offered action the reply mentions is
    taken (several: refused as ambiguous)."""
    if not actions and not allow_free_answer:
        raise ActionRefused(ActionRefusal.NO_ACTION, "no actions to choose from", raw=text)
    span = _explicit(text)
    if span is None:
        return _mentioned(text, actions)
    number = _INDEX.match(span)
    if number:
        k = int(number.group(1))
        if 1 <= k <= len(actions):
            return ActionChoice(index=k - 1)
        raise ActionRefused(ActionRefusal.BAD_INDEX, f"action number {k} is not in the list", raw=text)
    norm = _norm(span)
    for i, action in enumerate(actions):
        if _norm(action) == norm and not TIME_PLACEHOLDER.search(action):
            return ActionChoice(index=i)
    for i, action in enumerate(actions):
        pattern = _template(action)
        m = pattern.fullmatch(norm) if pattern is not None else None
        if m is None:
            continue
        times = tuple(g.strip().strip("{}").strip() for g in m.groups())
        bad = [t for t in times if not _TIME_VALUE.match(t)]
        if bad:
            raise ActionRefused(
                ActionRefusal.BAD_TIME,
                f"{span!r} fills the time placeholder with {bad[0]!r}, "
                "not a time (YYYY, YYYY-MM or YYYY-MM-DD)",
                raw=text,
            )
        return ActionChoice(index=i, filled=times)
    answer = _ANSWER.match(span)
    if answer:
        value = answer.group(1).strip().strip("'\"")
        if allow_free_answer and value and not _PLACEHOLDER.match(value):
            return ActionChoice(free_answer=value)
        why = "free answers are off" if value and not _PLACEHOLDER.match(value) else "it has no answer"
        raise ActionRefused(ActionRefusal.FREE_ANSWER, f"{span!r} is not offered and {why}", raw=text)
    raise ActionRefused(ActionRefusal.NOT_OFFERED, f"{span!r} is not one of the offered actions", raw=text)


def _mentioned(text: str, actions: Sequence[str]) -> ActionChoice:
    """The one offered (placeholder-free) action the reply's prose names."""
    low = _norm(text)
    found = sorted(
        {i for i, a in enumerate(actions) if _template(a) is None and _norm(a) and _norm(a) in low}
    )
    # an action mentioned only inside a longer mentioned one ("answer(A)" in "answer(A B)") does not count
    found = [i for i in found if not any(j != i and _norm(actions[i]) in _norm(actions[j]) for j in found)]
    if len(found) == 1:
        return ActionChoice(index=found[0])
    if found:
        names = ", ".join(repr(actions[i]) for i in found[:4])
        raise ActionRefused(ActionRefusal.AMBIGUOUS, f"the reply names several actions ({names})", raw=text)
    raise ActionRefused(ActionRefusal.NO_ACTION, "the output names none of the available actions", raw=text)


def parse_constrained_choice(text: str, actions: Sequence[str]) -> ActionChoice:
    """Parser for choice-constrained requests: the output is one of the action texts (up to spaces and
    case), else read as a free reply by :func:`parse_action_choice`."""
    norm = _norm(text)
    for i, action in enumerate(actions):
        if _norm(action) == norm:
            return ActionChoice(index=i)
    return parse_action_choice(text, actions, allow_free_answer=False)


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
    """For a model that writes its action itself (CoT KB): the first function call in the output, read as
    the executable action it writes out (case, ``_`` vs space, spacing and ``{}`` ignored); a call that is no
    executable action is refused with the reason (never swapped for a near one); ``answer(X)`` becomes a free
    answer unless it names a listed answer action."""
    listed = {_written_key(a): i for i, a in enumerate(actions)}
    spans = [m.group(1) for m in _DOLLAR.finditer(text)] + [text]
    for span in spans:
        m = _CALL.search(span)
        if m is None:
            continue
        func, args = m.group(1).lower(), m.group(2).strip()
        written = f"{func}({args})"
        found = listed.get(_written_key(written))
        if found is not None:
            return ActionChoice(index=found)
        if func == "answer":
            value = args.strip("'\" ")
            if value and not _PLACEHOLDER.match(value):
                return ActionChoice(free_answer=value)
            continue
        if any(a.lower().startswith(func + "(") for a in actions):
            raise ActionRefused(
                ActionRefusal.NOT_OFFERED,
                f"the written action {written[:200]!r} is not one of the executable actions of {func}",
                raw=text,
            )
    raise ParseError("no executable function call in the output", raw=text, expected=EXPECTED_ACTION)


# --- the prompts as PromptSpecs (one call each: the parsers close over the actions offered) ------------
def action_prompt(
    messages: Sequence[Message], actions: Sequence[str], *, constrained: bool, allow_free_answer: bool = True
) -> Bound[ActionChoice]:
    """The next action among ``actions`` (``constrained``: the reply must be one of them exactly)."""
    if constrained:
        return Bound("ari.action", messages, lambda t: parse_constrained_choice(t, actions))
    free = allow_free_answer
    return Bound("ari.action", messages, lambda t: parse_action_choice(t, actions, allow_free_answer=free))


def written_action_prompt(messages: Sequence[Message], actions: Sequence[str]) -> Bound[ActionChoice]:
    """An action the model writes itself (CoT KB), read against the executable ``actions``."""
    return Bound("ari.written_action", messages, lambda t: parse_written_action(t, actions))


def methodology_prompt(correct: Sequence[str], incorrect: Sequence[str] | None) -> Bound[str]:
    """The methodology induced from solved (and failed) examples (Figure 9)."""
    return Bound("ari.methodology", build_methodology_messages(correct, incorrect), parse_methodology)


def build_schema_block(entities: Sequence[str], relations: Sequence[str], times: Sequence[str]) -> str:
    """What CoT KB is told about the KB instead of a list of actions: the linked entities, relation names of
    their 1-hop subgraph and the question's times."""
    return (
        f"Entities in the question: {', '.join(entities) or '(none)'}\n"
        f"Relations around them: {', '.join(relations) or '(none)'}\n"
        f"Times in the question: {', '.join(times) or '(none)'}\n"
        "Write your next action with one of the functions above, using these names exactly; use {entities} "
        "for the current entity list."
    )

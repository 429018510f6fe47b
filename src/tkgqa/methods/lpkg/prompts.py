"""LPKG prompts (Wang et al. 2024, Appendix C): planning (C.2, code-formatted input/output), verbalisation of
grounded instances (C.1) and sub-question answering (C.3).

* :func:`planner_messages` — the planning input: the fixed instruction, ``k`` demonstrations (in-context
  planning, ICLPKG) and ``Original_Question: str = '…'``; :func:`finetune_messages` — the fine-tuned
  planner's input (the question only), the same at training and inference.
* :data:`VERBALIZE_PROMPT` — context ``pattern``, ``instance`` (the instance's steps with ``{Ans_k}``
  placeholders) and ``n``; parses a JSON object ``{"sub_questions": [...], "question": "..."}`` with exactly
  ``n`` sub-questions whose placeholders are the instance's.
* :data:`ANSWER_PROMPT` — context ``question`` and ``facts``; the paper's answer format ``[A#B#C]`` (a JSON
  or Python list is accepted too), ``[None]`` for no answer; parsed without eval.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from ...errors import ParseError
from ...llm.base import Message
from ...llm.parsing import extract_json_object, parse_answer_list
from ...prompts.base import Context, Prompt

PLANNER_SYSTEM = "You are a planner. You decompose complex questions into code-formatted plans."

PLANNER_INSTRUCTION = (
    "Decompose the original question into sub-questions and write the plan as code. Each sub-question "
    "is searched and answered: Info_k = Search(query=Sub_Question_k), Ans_k = Get_Answer(query="
    "Sub_Question_k, info=Info_k); put {Ans_k} in a later f-string sub-question to use an earlier answer. "
    "Combine answers with Intersection(Answer1=..., Answer2=...), Union(...), Compare(Original_Query="
    "Original_Question, Subquestions=[...], Answers=[...]), Before/After(Answer=..., Time=Ans_k), "
    'During(Answer=..., Time="YYYY-MM"), Between(Answer=..., Start="YYYY-MM", End="YYYY-MM"), '
    "First(Answer=...), Last(Answer=...), and end with Final_Answer = Finish_The_Plan(Answer=...)."
)


@dataclass(frozen=True)
class Demo:
    """One planning demonstration: a question and its plan text; ``official``: the demonstration as the
    official planning prompt writes it (``Original_Question`` to ``Final_Answer``), when it came from
    there."""

    question: str
    plan: str
    official: str = ""


def question_line(question: str) -> str:
    return f"Original_Question: str = {question!r}"


def planner_messages(question: str, demos: Sequence[Demo] = (), *, instruction: bool = True) -> list[Message]:
    """The planning prompt (see the module docstring); without ``instruction`` and demos it is the short
    prompt of the fine-tuned planner (:func:`finetune_messages`)."""
    parts = [PLANNER_INSTRUCTION] if instruction else []
    for i, demo in enumerate(demos):
        parts.append(f"##Example{i}##\n{question_line(demo.question)}\n{demo.plan}")
    if demos:
        parts.append(f"##Your Turn##\n{question_line(question)}")
    else:
        parts.append(question_line(question))
    return [Message.system(PLANNER_SYSTEM), Message.user("\n\n".join(parts))]


def finetune_messages(question: str) -> list[Message]:
    """The fine-tuned planner's prompt (training and inference): the system line and the question only.

    The paper trains with the instruction and demonstrations in the input too; on CPU every input token
    costs, so the tuned planner learns the format from the targets instead (the instruction would be ~45% of
    each training sequence)."""
    return planner_messages(question, instruction=False)


def _plan(*lines: str) -> str:
    return "\n".join(lines)


def _subq(k: int, text: str, f: bool = False) -> list[str]:
    return [
        f'Sub_Question_{k} = {"f" if f else ""}"{text}"',
        f"Info_{k} = Search(query=Sub_Question_{k})",
        f"Ans_{k} = Get_Answer(query=Sub_Question_{k}, info=Info_{k})",
    ]


#: Built-in demonstrations (written for this project over well-known public facts), used by in-context
#: planning when no planning-data file is given; one per pattern family.
BUILTIN_DEMOS: tuple[Demo, ...] = (
    Demo(
        "What sports have Fluminense and Fran Walsh's spouse played in?",
        _plan(
            *_subq(1, "Who is the spouse of Fran Walsh?"),
            *_subq(2, "What sports does {Ans_1} play?", True),
            *_subq(3, "What sports does Fluminense play?"),
            "Inter_Results1 = Intersection(Answer1=Ans_2, Answer2=Ans_3)",
            "Final_Answer = Finish_The_Plan(Answer=Inter_Results1)",
        ),
    ),
    Demo(
        "Who was the first to visit Iraq after the Danish Ministry of Defence did?",
        _plan(
            *_subq(1, "When did the Danish Ministry of Defence visit Iraq?"),
            *_subq(2, "Who visited Iraq?"),
            "Temp_Results1 = After(Answer=Ans_2, Time=Ans_1)",
            "Temp_Results2 = First(Answer=Temp_Results1)",
            "Final_Answer = Finish_The_Plan(Answer=Temp_Results2)",
        ),
    ),
    Demo(
        "Which countries did Barack Obama visit in November 2014?",
        _plan(
            *_subq(1, "Which countries did Barack Obama visit?"),
            'Temp_Results1 = During(Answer=Ans_1, Time="2014-11")',
            "Final_Answer = Finish_The_Plan(Answer=Temp_Results1)",
        ),
    ),
    Demo(
        "Which magazine was started first, Arthur's Magazine or First for Women?",
        _plan(
            *_subq(1, "When was Arthur's Magazine started?"),
            *_subq(2, "When was First for Women started?"),
            "Ans_3 = Compare(Original_Query=Original_Question, "
            "Subquestions=[Sub_Question_1, Sub_Question_2], Answers=[Ans_1, Ans_2])",
            "Final_Answer = Finish_The_Plan(Answer=Ans_3)",
        ),
    ),
    Demo(
        "What are the record labels of the spouse of Gloria Estefan?",
        _plan(
            *_subq(1, "Who is the spouse of Gloria Estefan?"),
            *_subq(2, "What are the record labels of {Ans_1}?", True),
            "Final_Answer = Finish_The_Plan(Answer=Ans_2)",
        ),
    ),
    Demo(
        "Which cities are twinned with Hamilton or located in Genesee County?",
        _plan(
            *_subq(1, "Which cities are twinned with Hamilton?"),
            *_subq(2, "Which cities are located in Genesee County?"),
            "Union_Results1 = Union(Answer1=Ans_1, Answer2=Ans_2)",
            "Final_Answer = Finish_The_Plan(Answer=Union_Results1)",
        ),
    ),
)

# --- verbalisation (Appendix C.1) ------------------------------------------------------------------------
VERBALIZE_TEMPLATE = (
    "Turn a knowledge-graph query into natural-language questions. The query is a list of steps; each "
    "search step becomes one simple sub-question, in order, and must keep its placeholders such as "
    "{{Ans_1}} unchanged; the other steps combine answers. Then write one fluent complex question that "
    "asks the whole query without placeholders. Do not add knowledge that is not in the query.\n"
    "Pattern: {pattern}\nQuery:\n{instance}\n"
    'Reply with JSON only: {{"sub_questions": [<{n} strings>], "question": "<complex question>"}}'
)


@dataclass(frozen=True)
class Verbalization:
    sub_questions: list[str]
    question: str


def build_verbalize(context: Context) -> list[Message]:
    text = VERBALIZE_TEMPLATE.format(pattern=context["pattern"], instance=context["instance"], n=context["n"])
    return [Message.user(text)]


def verbalize_parser(n: int, placeholders: Sequence[Sequence[str]]) -> Prompt[Verbalization]:
    """The verbalisation prompt checking ``n`` sub-questions with these placeholders each."""

    def parse(text: str) -> Verbalization:
        data = extract_json_object(text)
        subs, question = data.get("sub_questions"), data.get("question")
        expected = f'{{"sub_questions": [{n} strings], "question": "..."}}'
        if not isinstance(subs, list) or not all(isinstance(s, str) and s.strip() for s in subs):
            raise ParseError("sub_questions must be a list of strings", raw=text, expected=expected)
        if len(subs) != n:
            raise ParseError(f"expected {n} sub-questions, got {len(subs)}", raw=text, expected=expected)
        if not isinstance(question, str) or not question.strip() or "{" in question:
            raise ParseError("question must be a string without placeholders", raw=text, expected=expected)
        for sub, want in zip(subs, placeholders, strict=True):
            if sorted(re.findall(r"\{(\w+)\}", sub)) != sorted(want):
                raise ParseError(
                    f"sub-question {sub!r} must hold exactly {list(want)}", raw=text, expected=expected
                )
        return Verbalization([s.strip() for s in subs], question.strip())

    return Prompt("lpkg.verbalize", build_verbalize, parse)


# --- sub-question answering (Appendix C.3) --------------------------------------------------------------
ANSWER_TEMPLATE = (
    "Given a question and some information that may help you answer the question. Please answer the "
    "question based on the information provided.\n### Information:\n{facts}\n### Question:\n{question}\n"
    "### Your Answer: (You only need to provide the final answer of the question. Intermediate answers are "
    "not needed. Please return your answer in the form of a list, where each element in the list is a short "
    "entity answer, such as [Apple]. When you think there are multiple answers, please divide them with a "
    "'#' symbol, such as [Apple#Banana#Origin]. If you don't know, please return [None].)"
)


def numbered_facts(facts: Sequence[object]) -> str:
    """The facts one a line, numbered from 1 (``1. …``), or ``(none)``: the ``Information`` of both
    sub-question answer prompts."""
    return "\n".join(f"{i}. {f}" for i, f in enumerate(facts, 1)) or "(none)"


def build_answer(context: Context) -> list[Message]:
    facts = numbered_facts(context["facts"])
    return [Message.user(ANSWER_TEMPLATE.format(facts=facts, question=context["question"]))]


def parse_lpkg_answer(text: str) -> list[str]:
    """``[A#B]`` (the paper's format), a JSON/Python list, or one bare answer (the shared answer-list
    parser with ``#`` as a separator); ``[None]`` is no answer (``[]``)."""
    return parse_answer_list(text, separator="#", allow_empty=True)


ANSWER_PROMPT: Prompt[list[str]] = Prompt("lpkg.answer", build_answer, parse_lpkg_answer)


# --- the paper preset: the authors' prompts -------------------------------------------------------------
#: The file beside this module holding the official code-completion planning prompt's opening (the authors'
#: planning data, Appendix C.2): the function stubs the plan calls, byte for byte as the authors' prompt
#: writes them (tabs, a trailing space and the closing blank line included), so it diffs against their file.
OFFICIAL_HEADER_FILE = "official_planning_header.txt"
#: :data:`OFFICIAL_HEADER_FILE`'s text, read once at import; ``tests/methods/lpkg/test_lpkg_paper.py`` checks
#: it against the authors' file (``tkgqa data fetch lpkg-prompt``: ``llm_recordings/`` under the data root)
#: when present.
OFFICIAL_HEADER = resources.files(__package__).joinpath(OFFICIAL_HEADER_FILE).read_text(encoding="utf-8")
OFFICIAL_RULE = "###################"
OFFICIAL_YOUR_TURN = "# Your turn! Just complete the code below and do not return other things."


def official_question_line(question: str) -> str:
    """``Original_Question: str = "…"`` as the official prompt writes it (double quotes)."""
    return 'Original_Question: str = "' + question.replace("\\", "\\\\").replace('"', '\\"') + '"'


def official_planner_messages(question: str, examples: Sequence[str]) -> list[Message]:
    """The official planning prompt: :data:`OFFICIAL_HEADER`, one ``# Example i:`` block per rendered
    demonstration (``examples``: each from ``Original_Question`` to ``Final_Answer``), "# Your turn!" and
    the question; one user message, the model completes the code."""
    parts = [OFFICIAL_HEADER]
    for i, body in enumerate(examples):
        parts.append(f"{OFFICIAL_RULE}\n# Example {i}:\n{OFFICIAL_RULE}\n\n{body.strip()}\n\n")
    parts.append(
        f"{OFFICIAL_RULE}\n{OFFICIAL_YOUR_TURN}\n{OFFICIAL_RULE}\n\n{official_question_line(question)}\n"
    )
    return [Message.user("".join(parts))]


#: The authors' sub-question QA prompt (``QA_Pipeline.sub_QA_prompt``, Appendix C.3), verbatim with its
#: "your own knowledge" clauses; ``{info}`` the retrieved information, ``{question}`` the sub-question.
AUTHORS_ANSWER_TEMPLATE = (
    "Given a question and some information that may help you answer the question. Please answer the "
    "question based on your own knowledge and the information provided. \n### Information:\n{info}\n"
    "### Question:\n{question}\n### Your Answer: (You only need to provide the final answer of the "
    "question. Intermediate answers are not needed. Please return your answer in the form of a list, "
    "where each element in the list is a short entity answer, such as [Apple]. When you think there are "
    "multiple answers, please divide them with a '#' symbol, such as [Apple#Banana#Origin]. If the answer "
    "is not included in the information provided, please answer based on your own knowledge. If you "
    "don't know either, please return [None].)\n"
)


def build_authors_answer(context: Context) -> list[Message]:
    """The authors' QA prompt over ``context["facts"]`` (numbered) and ``context["question"]``."""
    facts = numbered_facts(context["facts"])
    return [Message.user(AUTHORS_ANSWER_TEMPLATE.format(info=facts, question=context["question"]))]


AUTHORS_ANSWER_PROMPT: Prompt[list[str]] = Prompt(
    "lpkg.answer_authors", build_authors_answer, parse_lpkg_answer
)

COMPARE_INSTRUCTION = (
    "Your task is to answer a comparison question. I will first tell you the original question, and tell you "
    "some sub-questions and their corresponding answers to the sub-questions. Please answer the original "
    "comparison question based on the sub-questions and the answers to the sub-questions."
)


def build_authors_compare(context: Context) -> list[Message]:
    """The authors' comparison prompt (``QA_Pipeline.compare_QA_prompt``), verbatim — including its missing
    line breaks between blocks: ``context["question"]`` the original question, ``context["sub_questions"]``
    and ``context["answers"]`` (each a list of strings, written as ``[A#B]``)."""
    original = context["question"]
    prompt = f"{COMPARE_INSTRUCTION}\n### Original Question:\n{original}"
    for i, (sub, answers) in enumerate(zip(context["sub_questions"], context["answers"], strict=True), 1):
        written = "[" + "#".join(answers) + "]" if answers else "[None]"
        prompt += f"### Sub-Question {i}:\n{sub}\n### Answer to Sub-Question {i}:\n{written}"
    prompt += (
        f"### Please Answer the Original Question: {original} (You only need to provide the final answer "
        "of the question. Intermediate answers are not needed. Please return your answer in the form of a "
        "list, where each element in the list is a short entity answer, such as [Yes] or [No] or [Entity], "
        "etc. If the answer is not included in the information provided, please answer based on your own "
        "knowledge. If you don't know either, please return [None].)"
    )
    return [Message.user(prompt)]


AUTHORS_COMPARE_PROMPT: Prompt[list[str]] = Prompt(
    "lpkg.compare_authors", build_authors_compare, parse_lpkg_answer
)

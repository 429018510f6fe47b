"""CIK-LLM prompts (Di Maio et al., Appendix B): Π_esg (relation-path selection, Listing 1) and Π_rog
(answering from the evidence set, Listing 2).

Both follow the listings' wording and examples. Our changes, for parsing and for our evidence format:
Π_esg asks for the output list only; Π_rog describes the interval keys (``START/END``) and asks to end with
``Final answer: [...]``. Π_rog has three layouts: ``flat`` — the paper's compressed form (Listing 2:
``R1(X1,e1,1990,1992)``, the times in every term; the default), ``plain`` — uncompressed (Table 2's "w/o
compression"), and ``tree`` — ours, the compressed evidence tree (facts without times, the group's entity as
an empty slot; :mod:`tkgqa.methods.cik.evidence`), described in the prompt when it is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ...errors import ParseError
from ...llm.base import Message
from ...llm.parsing import parse_answer_list, parse_string_list
from ...prompts.base import Context, Prompt

ESG_INTRO = """Given a structure of this type:

{
  "question": "<<<QUESTION>>>",
  "markers": [
    {
      "starting_node": "<<<STARTING.NODE.1>>>",
      "3-hop": {
        "D1": [relation1, relation2, relationN],
        "D2": [relation1, relation2, relationN],
        "D3": [relation1, relation2, relationN]}},
    {
      "starting_node": "<<<STARTING.NODE.2>>>",
      "3-hop": {
        "D1": [relation1, relation2, relationN],
        "D2": [relation1, relation2, relationN],
        "D3": [relation1, relation2, relationN]}}}
}

Markers contains a list when each item contain a starting_node to access into a knowledge graph and a 3-hop \
relation set. The 3-hop field contains relations that we can use to explore the graph starting from the \
starting_node. For each hop we can use only one relation, you must select the relation that best express the \
question.

Examples:

1) "question": "[Pavel Andreyevich Taran] got [Gold Star] in what year.",
"markers": [
  {
    "starting_node": "Pavel Andreyevich Taran",
    "3-hop": {
      "D1": [award received],
      "D2": [award received, winner],
      "D3": [award received, military rank, winner, educated at, spouse, position held, employer]}},
  {
    "starting_node": "Gold Star",
    "3-hop": {
      "D1": [award received],
      "D2": [winner],
      "D3": []}}
]

Expected output: [[award received, winner, ""], [award received]]

Constraints:

1. You don't need to arrive to the 3rd hop if you think that the 1st or the 2nd is enough to answer the \
question.
2. Each hop must contain only one relation.
3. Each selected relation must be picked from the appropriate list.
4. The expected output is a list of list of relations, each list of relations is a possible path to answer \
the question.
5. Each list of relations must be ordered by hop (D1-D2-D3).
6. If there are 3 markers you need to generate 3 relation list (one for each marker), if there are 2 markers \
you need to generate 2 relation list (one for each marker), if there is 1 marker you need to generate 1 \
relation list (one for each marker).
7. Each relation list is placed in the list following the order of the markers.
8. You can't invent relations or change orderings, you must pick relations from the list and respect the \
order, because i need alignment among D1-D2-D3 relations and what you generate.

Now it's your turn. Reply with the expected output only.
"""


def esg_markers(question: str, markers: Sequence[tuple[str, Sequence[Sequence[str]]]]) -> str:
    """The question/markers block: ``markers`` = (starting node label, [D1, D2, D3] relation labels)."""

    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    blocks = []
    for node, hops in markers:
        lists = ",\n".join(
            f"      {dump(f'D{k}')}: {dump(list(rels))}" for k, rels in enumerate(hops, start=1)
        )
        blocks.append(f'  {{\n    "starting_node": {dump(node)},\n    "{len(hops)}-hop": {{\n{lists}}}}}')
    body = ",\n".join(blocks)
    return f'2) "question": {dump(question)},\n"markers": [\n{body}\n]\n\nExpected output:'


def build_esg(context: Context) -> list[Message]:
    return [Message.user(ESG_INTRO + "\n" + esg_markers(context["question"], context["markers"]))]


_INNER = re.compile(r"\[([^\[\]]*)\]")


def parse_relation_paths(text: str) -> list[list[str]]:
    """``[[r1, r2, ""], [r1]]`` (quoted or bare items) → one list per marker; a flat list is one path."""
    start = text.find("[")
    if start < 0:
        raise ParseError(
            "no relation list found", raw=text, expected='a list of relation lists like [["r1", "r2"]]'
        )
    body = text[start:]
    inner = _INNER.findall(body[1:]) if body.startswith("[[") or re.match(r"\[\s*\[", body) else []
    if not inner:
        return [parse_string_list(body)]
    return [parse_string_list("[" + part + "]") for part in inner]


ESG_PROMPT: Prompt[list[list[str]]] = Prompt("cik.esg", build_esg, parse_relation_paths)


ROG_HEAD = "Answer the questions based on evidence set and the associative map.\n\n"

ROG_FORMAT_TREE = """The evidence set is an indented tree, on this form:
EntityX:
 year:
  month:
   day: relation(EntityA,) relation(,EntityZ) relation(EntityA,EntityB)
 start.time/end.time: relation(,EntityB)
EntityX is a subject of the question. Facts that happened at one time are nested by year, then month, then \
day (".." when that precision is unknown); facts valid over an interval are listed under their \
"start.time/end.time" key. Each fact is in a prolog format, relation(head,tail); an empty head or tail is \
the subject the fact is listed under (under X1, R1(,e2) means R1(X1,e2)).
"""

ROG_FORMAT_FLAT = """The evidence set is a dictionary, on this form:
{ "EntityX": {"start.time/end.time": ["relation(EntityA,EntityZ,start.time1,end.time1)", \
"relation(EntityP,EntityY,start.time2,end.time2)"]} ...}
EntityX is a subject of the question, "start.time/end.time" is the interval of validity of the evidence list \
on it (a single date when the facts happened on that day) and the list is a list of evidence in a prolog \
format.
"""

ROG_MAP = """
The associative map gives a short representation for the entities in the question and for the relations, \
where the key is a variable used to reduce length of the subject and the value is the subject. Other \
entities are variables too (e1, e2, ...): answer with the variable when the answer is one of them.

Example: Associative map: X1=Ernesto Castano; R1=member of sports team.
"""

ROG_RULES = """
The order in which keys are in the evidence set dictionary represent a temporal axis, so they are ordered in \
an increasing manner.

The evidence set is the knowledge that you can use, you can base your answer only on these information.

The answer must be always find in the evidence set, if you can't find it directly with the given question, \
try to paraphrase it to match the information in the evidence set.

Example: "What's the last team Ernesto Castano played?" since "played" is not a relation in the evidence \
set, you must find a synonym of "played" that is in the evidence set, in this case "member of sports team".

Questions may be related to temporal aspect of the claim, so you must use the temporal information in the \
claim (time or adj or adv) and in the evidence set.

If you can't find the answer, you can consider also that the interval validity of each fact can fall in the \
interval validity of another fact.

If some time is proposed in the question, you must use it to access in the right interval for each entity \
key in the evidence set. Of course you can intersect the intervals of validity of the evidence set to find \
the answer, moreover you can intersect also the main entities in the question.

Example)

1) Question: What's the last team [Ernesto Castano] was on?
"""

ROG_TAIL = """
Explain briefly, then end with one line "Final answer: [...]" listing the answer(s) (variables, names or \
times); if the evidence set does not contain the answer, end with "Final answer: []".

Now it's your turn!
"""

_EXAMPLES = {
    "tree": (
        "Evidence:\nX1:\n 1958/1959: R1(,e1)\nX2:\n 2005:\n  09:\n   05: R2(e4,)\nmeans that Ernesto Castano "
        "was a member of sports team e1 from 1958 to 1959, and that e4 R2 X2 on 2005-09-05.\n",
        "Associative map:\nX1=Ernesto Castano\nR1=member of sports team\n\n"
        "Evidence set:\nX1:\n 1958/1959: R1(,e1)\n 1959/1969: R1(,e2)\n 1970/1971: R1(,e3)\n\n"
        'Answer: Since X1="Ernesto Castano" and R1="member of sports team", the last team that Ernesto '
        'Castano was on is e3.\nFinal answer: ["e3"]\n',
    ),
    "flat": (
        'Evidence: {"X1": {"1958/1959": ["R1(X1,e1,1958,1959)"]}} means that Ernesto Castano was a member of '
        "sports team e1 from 1958 to 1959.\n",
        "Associative map: X1=Ernesto Castano; R1=member of sports team\n\n"
        'Evidence set: {"X1": {"1958/1959": ["R1(X1,e1,1958,1959)"], "1959/1969": ["R1(X1,e2,1959,1969)"], '
        '"1970/1971": ["R1(X1,e3,1970,1971)"]}}\n\n'
        'Answer: Since X1="Ernesto Castano" and R1="member of sports team", the last team that Ernesto '
        'Castano was on is e3.\nFinal answer: ["e3"]\n',
    ),
    "plain": (
        "",
        'Evidence set: {"Ernesto Castano": {"1958/1959": ["member of sports team(Ernesto Castano,Inter,1958,'
        '1959)"], "1970/1971": ["member of sports team(Ernesto Castano,Juventus,1970,1971)"]}}\n\n'
        'Answer: Juventus is the last team that Ernesto Castano was on.\nFinal answer: ["Juventus"]\n',
    ),
}


def rog_instructions(layout: str) -> str:
    """The fixed part of Π_rog for an evidence ``layout``: ``flat`` (compressed, the paper's exact form and
    the default), ``tree`` (compressed, our time tree) or ``plain`` (no compression)."""
    if layout not in _EXAMPLES:
        raise ValueError(f"unknown evidence layout {layout!r}")
    meaning, example = _EXAMPLES[layout]
    fmt = ROG_FORMAT_TREE if layout == "tree" else ROG_FORMAT_FLAT
    mapping = ROG_MAP + "\n" + meaning if layout != "plain" else ""
    return ROG_HEAD + fmt + mapping + ROG_RULES + "\n" + example + ROG_TAIL


def build_rog(context: Context) -> list[Message]:
    """Context: ``question``, ``evidence`` (text), ``map`` (associative map text, empty when uncompressed),
    ``layout`` (``flat``/``tree``/``plain``; default: ``flat`` with a map, else ``plain``)."""
    layout = context.get("layout") or ("flat" if context.get("map") else "plain")
    parts = [rog_instructions(layout), f"Question: {context['question']}"]
    if context.get("map"):
        parts.append(_block("Associative map:", context["map"]))
    parts.append(_block("Evidence set:", context["evidence"]))
    parts.append("Answer:")
    return [Message.user("\n\n".join(parts))]


def _block(title: str, body: str) -> str:
    """``title body`` on one line, or the body on its own lines when it has several (the indented tree)."""
    return f"{title}\n{body}" if "\n" in body else f"{title} {body}"


_FINAL = re.compile(r"final\s+answer\s*[:：]", re.IGNORECASE)
_ANSWER = re.compile(r"\banswer\s*[:：]", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[a-z0-9\]\)]{2})\.$")  # "… is e3." but not "F.C."
_ENTITY_VAR = re.compile(r"\be[0-9]+\b")
_NONE = re.compile(r"^(none|n/?a|unknown|no answer|no information.*)$", re.IGNORECASE)


def parse_rog_answer(text: str) -> list[str]:
    """Answers from ``Final answer: [...]`` (else the last ``Answer:`` line, else the last line)."""
    marks = list(_FINAL.finditer(text)) or list(_ANSWER.finditer(text))
    tail = text[marks[-1].end() :] if marks else text.strip().splitlines()[-1] if text.strip() else ""
    tail = tail.strip()
    if not tail:
        raise ParseError("no answer found", raw=text, expected='a final line like Final answer: ["e3"]')
    if "[" not in tail:  # free text (the paper's plain "Answer: ..."): its variables, else the line itself
        line = _SENTENCE_END.sub("", tail.splitlines()[0].strip())
        variables = list(dict.fromkeys(_ENTITY_VAR.findall(line)))
        return variables or ([] if _NONE.match(line) else [line])
    return parse_answer_list(tail, allow_empty=True)  # "Final answer: []" is no answer


ROG_PROMPT: Prompt[list[str]] = Prompt("cik.rog", build_rog, parse_rog_answer)

"""R3's prompts (Toroghi et al., "Right for Right Reasons", Appendix D) in our formats (``preset=ours``), the
shared pieces, and the typed parsers; the paper's own formats are in :mod:`.r3_paper`, the types the
parsers return in :mod:`.r3_types`.

Ours: the paper's instructions with the reply formats made explicit — the axiom as ``Rule`` + ``Premises``
+ ``Conclusion``; the answer as numbered steps, each citing in brackets the facts (``F3``) and rules
(``R1``) it uses, then ``Answer: Yes | No | I don't know``; our few-shot examples (well-known entities).
:func:`parse_verdict` and :func:`parse_axiom` also read the paper's and the authors' formats ("Answer: …
Therefore, the answer is: No", "Rule: …", "IF … THEN …").

Every parser raises :class:`~tkgqa.errors.ParseError` (with the raw text) and never anything else; the
grounded-answer parser is also the *mechanical grounding check*: a step citing a fact id that is not among
the retrieved facts — whatever its length or form (``F12345``, ``F12x``) — is an error, so
:func:`~tkgqa.llm.complete_parsed` re-asks with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ....errors import ParseError
from ....llm.base import Message
from .replies import Axiom, GroundedAnswer, PremiseCheck, PremiseStatus, Step, Verdict

# --- shared pieces ------------------------------------------------------------------------------------
_FACT_ID = re.compile(r"\bF(\d+)\b")
_RULE_ID = re.compile(r"\bR(\d+)\b")
# Anything inside a citation bracket that looks like an id: ``F3``, ``f3``, ``F12345``, ``F12x``, ``Fact 3``,
# ``R1``. Each must be a listed id exactly (any length); a malformed one is a bad citation, never ignored.
_ID_LIKE = re.compile(r"(?<!\w)(?:(fact|rule)\s*#?\s*|([FR]))(\d\w*)", re.IGNORECASE)
_BRACKETS = re.compile(r"\[([^\[\]]{0,400})\]")
_STEP = re.compile(r"^\s*(?:\**\s*step\s*\d+\s*\**\s*[:.)\-]|\d+\s*[.)]|[-*•])\s*(.*\S)\s*$", re.IGNORECASE)
_ANSWER = re.compile(r"(?:^|\n)\s*\**\s*(?:final\s+)?answer\s*\**\s*[:：]\s*(.*)", re.IGNORECASE)
_ANSWER_IS = re.compile(r"\bthe\s+(?:final\s+)?answer\s+is\s*\**\s*[:：]?\s*\**\s*(.*)", re.IGNORECASE)
_UNKNOWN = re.compile(
    r"^\W*(?:i\s*(?:do\s*n[o'’]?t|dont|cannot|can't|can’t)\s*(?:know|tell|say|determine)|unknown|"
    r"not\s+(?:enough|sure|determinable)|undetermined|insufficient|uncertain|cannot\s+be\s+determined)",
    re.IGNORECASE,
)
_TRUE = re.compile(r"^\W*(?:yes|true|correct)\b", re.IGNORECASE)
_FALSE = re.compile(r"^\W*(?:no|false|incorrect|not\s+correct)\b", re.IGNORECASE)


def id_order(fid: str) -> tuple[int, str]:
    """Sort key of ids like ``F12`` (numeric order; anything else last)."""
    digits = fid[1:]
    return (int(digits), fid) if digits.isdigit() and len(digits) < 10 else (10**10, fid)


def fact_id(i: int) -> str:
    return f"F{i}"


def rule_id(i: int) -> str:
    return f"R{i}"


def listed(lines: Sequence[tuple[str, str]], empty: str = "(none)") -> str:
    """``[F1] (h, r, t)`` lines."""
    return "\n".join(f"[{i}] {text}" for i, text in lines) if lines else empty


def verdict_of(text: str) -> Verdict | None:
    """The verdict a phrase starts with (``Yes, …`` → TRUE, ``I dont know`` → UNKNOWN), else ``None``."""
    s = text.strip().strip("*\"'`").strip()
    if _UNKNOWN.match(s):
        return Verdict.UNKNOWN
    if _TRUE.match(s):
        return Verdict.TRUE
    if _FALSE.match(s):
        return Verdict.FALSE
    return None


def parse_verdict(text: str) -> Verdict:
    """The final verdict of a reply: the last ``Answer: …`` or ``the answer is: …`` phrase that starts with a
    verdict (the paper's "Answer: <reason> Therefore, the answer is: No", the authors' first style "Answer:
    Yes, based on Fact 4 …", ours "Answer: Yes"), else the last line."""
    found = sorted((m.start(1), m.group(1)) for p in (_ANSWER_IS, _ANSWER) for m in p.finditer(text))
    for _, phrase in reversed(found):
        verdict = verdict_of(phrase or "")
        if verdict is not None:
            return verdict
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if lines:
        verdict = verdict_of(re.sub(r"^\W*final\s+answer\W*", "", lines[-1], flags=re.IGNORECASE))
        if verdict is not None:
            return verdict
    raise ParseError(
        "no verdict found",
        raw=text,
        expected="'Therefore, the answer is: Yes|No|I don't know' or a last line 'Answer: Yes|No|…'",
    )


# --- 1. entity extraction -------------------------------------------------------------------------------
ENTITY_SYSTEM = (
    "You are a helpful assistant helping in finding the answer to a question. The found answer has to "
    "be based on Wikidata Knowledge Graph triples obtained about entities. Given a question and a "
    "helpful fact, identify the least number of entities for which we need to obtain information to be "
    "able to solve the question.\nYou must only mention the entities and nothing else.\nWrite the "
    "entities in the following format:\nSelected entity/entities:\nentity1\nentity2..."
)
ENTITY_EXAMPLES = (
    ("Could Marie Curie have watched a television broadcast?", ["Marie Curie"]),
    (
        "Did the author of The Hobbit fight in the same war as Harold Macmillan?",
        ["The Hobbit", "Harold Macmillan"],
    ),
)


def build_entity_messages(question: str) -> list[Message]:
    shots = "\n\n".join(
        f"Question: {q}\nSelected entity/entities:\n" + "\n".join(e) for q, e in ENTITY_EXAMPLES
    )
    return [
        Message.system(ENTITY_SYSTEM),
        Message.user(f"{shots}\n\nQuestion: {question}\nSelected entity/entities:"),
    ]


def parse_entities(text: str, *, max_entities: int = 8) -> list[str]:
    """Entity names, one per line after ``Selected entity/entities:`` (bullets and numbers stripped);
    ``None`` → empty list."""
    body = re.split(
        r"selected\s+entit(?:y|ies)(?:\s*/\s*entit(?:y|ies))?\s*[:：]", text, flags=re.IGNORECASE
    )[-1]
    names: list[str] = []
    for line in body.splitlines():
        s = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip().strip("\"'`*").strip()
        if not s or s.endswith(":") or len(s) > 120:
            continue
        if s.lower() in {"none", "nothing", "n/a"}:
            return []
        names.extend(p.strip() for p in re.split(r"\s*;\s*", s) if p.strip())
    out = list(dict.fromkeys(names))[:max_entities]
    if not out:
        raise ParseError(
            "no entity names found", raw=text, expected="'Selected entity/entities:' then one name per line"
        )
    return out


# --- 2. axiom surfacing -------------------------------------------------------------------------------
AXIOM_SYSTEM = (
    "Task: You are a helpful assistant trying to give us some guidance about answering a question. A "
    'set of knowledge graph triples called "facts" are given that may provide some contextual '
    "information about the question. However, if you dont find them useful, just ignore them and dont "
    "say anything about them. We may later look for additional facts to answer the question. Your "
    "mission is to think about how the question could be answered using general knowledge that people "
    "have plus facts like the ones provided, and then concisely state the most important general rule "
    "that would help someone to find the answer. But, you must not directly answer the question and you "
    "must not judge whether the question is answerable or not. Focus on what general information can "
    "help in giving a yes/no answer to the question.\nYour response must follow the following format: "
    '"<an explanation> Therefore, a helpful rule is:\\n Rule: <An entity or Something relevant to it> '
    "must <have some property> to <property identified in question>.\" Then list the rule's premises, "
    "each an atomic condition that can be checked against facts, and its conclusion:\nPremises:\n- "
    "<premise>\nConclusion: <conclusion>\nTry your best to use your general knowledge. Be smart. Dont "
    "ask or state conditions on obvious information that most average humans would know. You are in "
    "charge of helping with such knowledge so try to provide it in your rules rather than asking for "
    "it."
)
AXIOM_EXAMPLE = (
    "Question: Could Marie Curie have watched a television broadcast?\nFacts:\n[F1] (Marie Curie, "
    "occupation, physicist)\n\nRegular television broadcasts started around 1928, so the question "
    "depends on whether she was still alive then. Therefore, a helpful rule is:\nRule: Marie Curie must "
    "have been alive after 1928 to have watched a television broadcast.\nPremises:\n- Marie Curie's "
    "date of death is after 1928\nConclusion: Marie Curie could have watched a television broadcast."
)


def build_axiom_messages(
    question: str, facts: Sequence[tuple[str, str]], previous: Sequence[str] = ()
) -> list[Message]:
    avoid = (
        "\nRules already tried (they did not lead to an answer; state a different one):\n"
        + "\n".join(f"- {r}" for r in previous)
        if previous
        else ""
    )
    return [
        Message.system(AXIOM_SYSTEM),
        Message.user(f"{AXIOM_EXAMPLE}\n\nQuestion: {question}\nFacts:\n{listed(facts)}{avoid}\n"),
    ]


_RULE_LINE = re.compile(
    r"(?:^|\n|\\n)[ \t]*\**[ \t]*rule[ \t]*\**[ \t]*[:：][ \t]*\**[ \t]*(\S.*)", re.IGNORECASE
)
_RULE_ANY = re.compile(r"\brule\s*\**\s*[:：]\s*\**\s*(\S.*)", re.IGNORECASE)
_RULE_IS = re.compile(r"helpful rule is\s*[:：]?\s*(?:\\n)?\s*(\S.*)", re.IGNORECASE)
_IF_THEN = re.compile(r"(?:^|\n)\s*\**\s*(if\b\s*(.+?),?\s+then\b\s*(.+))", re.IGNORECASE | re.DOTALL)


def _premise_lines(text: str) -> list[str]:
    premises: list[str] = []
    pm = re.search(
        r"premises?\s*\**\s*[:：](.*?)(?:\n\s*\**\s*conclusion\b|\Z)", text, flags=re.IGNORECASE | re.DOTALL
    )
    if pm:
        for line in pm.group(1).splitlines():
            s = re.sub(r"^\s*(?:[-*•]|\d+[.)]|P\d+\s*[:.)])\s*", "", line).strip()
            if s and len(s) <= 300:
                premises.append(s)
    return premises


def _if_then(text: str) -> Axiom | None:
    """``IF p1 AND p2, THEN c`` (the authors' first axiom format): premises split at upper-case ``AND``
    (a disjunction with ``OR`` stays one premise)."""
    m = _IF_THEN.search(text)
    if m is None:
        return None
    rule = " ".join(m.group(1).split())
    condition, conclusion = " ".join(m.group(2).split()), " ".join(m.group(3).split())
    parts = [condition] if re.search(r"\bOR\b", condition) else re.split(r"\s+AND\s+", condition)
    premises = tuple(p.strip(" ,") for p in parts if p.strip(" ,"))
    return Axiom(rule[:500], premises[:8] or (rule[:500],), conclusion[:500])


def parse_axiom(text: str, *, hint_ok: bool = False) -> Axiom:
    """The surfaced axiom: ``Rule: …`` (the paper's format; the last such line), else ``… helpful rule is:
    …``, else ``IF … THEN …`` (the authors' first format); with ``Premises:`` bullet lines (ours; default:
    the rule itself) and ``Conclusion: …``. ``hint_ok`` (the paper's prompt: "if you can't produce a
    helpful rule …, just try to make understanding the question easier by giving a hint or defining
    terms"): a reply without a rule is that hint, kept as the guidance (``Axiom.hint``); otherwise it is a
    ParseError."""
    lines = list(_RULE_LINE.finditer(text))
    m = lines[-1] if lines else _RULE_ANY.search(text) or _RULE_IS.search(text)
    rule = m.group(1).strip().strip("\"'*").strip() if m else ""
    if not rule:
        axiom = _if_then(text)
        if axiom is not None:
            return axiom
        hint = " ".join(text.split())
        if hint_ok and hint:
            return Axiom(hint[:500], (hint[:500],), hint=True)
        raise ParseError(
            "no rule found", raw=text, expected="a line 'Rule: <X> must <property> to <property>'"
        )
    premises = _premise_lines(text)
    cm = re.search(r"conclusion\s*\**\s*[:：]\s*(.+)", text, flags=re.IGNORECASE)
    conclusion = cm.group(1).strip() if cm else ""
    return Axiom(rule[:500], tuple(dict.fromkeys(premises))[:8] or (rule[:500],), conclusion[:500])


# --- 3. sub-graph pruning (LLM_T) ------------------------------------------------------------------------
PRUNE_SYSTEM = (
    "Task: You are a helpful assistant that is trying to help us answer a question. Given the question, "
    "a general rule that will help us answer the question, and a list of knowledge graph triples which "
    "we call them facts. Consider the facts and think about their relation to the question and general "
    "rule and try to extract the facts that may help answering the question. The facts may be "
    "insufficient to answer the question, but try your best to extract the relevant facts.\nYour "
    "response must follow this format:\n<an explanation> Therefore, the relevant facts are: <list of "
    "relevant fact ids, e.g. F2, F7>\nJust copy the selected fact ids and dont generate facts on your "
    'own. If there are no relevant facts, just output "None".'
)


def build_prune_messages(question: str, rule: str, facts: Sequence[tuple[str, str]]) -> list[Message]:
    return [
        Message.system(PRUNE_SYSTEM),
        Message.user(f"Question: {question}\nGeneral rule: {rule}\nFacts:\n{listed(facts)}\n"),
    ]


def build_relation_messages(question: str, rule: str, relations: Sequence[str]) -> list[Message]:
    names = "\n".join(f"- {r}" for r in relations) or "(none)"
    return [
        Message.system(PRUNE_SYSTEM.replace("fact ids, e.g. F2, F7", "relations, copied from the list")),
        Message.user(f"Question: {question}\nGeneral rule: {rule}\nRelations of the facts:\n{names}\n"),
    ]


def parse_fact_selection(text: str, valid: Collection[str]) -> list[str]:
    """Fact ids (``F3``) after ``the relevant facts are:`` (or anywhere), only those in ``valid``;
    ``None`` → empty. Raises ParseError when the reply names nothing at all."""
    tail = re.split(r"relevant facts are\s*[:：]?", text, flags=re.IGNORECASE)[-1]
    ids = [f"F{n}" for n in _FACT_ID.findall(tail)]
    if not ids and re.search(r"\bnone\b", tail, flags=re.IGNORECASE):
        return []
    if not ids:
        raise ParseError(
            "no fact ids found", raw=text, expected="'Therefore, the relevant facts are: F1, F4' or 'None'"
        )
    return [i for i in dict.fromkeys(ids) if i in valid]


def parse_relation_selection(text: str, relations: Sequence[str]) -> list[str]:
    """The relations of ``relations`` named after ``the relevant …`` (case-insensitive); ``None`` → []."""
    tail = re.split(r"relevant (?:facts|relations) are\s*[:：]?", text, flags=re.IGNORECASE)[-1].casefold()
    found = [r for r in relations if r.casefold() and r.casefold() in tail]
    if not found and not re.search(r"\bnone\b", tail):
        raise ParseError(
            "no relation from the list found", raw=text, expected="relations copied from the list"
        )
    return found


# --- 4. fact-grounded answer selection ------------------------------------------------------------------
ANSWER_SYSTEM = (
    "Task: You are a helpful assistant that is trying to help us answer a question. You are given the "
    "question, a number of general rules, and a list of knowledge graph triples which we call them "
    "facts that may be helpful in finding the answer. First, go over the facts and general rules one by "
    "one. Try to think of how each fact may help you answer the question. Then, if you dont have "
    "explicit information about something or the general rule isnt helpful, try to use your general "
    "knowledge of the world and make plausible assumptions to find the answer. Be smart. Dont ask for "
    "obvious information that most average humans would know.\nYour response must follow the following "
    "format, one reasoning step per line, each step ending with the ids of the facts (F…) and rules "
    "(R…) it uses in brackets, or [assumption] for a plausible assumption from general knowledge:\nStep "
    "1: <reason> [F2]\nStep 2: <reason> [R1]\nAnswer: <Yes, No, or I dont know>\nCite only facts from "
    'the list. You must only answer "Yes" or "No" if the facts, general rules and plausible '
    "assumptions give the answer, and a Yes or No must rest on at least one cited fact. If they are not "
    'enough even with plausible assumptions, you must answer "I dont know".'
)
ANSWER_EXAMPLE = (
    "Question: Could Marie Curie have watched a television broadcast?\nGeneral rules:\n[R1] Marie Curie "
    "must have been alive after 1928 to have watched a television broadcast.\nFacts:\n[F1] (Marie "
    "Curie, date of birth, 7 November 1867)\n[F2] (Marie Curie, date of death, 4 July 1934)\n\nStep 1: "
    "Marie Curie died on 4 July 1934. [F2]\nStep 2: 1934 is after 1928, so she was alive when regular "
    "broadcasts began. [R1]\nAnswer: Yes"
)


def build_answer_messages(
    question: str, rules: Sequence[tuple[str, str]], facts: Sequence[tuple[str, str]], *, claim: bool = False
) -> list[Message]:
    what = "Claim (answer Yes if it is correct, No if it is not)" if claim else "Question"
    return [
        Message.system(ANSWER_SYSTEM),
        Message.user(
            f"{ANSWER_EXAMPLE}\n\n{what}: {question}\nGeneral rules:\n{listed(rules)}\nFacts:\n"
            f"{listed(facts, '(no facts retrieved yet)')}\n"
        ),
    ]


def cited_ids(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(fact ids, rule ids)`` written in ``text`` (``F3``/``f3``/``Fact 3`` → ``F3``, ``R1``/``rule 1`` →
    ``R1``), each as written: an id of any length, or a malformed one (``F12x``, ``F03``), is kept as it is
    so that the caller's check rejects it when it is not listed — nothing that looks like a citation is
    ever dropped."""
    facts: list[str] = []
    rules: list[str] = []
    for m in _ID_LIKE.finditer(text):
        kind = (m.group(1) or m.group(2)).lower()
        (facts if kind.startswith("f") else rules).append(("F" if kind.startswith("f") else "R") + m.group(3))
    return tuple(dict.fromkeys(facts)), tuple(dict.fromkeys(rules))


def _citations(step: str) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    groups = _BRACKETS.findall(step)
    text = _BRACKETS.sub("", step).strip()
    joined = " ".join(groups)
    facts, rules = cited_ids(joined)
    assumption = bool(re.search(r"assum|general knowledge|commonsense", joined, re.IGNORECASE))
    return text or step.strip(), facts, rules, assumption


def parse_grounded_answer(
    text: str, fact_ids: Collection[str], rule_ids: Collection[str] = (), *, require_fact: bool = True
) -> GroundedAnswer:
    """Steps with their citations and the verdict; raises ParseError when a step cites a fact or rule that
    is not listed (the mechanical grounding check), or when a Yes/No cites no fact (``require_fact``)."""
    verdict = parse_verdict(text)
    body = re.split(r"(?:^|\n)\s*\**\s*(?:final\s+)?answer\s*\**\s*[:：]", text, flags=re.IGNORECASE)[0]
    steps: list[Step] = []
    for line in body.splitlines():
        m = _STEP.match(line)
        if m:
            steps.append(Step(*_citations(m.group(1))))
    if not steps and body.strip():
        steps = [Step(*_citations(body.strip()[:1000]))]
    for n, step in enumerate(steps, 1):
        bad = [f for f in step.facts if f not in fact_ids]
        if bad:
            shown = ", ".join(sorted(fact_ids, key=id_order)[:40]) or "none"
            raise ParseError(
                f"step {n} cites {', '.join(bad)}, which {'is' if len(bad) == 1 else 'are'} not among the "
                f"retrieved facts ({shown}); cite only listed facts",
                raw=text,
                expected="citations of listed fact ids",
            )
        bad_rules = [r for r in step.rules if r not in rule_ids]
        if bad_rules:
            raise ParseError(
                f"step {n} cites unknown rule {', '.join(bad_rules)}", raw=text, expected="listed rules"
            )
    answer = GroundedAnswer(tuple(steps), verdict)
    if require_fact and verdict != Verdict.UNKNOWN and not answer.cited_facts:
        raise ParseError(
            "a Yes/No answer must cite at least one listed fact in a step; cite the facts it rests on, or "
            "answer I dont know",
            raw=text,
            expected="steps citing fact ids",
        )
    return answer


# --- 5. missing evidence identification -------------------------------------------------------------------
NEED_SYSTEM = (
    "Task: You are a helpful assistant trying to help in finding the required information to answer a "
    "given question. A the set of general rules and a list of knowledge graph triples, which we name "
    "facts, are already provided. Based on these, an answer was propsed, but it was not identified as "
    "being correct and certain. You are asked to identify what other facts are required to give a "
    "certain answer to the question. The facts you ask for will be obtained from a knowledge graph. So, "
    "try to extract the name of entity or entities about which we should obtain facts and mention it in "
    "your answer. For example, if knowing about Bill Clintons daughters religion is necessary, and "
    "among the already provided facts you see ('Bill Clinton', 'child', 'Chelsea Clinton'), you should "
    'respond "we need to know Chelsea Clintons religion".\nFinally If the provided facts and general '
    "rules are already sufficient to give a certain answer to the question, your response should only "
    'be: "nothing".'
)
ENTITY_NEXT_SYSTEM = (
    "Task: Considering the provided information need that is needed to answer the question and a set of "
    "relevant facts, identify the name of the Wikidata entity that facts about it will be helpful in "
    "fulfilling the information need. Try to extract the entity name from the relevant facts. For "
    "example, if the information need states that we need to know about Bill Clintons daughter, use the "
    "fact ('Bill Clinton', 'child', 'Chelsea Clinton') and select the entity name Chelsea Clinton. "
    "Remember that the entity name you pick must be different from all Previously chosen "
    "entities.\nReply with one line: Entity: <name>"
)


def build_need_messages(
    question: str, rules: Sequence[tuple[str, str]], facts: Sequence[tuple[str, str]]
) -> list[Message]:
    return [
        Message.system(NEED_SYSTEM),
        Message.user(f"Question: {question}\nGeneral rules:\n{listed(rules)}\nFacts:\n{listed(facts)}\n"),
    ]


def parse_need(text: str) -> str | None:
    """The information need, or ``None`` for "nothing"."""
    s = text.strip().strip("\"'`*").strip()
    if not s:
        raise ParseError("empty reply", raw=text, expected='"we need to know …" or "nothing"')
    if re.fullmatch(r"\W*nothing\W*", s, flags=re.IGNORECASE):
        return None
    return s[:600]


def build_next_entity_messages(
    question: str, need: str, facts: Sequence[tuple[str, str]], chosen: Sequence[str]
) -> list[Message]:
    return [
        Message.system(ENTITY_NEXT_SYSTEM),
        Message.user(
            f"Question: {question}\nInformation need: {need}\nRelevant facts:\n{listed(facts)}\n"
            f"Previously chosen entities: {', '.join(chosen) or '(none)'}\n"
        ),
    ]


def parse_next_entity(text: str, chosen: Collection[str] = ()) -> str:
    """``Entity: <name>`` (or the first non-empty line); ParseError if it repeats a chosen entity."""
    m = re.search(r"entity(?:\s+name)?\s*\**\s*[:：]\s*(.+)", text, flags=re.IGNORECASE)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    name = (m.group(1) if m else (lines[0] if lines else "")).strip().strip("\"'`*.").strip()
    if not name or len(name) > 150:
        raise ParseError("no entity name found", raw=text, expected="'Entity: <name>'")
    if name.casefold() in {c.casefold() for c in chosen}:
        raise ParseError(
            f"{name!r} was already chosen; pick a different entity", raw=text, expected="a new entity"
        )
    return name


# --- 6. preference matching: premise checks per option ----------------------------------------------
OPTION_SYSTEM = (
    "Task: You check whether a recipe option satisfies a user's request. You are given the request, the "
    "premises an acceptable option must satisfy (numbered P1, P2, …: preferences stated in the request "
    "and requirements that follow from the user's personal facts), and facts about the user and the "
    "option. For every premise write one line 'P<n>: satisfied|violated|unknown [fact ids]' citing the "
    "facts (F…) that show it, then a short reason. Use general knowledge about food (what an ingredient "
    "is, what a diet excludes) but cite only listed facts."
)


def build_option_messages(
    request: str, premises: Sequence[str], option: str, facts: Sequence[tuple[str, str]]
) -> list[Message]:
    numbered = "\n".join(f"P{i}: {p}" for i, p in enumerate(premises, 1))
    return [
        Message.system(OPTION_SYSTEM),
        Message.user(
            f"Request: {request}\nPremises:\n{numbered}\nOption: {option}\nFacts:\n{listed(facts)}\n"
        ),
    ]


_PREMISE_LINE = re.compile(
    r"^\W*P\s*(\d{1,2})\s*\**\s*[:.)\-]\s*\**\s*(satisfied|violated|unknown|not satisfied)\b(.*)$",
    re.IGNORECASE,
)


def parse_premise_checks(text: str, n_premises: int, fact_ids: Collection[str]) -> list[PremiseCheck]:
    """One ``P<n>: satisfied|violated|unknown [F…]`` line per premise (missing premises: unknown); ParseError
    when no line parses or a line cites an unlisted fact."""
    found: dict[int, PremiseCheck] = {}
    for line in text.splitlines():
        m = _PREMISE_LINE.match(line.strip())
        if not m:
            continue
        n = int(m.group(1))
        if not 1 <= n <= n_premises or n in found:
            continue
        word = m.group(2).lower()
        status = PremiseStatus.VIOLATED if word == "not satisfied" else PremiseStatus(word)
        _, facts, _, _ = _citations(m.group(3))
        bad = [f for f in facts if f not in fact_ids]
        if bad:
            raise ParseError(
                f"P{n} cites {', '.join(bad)}, not a listed fact", raw=text, expected="listed fact ids"
            )
        note = _BRACKETS.sub("", m.group(3)).strip(" :-–")
        found[n] = PremiseCheck(n, status, facts, note[:300])
    if not found:
        raise ParseError("no premise lines found", raw=text, expected="'P1: satisfied [F2]' per premise")
    return [found.get(n, PremiseCheck(n, PremiseStatus.UNKNOWN)) for n in range(1, n_premises + 1)]

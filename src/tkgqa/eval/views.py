"""What the web UI shows of an answer, computed on the server so it is tested once: facts with their labels,
the symbolic program as a tree with the fact count of each step, and what is missing when it found nothing.
No FastAPI here.

The program is the one-line text of :func:`tkgqa.query.program.nodes.pretty` (``entities((in(match(?, Make a
visit, China), 2014-11) ?? …))``); :func:`program_tree` parses it back into nodes and replays the
executor's evaluation order (:meth:`tkgqa.query.program.executor.Executor.rows`) over the trace's ``{"op",
"facts"}`` steps to give each node its count. When the replay does not consume the steps exactly, the
counts are left out (``counted`` false) rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..kg.base import KGStore
from ..kg.fact import Fact

#: Call names of the program text and the executor op each one records (``None``: records none itself).
_CALLS: dict[str, str | None] = {
    "match": "match",
    "in": "filter",
    "before": "filter",
    "after": "filter",
    "starts": "filter",
    "ends": "filter",
    "during": "filter",
    "overlaps": "filter",
    "first": "select",
    "last": "select",
    "exclude": "exclude",
    "entities": None,
    "times": None,
    "time": "time",
}
_CALL = re.compile(r"^([a-z_]+)\((.*)\)$", re.DOTALL)
MAX_PROGRAM_CHARS = 20_000


def labelled_fact(fact: Fact, kg: KGStore | None) -> dict[str, Any]:
    """``fact.to_dict()`` plus ``subject_label``, ``relation_label`` and ``object_label`` (the KG's labels:
    ``Military (Burundi)`` for ``Military_(Burundi)``)."""
    data = fact.to_dict()
    for key in ("subject", "relation", "object"):
        name = data[key]
        data[f"{key}_label"] = kg.label(name) if kg is not None and name is not None else name
    return data


def _cites(fact: dict[str, Any], answer: str) -> bool:
    """Whether the labelled ``fact`` supports ``answer``: as its subject or object (name or label), or as
    its start or end time (``2014-11`` is supported by a fact starting on ``2014-11-26``)."""
    if answer in (fact["subject"], fact["object"], fact["subject_label"], fact["object_label"]):
        return True
    return any(
        isinstance(t, str) and t and (t.startswith(answer) or answer.startswith(t))
        for t in (fact.get("start"), fact.get("end"))
    )


def evidence_cover(answers: Sequence[str], evidence: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many of ``answers`` at least one ``evidence`` fact supports: ``{"answers", "with_evidence",
    "without"}`` (``without``: the answers no shown fact supports, best first) — so a view never implies
    that the evidence of a few answers is the evidence of all."""
    without = [a for a in answers if not any(_cites(f, a) for f in evidence)]
    return {"answers": len(answers), "with_evidence": len(answers) - len(without), "without": without[:50]}


def decision_facts(trace: Sequence[dict[str, Any]], kg: KGStore | None) -> dict[str, Any] | None:
    """What decided a first/last or before/after answer, from a symbolic program's trace: ``candidates``
    (the facts its last ``first``/``last`` step chose among, labelled; ``pool``: how many there were) and
    ``reference`` (the reference events its ``time`` steps read). ``None`` when the trace has neither."""
    candidates: list[dict[str, Any]] = []
    pool = 0
    reference: list[dict[str, Any]] = []
    for step in trace:
        if not isinstance(step, dict):
            continue
        if step.get("op") == "select" and isinstance(step.get("candidates"), list):
            candidates = [f for f in step["candidates"] if isinstance(f, dict)]
            pool = int(step.get("pool") or len(candidates))
        ref = step.get("reference") if step.get("op") == "time" else None
        if isinstance(ref, dict) and ref not in reference:
            reference.append(ref)
    if not candidates and not reference:
        return None

    def label(raw: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return labelled_fact(Fact.from_dict(raw), kg)
        except (KeyError, TypeError, ValueError):
            return None

    return {
        "candidates": [f for f in map(label, candidates) if f is not None],
        "pool": pool,
        "reference": [f for f in map(label, reference) if f is not None],
    }


_NAME_PHRASE = re.compile(r"[A-Z][\w'.\-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w'.\-]*)*")
MIN_SUGGESTION = 0.7


def entity_suggestions(
    question: str, suggest: Callable[[str, int], Sequence[Any]], limit: int = 5
) -> list[dict[str, str]]:
    """ "Did you mean" for a question in which the parser found no KG entity: each capitalised phrase (but the
    question's first word) with its near matches in the KG (``{"mention", "label"}``, score >= 0.7)."""
    out: list[dict[str, str]] = []
    for match in _NAME_PHRASE.finditer(question):
        mention = match.group().strip()
        if match.start() == 0:  # "Who", "Which", "After Barack Obama": drop the question's first word
            mention = mention.partition(" ")[2].strip()
        if len(mention) < 3:
            continue
        for cand in suggest(mention, 3):
            label = str(getattr(cand, "label", cand))
            if float(getattr(cand, "score", 0.0)) >= MIN_SUGGESTION and label != mention:
                item = {"mention": mention, "label": label}
                if item not in out:
                    out.append(item)
    return out[:limit]


@dataclass
class ProgramNode:
    """One step of the program: its operator (``match``, ``in``, ``??``…), its text, the facts it found
    (``None``: not run, or unknown) and its child steps; ``args`` are the plain arguments (names, times)."""

    op: str
    text: str
    args: list[str] = field(default_factory=list)
    children: list[ProgramNode] = field(default_factory=list)
    facts: int | None = None
    ran: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "text": self.text,
            "args": list(self.args),
            "facts": self.facts,
            "ran": self.ran,
            "children": [c.to_dict() for c in self.children],
        }

    def walk(self) -> Iterator[ProgramNode]:
        yield self
        for child in self.children:
            yield from child.walk()


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split on ``sep`` outside parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _wrapped(text: str) -> bool:
    """Whether the outer parentheses of ``text`` enclose all of it."""
    return text.startswith("(") and text.endswith(")") and _balanced(text[1:-1])


def parse_program(text: str) -> ProgramNode:
    """The tree of a program's one-line text (a leaf ``value`` node for anything that is not a call)."""
    text = text.strip()
    if _wrapped(text):
        inner = text[1:-1]
        alternatives = _split_top(inner, " ?? ")
        if len(alternatives) == 2:
            return ProgramNode("??", text, children=[parse_program(a) for a in alternatives])
    call = _CALL.match(text)
    if call and call.group(1) in _CALLS and _balanced(call.group(2)):
        node = ProgramNode(call.group(1), text)
        for arg in _split_top(call.group(2), ","):
            if _wrapped(arg) or (_CALL.match(arg) and _CALL.match(arg).group(1) in _CALLS):  # type: ignore[union-attr]
                node.children.append(parse_program(arg))
            else:
                node.args.append(arg)
        return node
    return ProgramNode("value", text)


class _Replay:
    """Replays the executor's evaluation order over the recorded steps (see the module docstring)."""

    def __init__(self, steps: Sequence[dict[str, Any]]) -> None:
        self.steps = list(steps)
        self.pos = 0
        self.ok = True
        self.times: dict[str, int] = {}

    def take(self, op: str) -> int:
        if self.pos >= len(self.steps) or self.steps[self.pos].get("op") != op:
            self.ok = False
            raise _Mismatch
        step = self.steps[self.pos]
        self.pos += 1
        return int(step.get("facts", 0) or 0)

    def rows(self, node: ProgramNode, *, record: bool = True) -> int:
        node.ran = True
        kind = _CALLS.get(node.op, "") if node.op != "??" else "fallback"
        rows = [c for c in node.children if c.op != "time" and c.op != "value"]
        if node.op == "??":
            count = self.rows(node.children[0])
            if count == 0 and len(node.children) > 1:
                count = self.rows(node.children[1])
        elif kind == "match":
            count = -1
        elif kind == "filter":
            times = [c for c in node.children if c.op == "time"]
            ref_ok = all(self.time(t) for t in times)
            if not ref_ok:
                count = 0
            elif rows and rows[0].op == "match":
                rows[0].ran = True  # matched inside the time window: no step of its own
            elif rows:
                self.rows(rows[0])
            count = -1
        elif kind in ("select", "exclude") or kind is None:
            if rows:
                self.rows(rows[0])
            if kind is None:
                node.facts = rows[0].facts if rows else None
                return node.facts or 0
            count = -1
        else:
            self.ok = False
            raise _Mismatch
        facts = self.take(kind) if record and kind else count
        node.facts = facts
        return facts

    def time(self, node: ProgramNode) -> bool:
        """Evaluate ``time(which, rows…)``: cached per text like the executor's per-expression cache."""
        node.ran = True
        if node.text in self.times:
            node.facts = self.times[node.text]
            return node.facts > 0
        rows = [c for c in node.children if c.op != "value"]
        found = self.rows(rows[0]) if rows else 0
        if found:
            if self.pos < len(self.steps) and self.steps[self.pos].get("op") == "time":
                self.pos += 1
            else:  # rows without a start time: no reference time
                found = 0
        node.facts = found
        self.times[node.text] = found
        return found > 0


class _Mismatch(Exception):
    pass


def _label_arg(arg: str, label: Callable[[str], str]) -> str:
    """A match argument with each name labelled (``Make_a_visit|~Host_a_visit`` → ``Make a visit|~Host a
    visit``); ``?``, ``*`` and ``<->`` stay."""
    parts = []
    for part in arg.split("|"):
        prefix = "~" if part.startswith("~") else ""
        name = part[len(prefix) :]
        parts.append(part if name in ("?", "*", "<->", "") else prefix + label(name))
    return "|".join(parts)


def program_tree(
    trace: Sequence[dict[str, Any]], label: Callable[[str], str] | None = None
) -> dict[str, Any] | None:
    """``{"tree", "counted", "empty_step", "missing"}`` for an answer whose trace holds a symbolic program
    (``None`` otherwise); ``label`` turns the names in the steps' arguments into labels. ``empty_step``: the
    text of the first step that ran and found nothing although its inputs found something; ``missing``:
    what that says is missing from the KG (``no fact (Danish Ministry of Defence, Make a visit, Iraq) in
    the KG``)."""
    program = next((s["program"] for s in trace if isinstance(s.get("program"), str)), None)
    if program is None or len(program) > MAX_PROGRAM_CHARS:
        return None
    root = parse_program(program)
    steps = [s for s in trace if isinstance(s, dict) and "op" in s]
    replay = _Replay(steps)
    try:
        replay.rows(root)
        counted = replay.ok and replay.pos == len(steps)
    except (_Mismatch, IndexError, ValueError):
        counted = False
    if not counted:
        for node in root.walk():
            node.facts, node.ran = None, False
    if label is not None:
        for node in root.walk():
            if node.op == "match" or node.op == "exclude":
                node.args = [_label_arg(a, label) for a in node.args]
    culprit = next((n for n in root.walk() if _culprit(n)), None)
    return {
        "tree": root.to_dict(),
        "counted": counted,
        "empty_step": culprit.text if culprit else None,
        "missing": _missing(culprit) if culprit else None,
    }


def _culprit(node: ProgramNode) -> bool:
    """A step that ran and found nothing although every step it read found something (or is unknown)."""
    if not node.ran or node.facts != 0 or node.op in ("??", "value"):
        return False
    return all(c.facts != 0 for c in node.children if c.ran and c.op != "value")


def _match_text(node: ProgramNode) -> str:
    subject, relation, obj = (a if a != "?" else "any entity" for a in node.args)
    return f"({subject}, {relation.split('|')[0]}, {obj})"


def _missing(node: ProgramNode) -> str:
    """What ``node`` finding nothing says is missing from the KG."""
    if node.op == "match" and len(node.args) == 3:
        return f"no fact {_match_text(node)} in the KG"
    rows = [c for c in node.children if c.op not in ("time", "value")]
    inner = next((n for c in rows for n in c.walk() if n.op == "match" and len(n.args) == 3), None)
    if node.op in ("in", "before", "after", "starts", "ends", "during", "overlaps") and inner is not None:
        when = node.args[-1] if node.args else "the asked time"
        return f"no fact {_match_text(inner)} {node.op} {when} in the KG"
    if node.op == "time":
        return "no reference event with a date in the KG"
    return f"the step {node.text[:200]} found no fact"

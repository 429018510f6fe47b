"""What the web UI shows of an answer, computed on the server so it is tested once: facts with their labels,
the symbolic program as a tree with the fact count of each step, and what is missing when it found nothing.
No FastAPI here.

The program is the one typed program of :mod:`tkgqa.query.program.nodes`, as the executor recorded it in
the trace (its :class:`~tkgqa.query.program.steps.ExecutedStep`: the program as data and the facts each
node found, by path — :meth:`tkgqa.query.program.executor.Executor.executed`); :func:`program_tree` reads
it back with :func:`~tkgqa.query.program.nodes.from_dict` and shows each node with its count. Nothing is
re-parsed or replayed; a trace without that record (another method, a run written before it was recorded)
has no tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, assert_never

from ..errors import DataError
from ..kg.base import KGStore
from ..kg.fact import Fact
from ..query.program import nodes as nodes
from ..query.program.steps import ExecutedStep, NodeStep, TimeStep
from ..time import TemporalRelation
from ..trace import TraceStep, read_trace, steps_of

#: The most program nodes a view reads from a trace (a recorded program has a few dozen).
MAX_NODES = 2_000
_FILTER_OPS = frozenset(str(r) for r in TemporalRelation)


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


def decision_facts(
    trace: Sequence[TraceStep | Mapping[str, Any]], kg: KGStore | None
) -> dict[str, Any] | None:
    """What decided a first/last or before/after answer, from a symbolic program's trace: ``candidates``
    (the facts its last ``first``/``last`` step chose among, labelled; ``pool``: how many there were) and
    ``reference`` (the reference events its ``time`` steps read). ``None`` when the trace has neither."""
    candidates: list[dict[str, Any]] = []
    pool = 0
    reference: list[dict[str, Any]] = []
    steps = read_trace(trace)  # an answer's steps as they are, a row's JSON steps read back
    for node in steps_of(steps, NodeStep):
        if node.op == "select" and node.candidates is not None:
            candidates = [dict(f) for f in node.candidates if isinstance(f, Mapping)]
            pool = node.pool or len(candidates)
    for time in steps_of(steps, TimeStep):
        ref = dict(time.reference) if isinstance(time.reference, Mapping) else None
        if ref is not None and ref not in reference:
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


def _view_args(node: nodes.Node) -> tuple[str, list[str]]:
    """A node's operator and plain arguments as the view shows them (names, times, orders)."""
    match node:
        case nodes.Entities():
            return "entities", [str(node.order)] if node.order != "count" else []
        case nodes.Times():
            gran = node.granularity.name.lower() if node.granularity else "as-stored"
            return "times", [gran, *(["end"] if node.use_end else [])]
        case nodes.Match():
            return "match", list(node.arguments())
        case nodes.Filter():
            return str(node.op), [str(node.time)] if isinstance(node.time, nodes.Const) else []
        case nodes.TimeOf():
            coarse = [node.granularity.name.lower()] if node.granularity else []
            return "time", [str(node.which), *coarse]
        case nodes.Select():
            return str(node.which), [str(node.n)] if node.n != 1 else []
        case nodes.Exclude():
            return "exclude", list(node.entities)
        case nodes.Fallback():
            return "??", []
        case nodes.Hop():
            return "hop", [("~" if node.inverse else "") + node.relation]
        case nodes.Combine():
            return str(node.op), []
        case nodes.Compare():
            return "compare", [str(node.mode), *(name for name, _ in node.candidates)]
        case nodes.Const():
            return "value", []
        case _:
            assert_never(node)


def _view(node: nodes.Node, path: str, facts: dict[str, Any]) -> dict[str, Any]:
    """``{"op", "text", "args", "facts", "ran", "children"}`` of ``node`` (its time constant is an argument,
    not a child), with what the executor recorded for its path."""
    op, args = _view_args(node)
    shown = [
        _view(child, f"{path}.{k}" if path else str(k), facts)
        for k, child in enumerate(nodes.children(node))
        if not isinstance(child, nodes.Const)
    ]
    count = facts.get(path)
    return {
        "op": op,
        "text": str(node),
        "args": args,
        "facts": count if isinstance(count, int) and not isinstance(count, bool) else None,
        "ran": path in facts,
        "children": shown,
    }


def _walk(view: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield view
    for child in view["children"]:
        yield from _walk(child)


def _label_arg(arg: str, label: Callable[[str], str]) -> str:
    """A match argument with each name labelled (``Make_a_visit|~Host_a_visit`` → ``Make a visit|~Host a
    visit``); ``?``, ``*`` and ``<->`` stay."""
    parts = []
    for part in arg.split("|"):
        prefix = "~" if part.startswith("~") else ""
        name = part[len(prefix) :]
        parts.append(part if name in ("?", "*", "<->", "") else prefix + label(name))
    return "|".join(parts)


def executed_program(
    trace: Sequence[TraceStep | Mapping[str, Any]],
) -> tuple[nodes.Program, dict[str, Any]] | None:
    """The typed program a symbolic trace ran and the facts of each node by path (the executor's
    :class:`~tkgqa.query.program.steps.ExecutedStep`, see
    :meth:`~tkgqa.query.program.executor.Executor.executed`); ``None`` when the trace has none (another
    method, a run written before it was recorded) or it is not a program."""
    executed = steps_of(read_trace(trace), ExecutedStep)
    record = next((s.executed for s in executed if isinstance(s.executed, Mapping)), None)
    if record is None or not isinstance(record.get("facts"), dict):
        return None
    try:
        program = nodes.from_dict(record.get("program"))
    except DataError:
        return None
    if not isinstance(program, nodes.Entities | nodes.Times) or len(record["facts"]) > MAX_NODES:
        return None
    return program, record["facts"]


def program_tree(
    trace: Sequence[TraceStep | Mapping[str, Any]], label: Callable[[str], str] | None = None
) -> dict[str, Any] | None:
    """``{"tree", "counted", "empty_step", "missing"}`` for an answer whose trace records the program the
    executor ran (``None`` otherwise): the typed program (:mod:`tkgqa.query.program.nodes`) as a tree with
    the facts each step found, as the executor recorded them; ``label`` turns the names in the steps'
    arguments into labels. ``empty_step``: the text of the first step that ran and found nothing although
    its inputs found something; ``missing``: what that says is missing from the KG (``no fact (Danish
    Ministry of Defence, Make a visit, Iraq) in the KG``)."""
    found = executed_program(trace)
    if found is None:
        return None
    program, facts = found
    tree = _view(program, "", facts)
    if label is not None:
        for node in _walk(tree):
            if node["op"] in ("match", "exclude"):
                node["args"] = [_label_arg(a, label) for a in node["args"]]
    culprit = next((n for n in _walk(tree) if _culprit(n)), None)
    return {
        "tree": tree,
        "counted": True,
        "empty_step": culprit["text"] if culprit else None,
        "missing": _missing(culprit) if culprit else None,
    }


def _culprit(node: dict[str, Any]) -> bool:
    """A step that ran and found nothing although every step it read found something (or is unknown)."""
    if not node["ran"] or node["facts"] != 0 or node["op"] in ("??", "value"):
        return False
    return all(c["facts"] != 0 for c in node["children"] if c["ran"])


def _match_text(node: dict[str, Any]) -> str:
    subject, relation, obj = (a if a != "?" else "any entity" for a in node["args"])
    return f"({subject}, {relation.split('|')[0]}, {obj})"


def _missing(node: dict[str, Any]) -> str:
    """What ``node`` finding nothing says is missing from the KG."""
    if node["op"] == "match" and len(node["args"]) == 3:
        return f"no fact {_match_text(node)} in the KG"
    rows = [c for c in node["children"] if c["op"] != "time"]
    inner = next((n for c in rows for n in _walk(c) if n["op"] == "match" and len(n["args"]) == 3), None)
    if node["op"] in _FILTER_OPS and inner is not None:
        when = node["args"][-1] if node["args"] else "the asked time"
        return f"no fact {_match_text(inner)} {node['op']} {when} in the KG"
    if node["op"] == "time":
        return "no reference event with a date in the KG"
    return f"the step {node['text'][:200]} found no fact"

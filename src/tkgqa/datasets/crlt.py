"""CR-LT-KGQA (Guo, Toroghi, Sanner 2024), the data of R3: yes/no questions (``crlt_qa``, ``CR-LT-QA.json``)
and true/false claims (``crlt_claims``, ``CR-LT-ClaimVerification.json``) about long-tail entities.

Each entry: ``id`` (``S…``/``C…``), ``query``, ``answer`` (true/false), ``KG Entities`` (surface form →
Wikidata QID), ``Inference Rule`` (the commonsense axiom), ``KG Triples`` (the gold triples as one string,
parsed by :func:`tkgqa.kg.crlt.parse_kg_triples`), ``Reasoning Steps`` (``Step``/``step`` with the facts
used, a string or a list) and ``Reasoning Strategy`` (labels such as ``temporal reasoning``).

Questions: gold ``answers`` are ``["yes"]``/``["no"]`` (questions) or ``["true"]``/``["false"]`` (claims);
``extra["choices"]`` lists the two so methods answer in the dataset's words and scoring treats the answer as
closed (no lenient substring hit); ``types`` are the reasoning strategies. The gold annotations stay out of
the fields methods read for linking (``entities`` is left empty: a method must find the entities itself):
``extra["gold_entities"]``, ``extra["inference_rule"]``, ``extra["gold_facts"]`` (the entry's triples as
fact dicts), ``extra["reasoning_steps"]`` and ``extra["triple_problems"]`` (repairs made while parsing).

The KG is the file itself (format ``crlt``: the union of every entry's triples) — an *oracle-subgraph*
setting, since no Wikidata is available offline; ``kg=`` overrides it. ``context="retrieved"`` instead gives
every question only its own entry's triples (a per-question gold subgraph, easier still).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError
from ..kg.crlt import parse_kg_triples, read_entries
from .base import Question
from .core import Dataset, DatasetRequest, check_context, dataset_loader, find_file, resolve_kg

QA_FILE = "CR-LT-QA.json"
CLAIMS_FILE = "CR-LT-ClaimVerification.json"
#: dataset → (file name, qtype, the words for true/false)
_KINDS: dict[str, tuple[str, str, tuple[str, str]]] = {
    "crlt_qa": (QA_FILE, "yes_no", ("yes", "no")),
    "crlt_claims": (CLAIMS_FILE, "claim", ("true", "false")),
}


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "correct", "1"}:
        return True
    if text in {"false", "no", "incorrect", "0"}:
        return False
    return None


def reasoning_steps(raw: Any) -> list[dict[str, Any]]:
    """``Reasoning Steps`` normalised to ``{"step": text, "facts": [fact text, …]}`` (the claim file spells
    the key ``step`` and stores the facts as a list)."""
    out: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        text = item.get("Step", item.get("step", ""))
        facts = item.get("facts used in this step", [])
        facts = [facts] if isinstance(facts, str) else [str(f) for f in facts or []]
        out.append({"step": str(text), "facts": facts})
    return out


def crlt_questions(
    path: Path, dataset: str, skipped: list[str] | None = None, broken: list[str] | None = None
) -> list[Question]:
    """The questions of a CR-LT-KGQA file as ``dataset`` (``crlt_qa`` or ``crlt_claims``). An entry whose
    ``answer`` is not true/false (S39 of the released QA file repeats its query there) is left out and
    reported in ``skipped``; a triple item that is not a triple is left out of the question's facts and
    reported in ``broken``."""
    _, qtype, words = _KINDS[dataset]
    out = []
    for entry in read_entries(path):
        qid = str(entry.get("id", "")).strip()
        if not qid or "query" not in entry:
            raise DataError(f"an entry lacks 'id' or 'query': {str(entry)[:80]!r}", path=str(path))
        parsed = parse_kg_triples(str(entry.get("KG Triples") or ""), qid)
        if broken is not None:
            broken += [str(p) for p in parsed.problems if not p.repaired]
        truth = _truth(entry.get("answer"))
        if truth is None:
            if skipped is not None:
                skipped.append(f"{qid}: answer {str(entry.get('answer'))[:60]!r} is not true/false")
            continue
        strategy = entry.get("Reasoning Strategy") or []
        out.append(
            Question(
                qid=qid,
                text=str(entry["query"]).strip(),
                answers=[words[0] if truth else words[1]],
                answer_type="value",
                qtype=qtype,
                types=[str(s) for s in (strategy if isinstance(strategy, list) else [strategy])],
                dataset=dataset,
                extra={
                    "choices": list(words),
                    "gold_entities": dict(entry.get("KG Entities") or {}),
                    "inference_rule": str(entry.get("Inference Rule") or ""),
                    "gold_facts": [f.to_dict() for f in parsed.facts()],
                    "gold_items": [str(item) for item in parsed.items],
                    "reasoning_steps": reasoning_steps(entry.get("Reasoning Steps")),
                    "triple_problems": [str(p) for p in parsed.problems],
                },
            )
        )
    return out


def _load(dataset: str, request: DatasetRequest) -> Dataset:
    split = request.split
    if split not in {"test", "all"}:
        raise ConfigError(f"{dataset} has one split (the released file): use split='test', not {split!r}")
    filename = _KINDS[dataset][0]
    qfile = find_file(f"{dataset} questions", request.root, request.questions, [filename, f"*/{filename}"])
    skipped: list[str] = []
    broken: list[str] = []
    qs = crlt_questions(qfile, dataset, skipped, broken)
    mode = check_context(request.context) or "kg"
    if mode == "retrieved":
        from ..kg.fact import Fact

        qs = [
            q.model_copy(update={"context": [Fact.from_dict(d) for d in q.extra["gold_facts"]]}) for q in qs
        ]
    kg_path = resolve_kg(request.kg, None, ()) or qfile
    meta = {
        "questions_file": str(qfile),
        "split": split,
        "context": mode,
        "setting": "oracle subgraph: the KG is the union of the file's gold triples (no Wikidata offline)"
        if mode == "kg"
        else "per-question gold triples",
        "triple_repairs": sum(len(q.extra["triple_problems"]) for q in qs),
        "skipped_entries": skipped,
    }
    return Dataset(
        dataset,
        qs,
        kg_path,
        meta,
        warnings=_entry_warnings(dataset, skipped, broken if mode == "retrieved" else []),
    )


def _entry_warnings(dataset: str, skipped: list[str], broken: list[str]) -> tuple[str, ...]:
    """One warning per kind of malformed entry, naming the entries: those left out (an answer that is not
    true/false) and, when each question gets its own triples (``context="retrieved"``), the triple items
    that are not (head, relation, tail) triples (with the shared KG its loader reports them)."""
    out = []
    if skipped:
        out.append(
            f"{dataset}: {len(skipped)} malformed entr{'y' if len(skipped) == 1 else 'ies'} left out: "
            + "; ".join(skipped[:5])
            + " (--strict makes this an error)"
        )
    if broken:
        out.append(
            f"{dataset}: {len(broken)} triple item(s) that are not (head, relation, tail) triples left out "
            "of the questions' facts: " + "; ".join(broken[:5]) + " (--strict makes this an error)"
        )
    return tuple(out)


@dataset_loader("crlt_qa")
def load_crlt_qa(request: DatasetRequest) -> Dataset:
    """CR-LT-KGQA yes/no questions (``data_dir``: the ``crlt_kgqa`` folder or the JSON file)."""
    return _load("crlt_qa", request)


@dataset_loader("crlt_claims")
def load_crlt_claims(request: DatasetRequest) -> Dataset:
    """CR-LT-KGQA claims to verify (``data_dir``: the ``crlt_kgqa`` folder or the JSON file)."""
    return _load("crlt_claims", request)

"""TimeQuestions (Jia et al., CIKM 2021) with TimeR4's retrieved facts as per-question context.

Questions (``questions/{split}.json``, official format): ``Id``, ``Question``, ``Temporal question type``
(a list: Explicit, Implicit, Temp.Ans, Ordinal), ``Answer`` = [{``AnswerType``: Entity (``WikidataQid``,
``WikidataLabel``) | Value (``AnswerArgument``)}].

* Entity answers → the label (``answer_ids`` = the QID, aligned with ``answers``).
* Time values (Wikidata timestamps ``1994-03-01T00:00:00Z``) → **years** (``"1994"``) by default: the
  timestamps carry no precision (``-01-01`` marks year precision but also real 1 January dates), the KG facts
  (TimeR4's and the tkbc KG) are year-grained, TimeR4's evaluation targets (``prompt/test_prompt.json``
  ``answer``) write every time as a year, and the questions ask "when"/"what year". ``time_granularity="day"``
  keeps the full date. The original timestamps stay in ``extra["answer_values"]``.
* Other values (populations, counts) → the value string; ``answer_type`` is that of the first answer.

Context (``context="retrieved"``, the default when no ``kg/full.txt`` is found): TimeR4's retrieved facts
(``retrieved/{split}_timer4_retrieved_facts.json``, "S rel O from Y1 to Y2.") split by
:class:`~tkgqa.datasets.verbalized.FactSplitter` with the Wikidata relation labels of
``wd_id2relation_text.txt`` (searched in ``kg/`` and ``../cronquestions/kg/``, or ``relation_labels=``) plus
:data:`~tkgqa.datasets.wikidata.EXTRA_RELATION_LABELS`. ``meta`` reports the facts that could not be split.
TimeR4's rewritten question is kept in ``extra["timer4_question"]`` when it differs; ``text`` is the original.
The fact sentences as shipped are kept in ``extra["retrieved_facts"]`` (:data:`~.base.RETRIEVED_FACTS`).
A missing relation-label file, or questions absent from the retrieved file, are ``Dataset.warnings``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError
from ..kg.fact import Fact
from ..time import TimePoint
from ..userfiles import PathLike
from .base import RETRIEVED_FACTS, Question
from .core import (
    Dataset,
    DatasetRequest,
    as_path,
    check_context,
    dataset_loader,
    find_file,
    find_optional,
    parse_questions,
    read_records,
    resolve_kg,
    row_parser,
)
from .verbalized import FactSplitter, ParsedFact, read_label_file

KG_FILES = ("kg/full.txt",)
RELATION_LABEL_FILES = ("kg/wd_id2relation_text.txt", "../cronquestions/kg/wd_id2relation_text.txt")
TYPES = ("Explicit", "Implicit", "Temp.Ans", "Ordinal")
_TIMESTAMP = re.compile(r"^([+-]?\d{1,4})-(\d{2})-(\d{2})(?:T[\d:]+Z?)?$")
_EXAMPLES = 10


def normalize_value(value: str, granularity: str = "year") -> tuple[str, str]:
    """``(answer string, kind)`` of a Wikidata value: timestamps → ``YYYY`` (or ISO day), else the value."""
    m = _TIMESTAMP.match(value.strip())
    if m is None:
        return value.strip(), "value"
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if granularity == "day" and month and day:
        try:
            return TimePoint(year, month, day).iso(), "time"
        except DataError:
            pass
    return TimePoint(year).iso(), "time"


@row_parser
def to_question(row: dict[str, Any], path: Path, i: int, granularity: str) -> Question:
    """One official TimeQuestions record → :class:`Question` (without context)."""
    if "Question" not in row or "Id" not in row:
        raise DataError(f"question #{i} lacks 'Id' or 'Question'", path=str(path))
    answers: list[str] = []
    ids: list[str] = []
    kinds: list[str] = []
    values: list[str] = []
    for a in row.get("Answer") or []:
        if not isinstance(a, dict):
            raise DataError(f"question #{i}: an Answer item is not an object", path=str(path))
        if a.get("AnswerType") == "Entity":
            text, ident, kind = (
                str(a.get("WikidataLabel") or a.get("WikidataQid")),
                a.get("WikidataQid"),
                "entity",
            )
            ident = str(ident or text)
        else:
            raw = str(a.get("AnswerArgument", ""))
            values.append(raw)
            text, kind = normalize_value(raw, granularity)
            ident = text
        if (text, ident) not in zip(answers, ids, strict=True):
            answers.append(text)
            ids.append(ident)
            kinds.append(kind)
    types = [str(t) for t in row.get("Temporal question type") or []]
    extra: dict[str, Any] = {"answer_kinds": kinds}
    if values:
        extra["answer_values"] = values
    for key, name in (("Temporal signal", "temporal_signal"), ("Data source", "data_source")):
        if key in row:
            extra[name] = row[key]
    return Question(
        qid=str(row["Id"]),
        text=str(row["Question"]),
        answers=answers,
        answer_ids=ids,
        answer_type=kinds[0] if kinds else None,  # type: ignore[arg-type]
        qtype="+".join(sorted(types)) or None,
        types=types,
        dataset="timequestions",
        extra=extra,
    )


def relation_label_files(root: Path | None, given: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if given is not None:
        files = [Path(given)] if isinstance(given, str | os.PathLike) else [Path(g) for g in given]
        for f in files:
            if not f.is_file():
                raise ConfigError(f"relation label file {str(f)!r} does not exist")
        return files
    found = find_optional(root, RELATION_LABEL_FILES)
    return [found] if found is not None else []


def parse_retrieved(
    rows: list[dict[str, Any]], label_files: list[Path]
) -> tuple[dict[str, list[Fact]], dict[str, str], dict[str, Any]]:
    """Facts per question id, rewritten questions, and statistics of the split."""
    labels: list[str] = []
    for f in label_files:
        labels.extend(read_label_file(f).values())
    splitter = FactSplitter(labels)
    texts: list[str] = []
    owners: list[str] = []
    rewritten: dict[str, str] = {}
    for row in rows:
        qid = str(row.get("id"))
        facts = row.get("timer4_retrieved_facts") or []
        if not isinstance(facts, list):
            raise DataError(f"question {qid}: 'timer4_retrieved_facts' must be a list of fact strings")
        texts.extend(str(t) for t in facts)
        owners.extend([qid] * len(facts))
        q, orig = row.get("question"), row.get("original_question")
        if q and orig and q != orig:
            rewritten[qid] = str(q)
    parsed: list[ParsedFact] = splitter.parse_many(texts)
    context: dict[str, list[Fact]] = {str(row.get("id")): [] for row in rows}
    for qid, p in zip(owners, parsed, strict=True):
        if p.fact is not None:
            context[qid].append(p.fact)
    status = Counter(p.status for p in parsed)
    stats = {
        "retrieved_facts": len(parsed),
        "context_facts": status["ok"] + status["reversed"],
        "reversed_time_facts": status["reversed"],
        "unsplit_facts": status["unsplit"],
        "unsplit_examples": [p.text for p in parsed if p.status == "unsplit"][:_EXAMPLES],
        "no_object_facts": status["no_object"],
        "bad_time_facts": status["bad_time"] + status["no_time"],
        "relation_labels": splitter.n_relation_labels,
        "relation_label_files": [str(f) for f in label_files],
    }
    return context, rewritten, stats


@dataset_loader("timequestions")
def load_timequestions(
    request: DatasetRequest,
    *,
    retrieved: PathLike | None = None,
    relation_labels: PathLike | Sequence[PathLike] | None = None,
    time_granularity: str = "year",
) -> Dataset:
    """TimeQuestions; ``retrieved=`` overrides the retrieved-facts file, ``relation_labels=`` the label
    file(s), ``time_granularity`` is ``"year"`` (default, see module docstring) or ``"day"``."""
    root, split, context = request.root, request.split, check_context(request.context)
    if time_granularity not in {"year", "day"}:
        raise ConfigError(f"time_granularity must be 'year' or 'day', got {time_granularity!r}")
    qfile = find_file(
        "TimeQuestions questions", root, request.questions, [f"questions/{split}.json", f"{split}.json"]
    )
    qs, malformed = parse_questions(read_records(qfile), to_question, qfile, time_granularity)
    kg_path = resolve_kg(request.kg, root, KG_FILES)
    rfile = as_path(retrieved) or find_optional(
        root, [f"retrieved/{split}_timer4_retrieved_facts.json", f"retrieved/{split}.json"]
    )
    mode = context or ("retrieved" if kg_path is None and rfile is not None else "kg")
    warnings: tuple[str, ...] = ()
    meta: dict[str, Any] = {
        "questions_file": str(qfile),
        "split": split,
        "context": mode,
        "time_granularity": time_granularity,
        "no_gold": sum(not q.answers for q in qs),
    }
    if mode == "retrieved":
        if rfile is None or not rfile.is_file():
            raise ConfigError(
                f"context='retrieved' but no retrieved facts file (looked for retrieved/{split}_timer4_"
                "retrieved_facts.json in the dataset folder); pass retrieved=PATH or context='kg'"
            )
        label_files = relation_label_files(root, relation_labels)
        records = read_records(rfile)
        facts, rewritten, stats = parse_retrieved(records, label_files)
        texts = {str(r.get("id")): [str(t) for t in r.get("timer4_retrieved_facts") or []] for r in records}
        missing = [q.qid for q in qs if q.qid not in facts]
        meta.update(stats, retrieved_file=str(rfile), missing_retrieved=len(missing))
        warnings = retrieved_warnings(root, rfile, label_files, stats, missing, len(qs))
        qs = [
            q.model_copy(
                update={
                    "context": facts.get(q.qid, []),
                    "extra": {
                        **q.extra,
                        **({"timer4_question": rewritten[q.qid]} if q.qid in rewritten else {}),
                        **({RETRIEVED_FACTS: texts[q.qid]} if q.qid in texts else {}),
                    },
                }
            )
            for q in qs
        ]
    return Dataset("timequestions", qs, kg_path, meta, (*malformed, *warnings))


def retrieved_warnings(
    root: Path | None,
    rfile: Path,
    label_files: list[Path],
    stats: dict[str, Any],
    missing: list[str],
    n_questions: int,
) -> tuple[str, ...]:
    """What is missing from the retrieved-facts context and changes results (see :class:`Dataset`)."""
    out: list[str] = []
    if not label_files:
        where = f" under {str(root)!r}" if root is not None else ""
        out.append(
            f"TimeQuestions: no Wikidata relation-label file found (looked for "
            f"{', '.join(RELATION_LABEL_FILES)}{where}): the retrieved facts were split with the "
            f"{stats['relation_labels']} built-in labels only and {stats['unsplit_facts']} of "
            f"{stats['retrieved_facts']} could not be split, so the context loses facts and results drop; "
            "put wd_id2relation_text.txt in the dataset's kg/ folder (or pass relation_labels=PATH)"
        )
    if missing:
        out.append(
            f"TimeQuestions: {len(missing)} of {n_questions} questions have no entry in the retrieved-facts "
            f"file {str(rfile)!r} (e.g. {', '.join(missing[:3])}): they are answered over an empty context; "
            "use the retrieved file of the same split"
        )
    return tuple(out)

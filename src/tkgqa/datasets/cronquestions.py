"""CronQuestions (Saxena et al., ACL 2021): Wikidata quintuples and template questions.

Official layout: ``questions/{split}.pickle`` (a list of dicts: question, answers (a set of QIDs or years),
answer_type entity|time, template, entities, times, relations, type, annotation, uniq_id, paraphrases) and
``kg/full.txt`` (``s\\tr\\to\\tstart\\tend``) with ``kg/wd_id2entity_text.txt`` labels. JSON files with the
same records work too (our ``questions/test_sample_ari198.json`` adds ``answers_text``, ``entities_text`` and
``ari_retrieved_fact_lines``).

**Pickles**: the official format, so they are read (``allow_pickle=True``, the default here, as for the
official release; ``False`` refuses them) — through an unpickler that builds plain data only (built-in
containers, numpy arrays), so a pickle naming any other class or function is refused, never run.

Answers are labels (``answer_ids`` = the QIDs, aligned) and years ``"YYYY"``; ``text`` is the first
paraphrase (entity names, as CronKGQA feeds its models), else the question with QIDs replaced by labels
(``extra["question_with_ids"]`` keeps the original). ``qlabel`` is ``simple`` (simple_entity, simple_time) or
``complex`` (before_after, first_last, time_join). ``context="retrieved"`` turns ARI's printed KG facts into
per-question context (names are labels). Missing label files and questions without retrieved facts are
``Dataset.warnings``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..time import TimePoint
from .base import Question
from .core import (
    Dataset,
    DatasetRequest,
    check_context,
    dataset_loader,
    find_file,
    find_optional,
    parse_questions,
    read_records,
    resolve_kg,
    row_parser,
    str_list,
)
from .verbalized import FactSplitter, read_label_file

KG_FILES = ("kg/full.txt",)
ENTITY_LABELS = "kg/wd_id2entity_text.txt"
RELATION_LABELS = "kg/wd_id2relation_text.txt"
SIMPLE_TYPES = frozenset({"simple_entity", "simple_time"})
COMPLEX_TYPES = frozenset({"before_after", "first_last", "time_join"})
_QID = re.compile(r"\bQ\d+\b")


def complexity(qtype: str | None) -> str | None:
    """``simple`` / ``complex`` as in the CronQuestions paper tables (``None`` for other types)."""
    if qtype in SIMPLE_TYPES:
        return "simple"
    if qtype in COMPLEX_TYPES:
        return "complex"
    return None


def _time_answer(value: str) -> str:
    try:
        return TimePoint.of(int(value)).iso() if value.lstrip("-").isdigit() else value
    except DataError:
        return value


@row_parser
def to_question(
    row: dict[str, Any], path: Path, i: int, labels: dict[str, str], qid_prefix: str = ""
) -> Question:
    """One CronQuestions record → :class:`Question`."""
    if "question" not in row:
        raise DataError(f"question #{i} has no 'question' field", path=str(path))
    raw_answers = row.get("answers")
    answer_ids = str_list(raw_answers, f"question #{i} answers", path)
    answer_type = str(
        row.get("answer_type") or ("time" if all(a.isdigit() for a in answer_ids) else "entity")
    )
    texts = row.get("answers_text")
    aligned = isinstance(texts, list) and len(texts) == len(answer_ids) and not isinstance(raw_answers, set)
    answers: list[str] = []
    for j, ident in enumerate(answer_ids):
        if answer_type == "time":
            answers.append(_time_answer(ident))
        elif aligned and texts is not None:
            answers.append(str(texts[j]))
        else:
            answers.append(labels.get(ident, ident))
    entity_labels: dict[str, str] = {str(k): str(v) for k, v in (row.get("entities_text") or {}).items()}
    entities = str_list(row.get("entities"), f"question #{i} entities", path)
    for e in entities:
        if e not in entity_labels and e in labels:
            entity_labels[e] = labels[e]
    question = str(row["question"])
    paraphrases = row.get("paraphrases") or []
    if paraphrases:
        text = str(paraphrases[0])
    else:
        text = _QID.sub(lambda m: entity_labels.get(m.group(0), m.group(0)), question)
    qtype = row.get("type")
    number = row.get("ari_test_index", i)  # the position in the official test.pickle
    skip = {"question", "answers", "answer_type", "entities", "times", "relations", "type", "paraphrases"}
    skip |= {"answers_text", "entities_text", "ari_retrieved_fact_lines"}
    extra = {k: v for k, v in row.items() if k not in skip}
    extra.update(question_with_ids=question, entity_labels=entity_labels, paraphrases=list(paraphrases))
    return Question(
        qid=f"{qid_prefix}{number}",
        text=text,
        answers=answers,
        answer_ids=answers if answer_type == "time" else answer_ids,
        answer_type="time" if answer_type == "time" else "entity",
        qtype=qtype,
        qlabel=complexity(qtype),
        entities=entities,
        times=str_list(row.get("times"), f"question #{i} times", path),
        relations=str_list(row.get("relations"), f"question #{i} relations", path),
        dataset="cronquestions",
        extra=extra,
    )


@dataset_loader("cronquestions")
def load_cronquestions(request: DatasetRequest, *, allow_pickle: bool = True) -> Dataset:
    """CronQuestions (see the module docstring for the pickle caveat)."""
    root, split, context = request.root, request.split, check_context(request.context)
    candidates = [f"questions/{split}.pickle", f"questions/{split}.json", f"questions/{split}*.json"]
    qfile = find_file("CronQuestions questions", root, request.questions, candidates)
    records = read_records(qfile, allow_pickle=allow_pickle)
    need_labels = any(
        r.get("answer_type") != "time" and not isinstance(r.get("answers_text"), list) for r in records
    ) or any(not r.get("paraphrases") and not r.get("entities_text") for r in records)
    label_file = find_optional(root, [ENTITY_LABELS]) if need_labels else None
    labels = read_label_file(label_file) if label_file is not None else {}
    qs, malformed = parse_questions(records, to_question, qfile, labels)
    kg_path = resolve_kg(request.kg, root, KG_FILES)
    meta: dict[str, Any] = {
        "questions_file": str(qfile),
        "split": split,
        "context": context or "kg",
        "entity_label_file": str(label_file) if label_file else None,
    }
    warnings: list[str] = list(malformed)
    unlabelled = [q.qid for q in qs if any(_QID.fullmatch(a) for a in q.answers) or _QID.search(q.text)]
    if need_labels and label_file is None and unlabelled:
        warnings.append(
            f"CronQuestions: no entity-label file {ENTITY_LABELS} in {str(root)!r}: {len(unlabelled)} of "
            f"{len(qs)} questions keep Wikidata ids (Q…) in their text or gold answers, which label answers "
            f"never match, so results drop; put {Path(ENTITY_LABELS).name} in the dataset's kg/ folder"
        )
    if context == "retrieved":
        rel_file = find_optional(root, [RELATION_LABELS])
        if rel_file is None:
            warnings.append(
                f"CronQuestions: no relation-label file {RELATION_LABELS} in {str(root)!r}: the retrieved "
                "facts are split with the questions' own relation labels and the built-in ones only, so "
                f"some cannot be split and results drop; put {Path(RELATION_LABELS).name} in the dataset's "
                "kg/ folder"
            )
        rel_labels = set(read_label_file(rel_file).values()) if rel_file else set()
        for row in records:
            rel_labels.update(str(v) for v in (row.get("relations_text") or {}).values())
        splitter = FactSplitter(rel_labels)
        lines = [[str(t) for t in row.get("ari_retrieved_fact_lines") or []] for row in records]
        empty = [q.qid for q, group in zip(qs, lines, strict=True) if not group]
        if empty:
            warnings.append(
                f"CronQuestions: {len(empty)} of {len(qs)} questions have no retrieved facts "
                f"(ari_retrieved_fact_lines) in {str(qfile)!r} (e.g. {', '.join(empty[:3])}): they are "
                "answered over an empty context; use context='kg' with the KG, or a file that has them"
            )
        parsed = splitter.parse_many([t for group in lines for t in group])
        status = Counter(p.status for p in parsed)
        it = iter(parsed)
        qs = [
            q.model_copy(
                update={"context": [p.fact for p in (next(it) for _ in group) if p.fact is not None]}
            )
            for q, group in zip(qs, lines, strict=True)
        ]
        meta.update(
            retrieved_facts=len(parsed),
            context_facts=status["ok"] + status["reversed"],
            unsplit_facts=status["unsplit"] + status["no_object"],
            unsplit_examples=[p.text for p in parsed if p.status in {"unsplit", "no_object"}][:10],
        )
    return Dataset("cronquestions", qs, kg_path, meta, tuple(warnings))

"""The conversions from the authors' files to the files tkgqa's loaders read — the project's own code, named
in the catalogue and recorded (name, inputs, outputs, sha256) in ``SOURCE.json`` beside the data.

Each conversion is ``fn(inputs, outputs) -> details`` over paths (the catalogue names them relative to the
entry's folder); ``details`` (a JSON-able dict) goes into ``SOURCE.json``. Nothing here evaluates the files'
text as code: Python list literals in TimeR4's prompts are read with :func:`ast.literal_eval` (literals only).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigError, DataError
from ...jsonfile import read_json
from ..core import iter_jsonl

Converter = Callable[[Sequence[Path], Sequence[Path]], dict[str, Any]]
CONVERTERS: dict[str, Converter] = {}
#: How the TimeR4 conversions that check each line's question text joined their inputs (``SOURCE.json``).
_BY_POSITION_CHECKED = "by position with test_prompt.json (question texts checked)"


def converter(name: str) -> Callable[[Converter], Converter]:
    def wrap(fn: Converter) -> Converter:
        CONVERTERS[name] = fn
        return fn

    return wrap


def run_conversion(name: str, inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    fn = CONVERTERS.get(name)
    if fn is None:
        raise ConfigError(f"unknown conversion {name!r} in the catalogue (known: {', '.join(CONVERTERS)})")
    for path in outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
    return fn(inputs, outputs)


def _write_json(path: Path, data: Any, indent: int | None = 1) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=indent) + "\n", encoding="utf-8")


def _list_of_dicts(data: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError("expected a JSON list of objects", path=str(path))
    return data


def _same_question(a: Any, b: Any) -> bool:
    return " ".join(str(a).lower().split()).rstrip("?") == " ".join(str(b).lower().split()).rstrip("?")


def timer4_results(results: Path, prompts: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """TimeR4's published results (``{text, answers, question, response}`` per test question, in the order of
    ``prompt/test_prompt.json``) joined by position with ``test_prompt.json`` (``{question, answer, id,
    type}``); DataError when the counts or any question text differ (the order is checked, never assumed)."""
    res = _list_of_dicts(read_json(results), results)
    pro = _list_of_dicts(read_json(prompts), prompts)
    if len(res) != len(pro):
        raise DataError(f"{len(res)} results but {len(pro)} questions in {prompts.name}", path=str(results))
    for i, (r, p) in enumerate(zip(res, pro, strict=True)):
        if not _same_question(r.get("question"), p.get("question")):
            raise DataError(
                f"item {i}: question {r.get('question')!r} is not {p.get('question')!r} of {prompts.name} "
                "(the files are not in the same order)",
                path=str(results),
            )
    return list(zip(pro, res, strict=True))


def historical_facts(text: str, where: str) -> list[str]:
    """The list literal after ``Historical facts:`` in one of TimeR4's answer prompts."""
    _head, sep, rest = text.partition("Historical facts:")
    body = rest.rpartition("\nQuestion:")[0] if "\nQuestion:" in rest else ""
    if not sep or not body:
        raise DataError(f"{where}: no 'Historical facts:[...]\\nQuestion:' in the prompt")
    try:
        facts = ast.literal_eval(body.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise DataError(f"{where}: the facts are not a list literal ({exc.__class__.__name__})") from None
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise DataError(f"{where}: the facts are not a list of strings")
    return facts


@converter("timer4-retrieved-facts")
def timer4_retrieved_facts(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """TimeR4's ChatGPT results + ``test_prompt.json`` + ``questions/test.json`` → per test question the facts
    TimeR4 retrieved (``timer4_retrieved_facts``) and ChatGPT's reply, with the original question text."""
    results, prompts, questions = inputs
    original = _original_questions(questions)
    rows = []
    for i, (p, r) in enumerate(timer4_results(results, prompts)):
        qid = p.get("id")
        rows.append(
            {
                "id": qid,
                "question": p.get("question"),
                "original_question": original.get(str(qid), p.get("question")),
                "answer": p.get("answer"),
                "type": p.get("type"),
                "timer4_retrieved_facts": historical_facts(
                    str(r.get("text", "")), f"{results.name} item {i}"
                ),
                "timer4_chatgpt_response": r.get("response"),
            }
        )
    _write_json(outputs[0], rows)
    return {"questions": len(rows), "joined": _BY_POSITION_CHECKED}


@converter("timer4-chatgpt-cassette")
def timer4_chatgpt_cassette(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """TimeR4's ChatGPT results → a replay cassette: ``{id, prompt, response, gold_text}`` per question (the
    exact prompt sent, the raw reply, TimeR4's evaluation target)."""
    results, prompts = inputs
    rows = [
        {
            "id": p.get("id"),
            "prompt": r.get("text"),
            "response": r.get("response"),
            "gold_text": r.get("answers"),
        }
        for p, r in timer4_results(results, prompts)
    ]
    return _write_lines(outputs[0], rows, _BY_POSITION_CHECKED)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = [row for _line, row in iter_jsonl(path)]
    return _list_of_dicts(rows, path)


def _write_lines(path: Path, rows: Sequence[dict[str, Any]], joined: str) -> dict[str, Any]:
    """Write ``rows`` as JSON lines; the converter's summary: how many lines, and how they were joined."""
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"lines": len(rows), "joined": joined}


def _lines_by_position(results: Path, prompts_path: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The JSON lines of ``results`` paired by position with ``test_prompt.json``'s questions (same count)."""
    rows = _jsonl(results)
    prompts = _list_of_dicts(read_json(prompts_path), prompts_path)
    if len(rows) != len(prompts):
        raise DataError(f"{len(rows)} lines but {len(prompts)} test questions", path=str(results))
    return list(zip(rows, prompts, strict=True))


def _original_questions(questions: Path) -> dict[str, Any]:
    return {str(q.get("Id")): q.get("Question") for q in _list_of_dicts(read_json(questions), questions)}


@converter("timer4-chatgpt-rewrites")
def timer4_chatgpt_rewrites(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """TimeR4's ``results/TimeQuestions/ChatGPT/questions.json`` (``{question: the reply, answer, id, type}``)
    → ``{id, original_question, type, response}`` per question, joined to ``questions/test.json`` by id."""
    replies_path, questions = inputs
    original = _original_questions(questions)
    replies = _list_of_dicts(read_json(replies_path), replies_path)
    rows = []
    for r in replies:
        if str(r.get("id")) not in original:
            raise DataError(f"id {r.get('id')!r} is not a test question", path=str(replies_path))
        rows.append(
            {
                "id": r.get("id"),
                "original_question": original[str(r.get("id"))],
                "type": r.get("type"),
                "response": r.get("question"),
            }
        )
    return _write_lines(outputs[0], rows, "by id with questions/test.json")


@converter("timer4-llama2-answers")
def timer4_llama2_answers(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """TimeR4's ``detailed_eval_result.jsonl`` (``{prediction: [reply], ground_truth, …}``, no question text)
    → ``{id, response, gold_text}``, joined by position with ``test_prompt.json`` (counts checked)."""
    out = []
    for r, p in _lines_by_position(inputs[0], inputs[1]):
        pred = r.get("prediction")
        response = pred[0] if isinstance(pred, list) and len(pred) == 1 else pred
        out.append({"id": p.get("id"), "response": response, "gold_text": r.get("ground_truth")})
    return _write_lines(
        outputs[0], out, "by position with test_prompt.json (counts checked; no question text)"
    )


@converter("timer4-llama2-predictions")
def timer4_llama2_predictions(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """TimeR4's ``predictions.jsonl`` (``{question, prediction, ground_truth, input}``) → ``{id, prompt,
    response, gold_text}``, joined by position with ``test_prompt.json``; each line's question must be that
    test question's (TimeR4's rewritten or the original text), else DataError."""
    results, prompts_path, questions = inputs
    original = _original_questions(questions)
    out = []
    for i, (r, p) in enumerate(_lines_by_position(results, prompts_path)):
        texts = (p.get("question"), original.get(str(p.get("id"))))
        if not any(_same_question(r.get("question"), t) for t in texts if t is not None):
            raise DataError(
                f"line {i + 1}: question {r.get('question')!r} is not test question {p.get('id')!r}",
                path=str(results),
            )
        out.append(
            {
                "id": p.get("id"),
                "prompt": r.get("input"),
                "response": r.get("prediction"),
                "gold_text": r.get("ground_truth"),
            }
        )
    return _write_lines(outputs[0], out, _BY_POSITION_CHECKED)


@converter("json-missing-commas")
def json_missing_commas(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """A JSON file with missing commas between members → the same data, valid JSON (indent 2). A comma is
    inserted only where the parser reports a missing ``,`` delimiter (at most 20 times); any other error is
    a DataError. The positions are recorded."""
    path = inputs[0]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read ({exc})", path=str(path)) from None
    inserted: list[int] = []
    for _ in range(21):
        try:
            data = json.loads(text)
            break
        except json.JSONDecodeError as exc:
            if not exc.msg.startswith("Expecting ',' delimiter") or len(inserted) == 20:
                raise DataError(f"not JSON and not repairable: {exc}", path=str(path)) from None
            text = text[: exc.pos] + "," + text[exc.pos :]
            inserted.append(exc.pos)
    _write_json(outputs[0], data, indent=2)
    return {"commas_inserted_at": inserted}


@converter("lpkg-first-instruction")
def lpkg_first_instruction(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """LPKG's planning data file → ``{"instruction": …}`` of its first item (the official planning prompt)."""
    path = inputs[0]
    items = _list_of_dicts(read_json(path), path)
    if not items or not isinstance(items[0].get("instruction"), str):
        raise DataError("the first item has no 'instruction' text", path=str(path))
    _write_json(outputs[0], {"instruction": items[0]["instruction"]})
    return {"item": 0}


def _quadruples(path: Path) -> list[tuple[str, str, str, str]]:
    out = []
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 4:
                    raise DataError("expected subject, relation, object, date", path=str(path), line=lineno)
                s, r, o, t = (p.strip().replace(" ", "_") for p in parts)
                out.append((s, r, o, t))
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    return out


@converter("mmkb-underscore-names")
def mmkb_underscore_names(inputs: Sequence[Path], outputs: Sequence[Path]) -> dict[str, Any]:
    """mmkb's ICEWS split files (names with spaces) → the same splits with ``_`` for spaces, and ``full.txt``:
    their union without duplicates, sorted by date (stable)."""
    splits = [_quadruples(p) for p in inputs]
    counts = {}
    for path, facts in zip(outputs, splits, strict=False):
        path.write_text("".join("\t".join(f) + "\n" for f in facts), encoding="utf-8")
        counts[path.name] = len(facts)
    union = sorted(dict.fromkeys(f for facts in splits for f in facts), key=lambda f: f[3])
    outputs[len(splits)].write_text("".join("\t".join(f) + "\n" for f in union), encoding="utf-8")
    counts[outputs[len(splits)].name] = len(union)
    return {"facts": counts}

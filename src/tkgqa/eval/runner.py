"""``evaluate``: run a method over questions, one ``results.jsonl`` row per question, then the report.

Rows are appended (and flushed) as questions finish, so an interrupted run resumes where it stopped
(``resume=True`` skips qids already in ``results.jsonl``; ``run.json`` records the method so a resume with a
different method configuration is refused). A method exception on one question becomes an error row
(``error`` set, counted in the report) instead of stopping the run. A question with ``context`` (TimeQuestions
with retrieved facts) is answered over ``TemporalKG(question.context)`` instead of the shared KG.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..datasets.base import Question
from ..datasets.core import Dataset
from ..datasets.sampling import select_questions
from ..errors import ConfigError
from ..kg.base import KGStore
from ..kg.memory import TemporalKG
from ..methods.base import Answer, Method, resolve_method
from .report import DEFAULT_KS, RESULTS_FILE, Report, build_report, read_results, write_report
from .scoring import score_answer
from .support import SupportChecker

RUN_FILE = "run.json"


class _KGs:
    """The KG each question is answered over, loaded lazily, with one support checker per shared KG."""

    def __init__(self, kg: KGStore | str | Path | None, kg_path: Path | None, check_support: bool) -> None:
        self._given = kg
        self._path = kg_path
        self._shared: KGStore | None = None
        self._checker: SupportChecker | None = None
        self.check_support = check_support
        self.description: str | None = None

    def shared(self) -> KGStore:
        if self._shared is None:
            source = self._given if self._given is not None else self._path
            if isinstance(source, str | Path):
                from ..kg.loaders import load_kg

                self._shared = load_kg(source)
                self.description = str(source)
            elif source is None:
                self._shared = TemporalKG(name="empty")
                self.description = None
            else:
                self._shared = source
                self.description = getattr(source, "name", "kg")
        return self._shared

    def for_question(self, q: Question) -> tuple[KGStore, bool]:
        """The KG for ``q`` and whether it is a per-question context KG."""
        if q.context is not None:
            return TemporalKG(q.context, name=f"context:{q.qid}"), True
        return self.shared(), False

    def supported(
        self, q: Question, kg: KGStore, per_question: bool, *, loose: bool = False
    ) -> tuple[bool | None, str]:
        """The KG-supported diagnostic (all question entities linked), or its ``loose`` variant."""
        if not self.check_support:
            return None, "not checked"
        try:
            if per_question:
                checker = SupportChecker(kg)
            else:
                if self._checker is None:
                    self._checker = SupportChecker(kg)
                checker = self._checker
            return checker.check_loose(q) if loose else checker.check(q)
        except Exception as exc:  # a diagnostic must not stop the run
            return None, f"check failed: {type(exc).__name__}: {exc}"


def _row(
    q: Question, answer: Answer | None, kg: KGStore, latency: float, error: str | None
) -> dict[str, Any]:
    predictions = [str(a) for a in answer.answers] if answer is not None else []
    raw = answer.raw_output if answer is not None else ""
    score = score_answer(q, predictions, raw, kg.label)
    return {
        "qid": q.qid,
        "question": q.text,
        "dataset": q.dataset,
        "predictions": predictions,
        "gold": list(q.answers),
        "gold_ids": list(q.answer_ids),
        "rank": score.rank,
        "strict_hit": score.strict_hit,
        "lenient_hit": score.lenient_hit,
        "precision": score.precision,
        "recall": score.recall,
        "f1": score.f1,
        "exact_set": score.exact_set,
        "evidence": [f.to_dict() for f in answer.evidence] if answer is not None else [],
        "trace": answer.trace if answer is not None else [],
        "usage": dict(answer.usage) if answer is not None else {},
        "latency_s": round(latency, 6),
        "abstained": answer.abstained if answer is not None else True,
        "reason": answer.reason if answer is not None else "error",
        "raw_output": raw,
        "error": error,
        "qtype": q.qtype,
        "answer_type": q.answer_type,
        "time_level": q.time_level,
        "qlabel": q.qlabel,
        "types": list(q.types),
        "kg": kg.name,
    }


def answer_one(method: Method, q: Question, kgs: _KGs) -> dict[str, Any]:
    """Answer and score one question; a method exception becomes an error row."""
    kg, per_question = kgs.for_question(q)
    answer: Answer | None = None
    error: str | None = None
    t0 = time.perf_counter()
    try:
        answer = method.answer(q, kg)
        if not isinstance(answer, Answer):
            raise TypeError(f"{type(method).__name__}.answer returned {type(answer).__name__}, not Answer")
    except Exception as exc:  # one failing question must not stop the run
        answer = None
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        error = f"{type(exc).__name__}: {exc}{where}"
    latency = time.perf_counter() - t0
    row = _row(q, answer, kg, latency, error)
    row["supported"], row["supported_reason"] = kgs.supported(q, kg, per_question)
    row["supported_loose"] = kgs.supported(q, kg, per_question, loose=True)[0]
    return row


def _check_run_file(out: Path, describe: dict[str, Any], dataset: str, resume: bool) -> None:
    path = out / RUN_FILE
    info = {"method": describe, "dataset": dataset}
    if resume and path.is_file() and (out / RESULTS_FILE).is_file():
        try:
            previous = json.loads(path.read_text("utf-8"))
        except ValueError:
            previous = None
        if isinstance(previous, dict) and previous.get("method") != describe:
            raise ConfigError(
                f"{out} holds results of another method configuration ({previous.get('method')}); "
                "use another output folder or --no-resume to start over"
            )
    path.write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", "utf-8")


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="q", disable=not enabled, dynamic_ncols=True)


def evaluate(
    method: Method | str,
    dataset_or_questions: Dataset | Sequence[Question],
    kg: KGStore | str | Path | None,
    output_dir: str | Path,
    *,
    limit: int | None = None,
    sample: str | None = None,
    seed: int = 0,
    resume: bool = True,
    progress: bool = True,
    ks: Sequence[int] = DEFAULT_KS,
    check_support: bool = True,
) -> Report:
    """Evaluate ``method`` and write ``results.jsonl``, ``report.json``, ``report.md``, ``breakdown.png``.

    ``kg``: a store, a KG file, or ``None`` (the dataset's ``kg_path``; an empty KG when there is none).
    ``limit``/``sample``/``seed`` choose the questions (``first``, ``random`` or ``stratified`` by qtype)."""
    runner = resolve_method(method) if isinstance(method, str) else method
    if isinstance(dataset_or_questions, Dataset):
        ds: Dataset | None = dataset_or_questions
        all_questions = list(dataset_or_questions.questions)
        name = dataset_or_questions.name
    else:
        ds = None
        all_questions = list(dataset_or_questions)
        name = all_questions[0].dataset if all_questions else "custom"
    questions = select_questions(all_questions, limit, sample, seed)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    describe = runner.describe()
    _check_run_file(out, describe, name, resume)
    results = out / RESULTS_FILE
    previous = _prepare_results(results, resume)
    done = {str(r["qid"]) for r in previous}
    kgs = _KGs(kg, ds.kg_path if ds is not None else None, check_support)
    remaining = [q for q in questions if q.qid not in done]
    bar = _progress(len(remaining), runner.name, progress)
    hits = 0
    try:
        with results.open("a", encoding="utf-8") as fh:
            for i, q in enumerate(remaining, 1):
                row = answer_one(runner, q, kgs)
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                fh.flush()
                hits += bool(row["strict_hit"])
                bar.update(1)
                bar.set_postfix(hits1=f"{hits / i:.3f}", refresh=False)
    finally:
        bar.close()
    wanted = {q.qid for q in questions}
    rows = [r for r in read_results(results) if str(r["qid"]) in wanted]
    dataset_info: dict[str, Any] = {
        "name": name,
        "n_available": len(all_questions),
        "kg": kgs.description or (str(ds.kg_path) if ds is not None and ds.kg_path else None),
        "context_questions": sum(q.context is not None for q in questions),
    }
    if ds is not None:
        dataset_info["meta"] = {k: v for k, v in ds.meta.items() if not isinstance(v, list | dict)}
    report = build_report(
        rows,
        method=describe,
        dataset=dataset_info,
        ks=ks,
        selection={"limit": limit, "sample": sample, "seed": seed, "resumed": len(done & wanted)},
    )
    write_report(report, out)
    return report


def _prepare_results(path: Path, resume: bool) -> list[dict[str, Any]]:
    """Rows already in ``path`` (resume) or an emptied file; a torn last line (an interrupted write) or a
    repeated qid is cleaned up so that appending stays valid JSONL."""
    if not resume or not path.exists():
        path.write_text("", "utf-8")
        return []
    text = path.read_text("utf-8")
    rows = read_results(path)
    n_lines = sum(1 for line in text.splitlines() if line.strip())
    if (text and not text.endswith("\n")) or n_lines != len(rows):
        _rewrite(path, rows)
    return rows


def _rewrite(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

"""The runs browser: ``tkgqa eval`` output folders under the server's ``--runs-dir`` (``report.json``,
``report.md``, ``breakdown.png``, ``results.jsonl``), read-only. No FastAPI here.

A run is named by its folder's name, a single path component checked against :data:`RUN_NAME` and resolved
inside the runs folder, so a request can never read outside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, assert_never

from ..errors import ConfigError, NotFoundError, TKGQAError
from ..kg.fact import Fact
from ..sanitize import clean_json
from .views import labelled_fact, program_tree

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,199}")
MAX_RUNS = 500
MAX_REPORT_CHARS = 200_000


class Outcome(StrEnum):
    """How a run answered a question (the results filter)."""

    ALL = "all"
    CORRECT = "correct"
    WRONG = "wrong"
    ABSTAINED = "abstained"
    ERROR = "error"


def outcome(row: dict[str, Any]) -> Outcome:
    """The :class:`Outcome` of one ``results.jsonl`` row."""
    if row.get("error"):
        return Outcome.ERROR
    if row.get("abstained") or not row.get("predictions"):
        return Outcome.ABSTAINED
    return Outcome.CORRECT if row.get("strict_hit") else Outcome.WRONG


def run_dir(root: Path, name: str) -> Path:
    """The folder of run ``name`` under ``root``; NotFoundError for anything else (bad name, outside, no
    ``report.json``)."""
    if not RUN_NAME.fullmatch(name) or ".." in name:
        raise NotFoundError(f"no run named {name[:80]!r}")
    folder = (root / name).resolve()
    if folder.parent != root.resolve() or not (folder / "report.json").is_file():
        raise NotFoundError(f"no run named {name!r} under the runs folder")
    return folder


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path.name} of run {path.parent.name!r}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _summary(folder: Path, report: dict[str, Any]) -> dict[str, Any]:
    method = report.get("method") or {}
    dataset = report.get("dataset") or {}
    metrics = report.get("metrics") or {}
    return {
        "name": folder.name,
        "method": method.get("method") if isinstance(method, dict) else str(method),
        "dataset": dataset.get("name") if isinstance(dataset, dict) else str(dataset),
        "n": report.get("n"),
        "strict_hits_at_1": metrics.get("strict_hits@1"),
        "answered": metrics.get("answered"),
        "errors": report.get("errors", 0),
        "modified": folder.stat().st_mtime,
    }


def list_runs(root: Path) -> list[dict[str, Any]]:
    """Every run folder directly under ``root`` (newest first)."""
    if not root.is_dir():
        return []
    rows = []
    for folder in sorted(root.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)[: MAX_RUNS * 2]:
        if folder.is_dir() and RUN_NAME.fullmatch(folder.name) and (folder / "report.json").is_file():
            try:
                rows.append(_summary(folder, _read_json(folder / "report.json")))
            except ConfigError:
                continue
    return rows[:MAX_RUNS]


def run_report(root: Path, name: str) -> dict[str, Any]:
    """A run's summary, ``report.md`` text, whether it has its chart, and its outcome counts."""
    folder = run_dir(root, name)
    report = _read_json(folder / "report.json")
    md = folder / "report.md"
    text = md.read_text(encoding="utf-8", errors="replace")[:MAX_REPORT_CHARS] if md.is_file() else ""
    counts = {o.value: 0 for o in Outcome}
    for row in _rows(folder):
        counts[outcome(row).value] += 1
        counts[Outcome.ALL.value] += 1
    return {
        **_summary(folder, report),
        "report_md": text,
        "has_chart": (folder / "breakdown.png").is_file(),
        "counts": counts,
        "run_config": clean_json(report.get("run_config") or {}),
    }


def _rows(folder: Path) -> Iterator[dict[str, Any]]:
    path = folder / "results.jsonl"
    if not path.is_file():
        return
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash
            if isinstance(row, dict):
                yield row


def run_results(
    root: Path, name: str, which: Outcome, offset: int, limit: int, label: Callable[[str], str]
) -> dict[str, Any]:
    """Rows of a run's ``results.jsonl`` with outcome ``which``: each as the answer view's object."""
    folder = run_dir(root, name)
    report = _read_json(folder / "report.json")
    method = _summary(folder, report)["method"] or ""
    llm = (report.get("run_config") or {}).get("llm")
    picked = []
    total = 0
    for row in _rows(folder):
        match which:
            case Outcome.ALL:
                keep = True
            case Outcome.CORRECT | Outcome.WRONG | Outcome.ABSTAINED | Outcome.ERROR:
                keep = outcome(row) is which
            case _:
                assert_never(which)
        if not keep:
            continue
        total += 1
        if offset < total <= offset + limit:
            picked.append(_answer_view(row, method, llm, label))
    return {"name": name, "outcome": which.value, "total": total, "offset": offset, "results": picked}


def _answer_view(
    row: dict[str, Any], method: str, llm: str | None, label: Callable[[str], str]
) -> dict[str, Any]:
    facts = []
    for f in row.get("evidence") or []:
        try:
            facts.append(labelled_fact(Fact.from_dict(f), None))
        except (KeyError, TypeError, ValueError, AttributeError, TKGQAError):
            continue
    for f in facts:
        for key in ("subject", "relation", "object"):
            f[f"{key}_label"] = label(f[key])
    raw_trace = row.get("trace")
    trace: list[dict[str, Any]] = (
        [s for s in raw_trace if isinstance(s, dict)] if isinstance(raw_trace, list) else []
    )
    program = program_tree(trace, label)
    return clean_json(
        {
            "qid": str(row.get("qid", "")),
            "outcome": outcome(row).value,
            "gold": row.get("gold") or [],
            "question": row.get("question", ""),
            "method": method,
            "llm": llm,
            "kg": row.get("kg") if isinstance(row.get("kg"), str) else None,
            "answers": row.get("predictions") or [],
            "evidence": facts,
            "grounded": bool(facts),
            "trace": trace,
            "usage": row.get("usage") or {},
            "abstained": bool(row.get("abstained")),
            "reason": row.get("reason") or row.get("error") or "",
            "missing": program["missing"] if program and not row.get("predictions") else None,
            "program": program,
            "latency_ms": round(float(row.get("latency_s") or 0) * 1000, 1),
        }
    )

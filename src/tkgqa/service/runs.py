"""The runs browser: ``tkgqa eval`` output folders under the server's ``--runs-dir`` (``report.json``,
``report.md``, ``breakdown.png``, ``results.jsonl``), read-only. No FastAPI here.

A run is named by its folder's name, a single path component checked against :data:`RUN_NAME` and resolved
inside the runs folder, so a request can never read outside it. Every file is read through
:func:`confined`: its real path (every symlink followed) must be a regular file inside the runs folder's
real path, so ``report.md → /proc/self/environ`` or ``breakdown.png → ~/.ssh/id_rsa`` reads as absent, and
a dangling or looping symlink is skipped (with a warning in the log), never an error of the listing. Reads
are bounded (:data:`MAX_JSON_BYTES`, :data:`MAX_CHART_BYTES`, :data:`MAX_REPORT_CHARS`).
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..api.views import labelled_fact, program_tree
from ..errors import ConfigError, NotFoundError, TKGQAError
from ..kg.fact import Fact
from ..outcomes import Outcome, ResultRow
from ..sanitize import clean_json
from ..userfiles import parse_json

log = logging.getLogger("tkgqa.service")

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,199}")
MAX_RUNS = 500
MAX_REPORT_CHARS = 200_000
MAX_JSON_BYTES = 8 * 1024 * 1024
MAX_CHART_BYTES = 16 * 1024 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class ResultsFilter(StrEnum):
    """Which rows a results page shows: every row (``all``), or those of one :class:`tkgqa.outcomes.Outcome`
    (its values)."""

    ALL = "all"
    CORRECT = Outcome.CORRECT.value
    WRONG = Outcome.WRONG.value
    ABSTAINED = Outcome.ABSTAINED.value
    ERROR = Outcome.ERROR.value

    def keeps(self, row: ResultRow) -> bool:
        return self is ResultsFilter.ALL or row.outcome.value == self.value


def confined(root: Path, path: Path) -> Path | None:
    """The real path of ``path`` (every symlink followed) when it is a regular file inside the real path of
    the runs folder ``root``; ``None`` otherwise: missing, a dangling or looping symlink, a directory, FIFO
    or device, or anything whose real path leaves the runs folder."""
    try:
        real = path.resolve(strict=True)
        inside = real.is_relative_to(root.resolve(strict=True))
        mode = os.stat(real, follow_symlinks=False).st_mode
    except (OSError, RuntimeError, ValueError):  # missing, dangling, a loop, a NUL byte
        return None
    if not inside or not stat.S_ISREG(mode):
        if inside is False:
            log.warning("runs browser: %s leads out of the runs folder; ignored", path)
        return None
    return real


def _open_confined(root: Path, path: Path) -> int | None:
    """A read-only descriptor of :func:`confined` ``path``; ``None`` when it is not one. Opened without
    following a symlink swapped in since the check and without blocking, and checked again once open."""
    real = confined(root, path)
    if real is None:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_confined(root: Path, path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of :func:`confined` ``path`` (``None`` when it is not one)."""
    fd = _open_confined(root, path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit)


def run_dir(root: Path, name: str) -> Path:
    """The folder of run ``name`` under ``root``; NotFoundError for anything else (bad name, outside, no
    ``report.json`` inside the runs folder)."""
    if not RUN_NAME.fullmatch(name) or ".." in name:
        raise NotFoundError(f"no run named {name[:80]!r}")
    try:
        folder = (root / name).resolve()
        real_root = root.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise NotFoundError(f"no run named {name!r} under the runs folder") from None
    if folder.parent != real_root or confined(root, folder / "report.json") is None:
        raise NotFoundError(f"no run named {name!r} under the runs folder")
    return folder


def _read_json(root: Path, path: Path) -> dict[str, Any]:
    raw = read_confined(root, path, MAX_JSON_BYTES + 1)
    if raw is None or len(raw) > MAX_JSON_BYTES:
        why = "it is missing or leads out of the runs folder" if raw is None else "it is too large"
        raise ConfigError(f"cannot read {path.name} of run {path.parent.name!r}: {why}")
    try:
        data = parse_json(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:  # not JSON, nested too deep, a huge integer
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
    """Every run folder directly under ``root`` (newest first); an entry that is not a readable run inside
    the runs folder (a dangling symlink, a link leading out, a broken ``report.json``) is skipped."""
    if not root.is_dir():
        return []
    folders: list[tuple[float, Path]] = []
    for entry in root.iterdir():
        if not RUN_NAME.fullmatch(entry.name):
            continue
        try:
            folder = run_dir(root, entry.name)
            folders.append((folder.stat().st_mtime, folder))
        except (NotFoundError, OSError):
            if entry.is_symlink():
                log.warning("runs browser: skipped %s (a dangling symlink or one leading out)", entry)
    rows = []
    for _, folder in sorted(folders, key=lambda p: p[0], reverse=True)[: MAX_RUNS * 2]:
        try:
            rows.append(_summary(folder, _read_json(root, folder / "report.json")))
        except (ConfigError, OSError):
            continue
    return rows[:MAX_RUNS]


def run_report(root: Path, name: str) -> dict[str, Any]:
    """A run's summary, ``report.md`` text, whether it has its chart, and its outcome counts."""
    folder = run_dir(root, name)
    report = _read_json(root, folder / "report.json")
    md = read_confined(root, folder / "report.md", MAX_REPORT_CHARS * 4)
    text = md.decode("utf-8", errors="replace")[:MAX_REPORT_CHARS] if md is not None else ""
    counts = {o.value: 0 for o in ResultsFilter}
    for row in _rows(root, folder):
        counts[row.outcome.value] += 1
        counts[ResultsFilter.ALL.value] += 1
    return {
        **_summary(folder, report),
        "report_md": text,
        "has_chart": confined(root, folder / "breakdown.png") is not None,
        "counts": counts,
        "run_config": clean_json(report.get("run_config") or {}),
    }


def run_chart(root: Path, name: str) -> bytes:
    """The bytes of run ``name``'s ``breakdown.png``; NotFoundError when it has none inside the runs folder
    (or the file is not a PNG image, or larger than :data:`MAX_CHART_BYTES`)."""
    data = read_confined(root, run_dir(root, name) / "breakdown.png", MAX_CHART_BYTES + 1)
    if data is None or len(data) > MAX_CHART_BYTES or not data.startswith(PNG_SIGNATURE):
        raise NotFoundError(f"run {name!r} has no breakdown.png")
    return data


def _rows(root: Path, folder: Path) -> Iterator[ResultRow]:
    fd = _open_confined(root, folder / "results.jsonl")
    if fd is None:
        return
    with open(fd, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                row = parse_json(line)
            except ValueError:
                continue  # a line cut by a crash, nested too deep
            if isinstance(row, dict):
                yield ResultRow.from_json(row)


def run_results(
    root: Path, name: str, which: ResultsFilter, offset: int, limit: int, label: Callable[[str], str]
) -> dict[str, Any]:
    """Rows of a run's ``results.jsonl`` with outcome ``which``: each as the answer view's object."""
    folder = run_dir(root, name)
    report = _read_json(root, folder / "report.json")
    method = _summary(folder, report)["method"] or ""
    llm = (report.get("run_config") or {}).get("llm")
    picked = []
    total = 0
    for row in _rows(root, folder):
        if not which.keeps(row):
            continue
        total += 1
        if offset < total <= offset + limit:
            picked.append(_answer_view(row, method, llm, label))
    return {"name": name, "outcome": which.value, "total": total, "offset": offset, "results": picked}


def _answer_view(row: ResultRow, method: str, llm: str | None, label: Callable[[str], str]) -> dict[str, Any]:
    facts = []
    for f in row.evidence:
        try:
            facts.append(labelled_fact(Fact.from_dict(f), None))
        except (KeyError, TypeError, ValueError, AttributeError, TKGQAError):
            continue
    for f in facts:
        for key in ("subject", "relation", "object"):
            f[f"{key}_label"] = label(f[key])
    trace = row.steps()
    program = program_tree(trace, label)
    return clean_json(
        {
            "qid": row.qid,
            "outcome": row.outcome.value,
            "gold": row.gold,
            "question": row.question,
            "method": method,
            "llm": llm,
            "kg": row.kg,
            "answers": row.predictions,
            "evidence": facts,
            "grounded": bool(facts),
            "trace": trace,
            "usage": row.usage,
            "abstained": row.abstained,
            "reason": row.reason or row.error or "",
            "missing": program["missing"] if program and not row.predictions else None,
            "program": program,
            "latency_ms": round(float(row.latency_s or 0) * 1000, 1),
        }
    )

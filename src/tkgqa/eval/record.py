"""Cassettes from runs: ``tkgqa eval --record FILE`` and ``tkgqa llm export RUN_DIR``.

A run folder (``run.json`` + ``results.jsonl``) names its method and its questions; the run log
(``$TKGQA_HOME/llm.sqlite``, see :mod:`tkgqa.llm.cache`) holds every call made for them, tagged with the
method, the question id and the stage, with the stored request (no credentials) and the reply. The cassette
(:mod:`tkgqa.llm.replay_backend`) is a header line — backend, model, the settings the calls share, the
method's configuration, tkgqa's version — then one line per successful call of the run's questions, in the
order of ``results.jsonl``: ``id``, ``stage``, ``messages``, ``response``, ``usage``, ``request`` settings.
Only calls made while the run was writing into its folder count (``run.json``'s ``llm_sessions``: the
start and end of every invocation; a run folder from before they were recorded takes every call of its
method and questions). When a question was answered several times (a resume), each distinct request keeps
its latest reply. ``--llm replay:FILE`` then answers the same run offline, byte for byte.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError, NotFoundError
from ..llm.cache import LLMCache
from ..llm.replay_backend import HEADER_KEY, cassette_header, cassette_line, dump_line
from ..userfiles import check_output, is_stream_target, open_input, parse_json, read_input, write_text
from .report import REPORT_JSON, RESULTS_FILE, read_results
from .runner import RUN_FILE


def _run_info(run: Path) -> dict[str, Any]:
    path = run / RUN_FILE
    if not path.is_file():
        raise NotFoundError(f"no {RUN_FILE} in {str(run)!r} (pass a run folder written by `tkgqa eval`)")
    try:
        info = parse_json(read_input(path, what="the run file"))
    except (ValueError, ConfigError):
        raise DataError("not a readable run file (JSON)", path=str(path)) from None
    if not isinstance(info, dict) or not isinstance(info.get("method"), dict):
        raise DataError("the run file names no method", path=str(path))
    return info


def _sessions(info: Mapping[str, Any]) -> list[tuple[float, float]] | None:
    """``run.json``'s invocation windows; an unfinished one lasts until the next began (or for ever)."""
    raw = info.get("llm_sessions")
    if not isinstance(raw, list) or not raw:
        return None
    spans = [s for s in raw if isinstance(s, list) and len(s) == 2 and isinstance(s[0], int | float)]
    out: list[tuple[float, float]] = []
    for i, (start, end) in enumerate(spans):
        if not isinstance(end, int | float):
            end = spans[i + 1][0] if i + 1 < len(spans) else float("inf")
        out.append((float(start), float(end)))
    return out


def run_calls(run: str | Path, db: str | Path | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's ``run.json`` and the run-log calls of its questions (successful calls only; per question
    and distinct request the latest), in the order of ``results.jsonl``, each with its stored request."""
    folder = Path(run)
    info = _run_info(folder)
    order = {r.qid: i for i, r in enumerate(read_results(folder))}
    windows = _sessions(info)
    store = LLMCache(db)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for call in store.calls(method=str(info["method"].get("method"))):
        qid = call.get("question_id")
        if call["kind"] != "call" or call["error"] is not None or qid not in order:
            continue
        if windows is not None and not any(a <= call["ts"] <= b for a, b in windows):
            continue
        if call.get("response") is None or call.get("request_key") is None:
            continue
        latest.pop((qid, call["request_key"]), None)  # keep the latest, placed at its latest position
        latest[(qid, call["request_key"])] = call
    calls = sorted(latest.values(), key=lambda c: order[c["question_id"]])  # stable: call order kept
    out: list[dict[str, Any]] = []
    for call in calls:
        stored = store.request(call["request_key"])
        if stored is not None:
            out.append({**call, "request": stored["request"]})
    return info, out


def _shared_settings(requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The request settings (not the messages) every call of the run has in common."""
    if not requests:
        return {}
    first = {k: v for k, v in requests[0].items() if k != "messages" and v is not None and v != {}}
    return {k: v for k, v in first.items() if all(r.get(k) == v for r in requests[1:])}


def _most_common(values: Sequence[str | None]) -> str | None:
    found = Counter(v for v in values if v)
    return found.most_common(1)[0][0] if found else None


def export_run(
    run: str | Path, output: str | Path | None = None, *, db: str | Path | None = None, force: bool = False
) -> tuple[list[str], int]:
    """The cassette of run folder ``run`` as lines (header first), written to ``output`` when given
    (:func:`check_cassette_target`: checked first, then replaced whole); returns ``(lines, number of
    recorded calls)``. NotFoundError when the run log holds no call of it."""
    if output is not None:
        check_cassette_target(output, run, force=force)
    info, calls = run_calls(run, db)
    method = info["method"]
    if not calls:
        raise NotFoundError(
            f"the run log ({LLMCache(db).path}) holds no successful LLM call of the {method.get('method')!r} "
            f"run in {str(run)!r}: was it run with another TKGQA_HOME (or --db), or without an LLM?"
        )
    header = cassette_header(
        backend=_most_common([c.get("backend") for c in calls]),
        model=_most_common([c.get("request_model") or c.get("model") for c in calls]),
        settings=_shared_settings([c["request"] for c in calls]),
        method=method,
        dataset=info.get("dataset"),
        calls=len(calls),
    )
    lines = [dump_line(header)]
    for c in calls:
        entry = cassette_line(
            request=c["request"],
            response=c["response"],
            qid=c["question_id"],
            stage=c.get("stage"),
            method=c.get("method"),
            prompt_tokens=c.get("prompt_tokens"),
            completion_tokens=c.get("completion_tokens"),
        )
        lines.append(dump_line(entry))
    if output is not None:
        write_text(check_cassette_target(output, run, force=force), "".join(lines))
    return lines, len(calls)


def _is_cassette(path: Path) -> bool:
    """Whether ``path`` starts with a cassette header line (what ``--record``/``llm export`` write)."""
    try:
        with open_input(path, what="the cassette") as fh:
            first = fh.readline(64 * 1024)
        item = parse_json(first)
    except (ConfigError, ValueError):
        return False
    return isinstance(item, dict) and HEADER_KEY in item


def check_cassette_target(
    output: str | Path, run: str | Path | None = None, *, force: bool = False, what: str = "--output"
) -> Path:
    """``output`` checked as a cassette to write, before anything is written (``--record`` checks it before
    the run starts): its folder exists, it is no file of the run folder ``run``, and an existing file there
    is a cassette (written by ``--record`` or ``llm export``) unless ``force`` — another file is not
    replaced. ConfigError in one line naming the option ``what``."""
    inputs = [Path(run) / name for name in (RUN_FILE, RESULTS_FILE, REPORT_JSON)] if run is not None else []
    target = check_output(output, inputs=inputs, what=what)
    if target.exists() and not force and not is_stream_target(target) and not _is_cassette(target):
        raise ConfigError(
            f"{what} {str(target)!r} exists and is not a cassette (tkgqa did not write it); give another "
            "file, or --force to replace it"
        )
    return target

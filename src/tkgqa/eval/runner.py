"""``evaluate``: run a method over questions, one ``results.jsonl`` row per question, then the report.

Rows are appended (and flushed) as questions finish, so an interrupted run resumes where it stopped
(``resume=True`` skips qids already in ``results.jsonl``; ``run.json`` records the method and what the rows
depend on besides it — the dataset, its question file, the KG, the context mode, ``as_of`` and ``obfuscate``,
:func:`run_settings` — so a resume with any of them changed is refused, naming what differs; ``limit``/
``sample`` are not among them: a larger ``limit`` extends the run). A question with ``context``
(TimeQuestions with retrieved facts) is answered over ``tkgqa.query.context_kg(question)`` instead of the
shared KG.

Errors are not abstentions. A method exception on one question — an :class:`~tkgqa.errors.LLMError` (the
backend answered HTTP 500, timed out, refused the key…) or a bug — becomes an *error row*: ``error`` and
``error_type`` set, ``abstained`` false, ``usage`` what the failed question spent (the LLMError's usage). The
run goes on; the report counts the errors (``errors``, ``errors_by_type``) and a resume retries error rows
(``retry_errors=False`` keeps them). An abstention is the method declining to answer (``abstained`` true with
its ``reason``; unparsable model output after the retries is one).

Text that cannot be written as UTF-8 (a lone surrogate in a question or in an LLM reply) is replaced by
U+FFFD at this boundary (:mod:`tkgqa.sanitize`), so the row is recorded. A lock file (:data:`LOCK_FILE`)
keeps a second run from writing into the same folder; a write that fails (disk full) is a one-line
DataError and the same command resumes once there is space.

Missing optional inputs that change results (the dataset's :attr:`~tkgqa.datasets.Dataset.warnings`, no KG at
all) are reported through ``warn`` (default: a :class:`~tkgqa.errors.MissingInputWarning`) and listed in the
report's ``warnings``; ``strict=True`` raises a DataError before any question is answered.

``executor`` chooses where the questions are answered (:mod:`tkgqa.eval.executor`: this process, or Ray
workers whose rows stream back to this process, which alone writes the run folder); the rows, the resume
rules and the report are the same either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, assert_never

from ..credentials import redact
from ..datasets.base import Question
from ..datasets.core import Dataset
from ..datasets.sampling import select_questions
from ..errors import ConfigError, DataError, MissingInputWarning
from ..kg.base import KGStore
from ..methods.base import Method, resolve_method
from ..outcomes import ResultRow
from ..sanitize import clean_json, has_surrogates
from ..time import TimePoint, parse_as_of
from ..userfiles import claim_folder, parse_json, read_input
from .answering import KGs, answer_one, clean_question
from .executor import LOCAL, ExecutorConfig, ExecutorKind, method_factory_for
from .kg_view import apply_kg_view
from .report import DEFAULT_KS, RESULTS_FILE, Report, build_report, read_results, write_report

RUN_FILE = "run.json"
#: Held (``flock``) while a run writes into its folder; a second run into the same folder is refused.
LOCK_FILE = ".tkgqa-eval.lock"


def row_line(row: ResultRow) -> str:
    """One ``results.jsonl`` line; strings that cannot be UTF-8 (lone surrogates) are replaced first, and
    credential-shaped text (a key a model echoed, a URL with a key) is masked (:func:`redact`)."""
    data = redact(row.to_json())
    line = json.dumps(data, ensure_ascii=False, default=str)
    if has_surrogates(line):
        line = json.dumps(clean_json(data), ensure_ascii=False, default=str)
    return line + "\n"


def answer_rows(
    executor: ExecutorConfig,
    method: Method,
    questions: Sequence[Question],
    kgs: KGs,
    *,
    method_factory: Callable[[], Method] | None = None,
) -> Iterator[ResultRow]:
    """One row per question of ``questions``, as each is finished (in any order with Ray)."""
    match executor.kind:
        case ExecutorKind.LOCAL:
            for q in questions:
                yield answer_one(method, q, kgs)
        case ExecutorKind.RAY:
            from .executor_ray import ray_rows

            yield from ray_rows(executor, method_factory_for(method, method_factory), questions, kgs)
        case _:
            assert_never(executor.kind)


def write_failed(path: Path, exc: OSError) -> DataError:
    """The one-line error for a write that failed (disk full, read-only, quota)."""
    reason = exc.strerror or str(exc)
    return DataError(
        f"cannot write ({reason}); free some space (or fix the folder) and run the same command again: "
        "it resumes where it stopped",
        path=str(path),
    )


@contextlib.contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """Hold :data:`LOCK_FILE` in ``out`` (``flock``, released when the process ends, even by kill -9); a
    second run into the same folder gets a ConfigError instead of interleaving its rows."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise write_failed(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise ConfigError(
                f"another `tkgqa eval` (pid {holder}) is writing to {out}; wait for it to finish, or pass "
                "another --output folder"
            ) from None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


#: What the marker of a run folder names (:func:`tkgqa.userfiles.claim_folder`).
EVAL_COMMAND = "tkgqa eval"


def is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` was written by ``tkgqa eval`` before folders carried an owner marker: it holds a
    ``run.json``, a ``results.jsonl`` or the run lock (a folder of those resumes as before)."""
    return any((folder / name).is_file() for name in (RUN_FILE, RESULTS_FILE, LOCK_FILE))


def make_run_folder(output_dir: str | Path, *, force: bool = False) -> Path:
    """``output_dir`` created if needed and marked as a ``tkgqa eval`` run folder; a ConfigError when it is
    a file, cannot be created, or holds files another command (or nothing of ours) wrote, unless ``force``
    (:func:`~tkgqa.userfiles.claim_folder`; an unmarked folder with a ``run.json``/``results.jsonl`` is a
    run folder from before the marker: it resumes)."""
    return claim_folder(output_dir, EVAL_COMMAND, force=force, legacy=is_run_folder)


def run_settings(
    data: Dataset | Sequence[Question],
    kg: KGStore | str | Path | None,
    as_of: str | int | TimePoint | None,
    obfuscate: bool,
) -> dict[str, Any]:
    """What a run's rows depend on besides the method, as recorded in ``run.json`` and compared on resume:
    the dataset's name, its question file (and retrieved-facts file), the shared KG (a file as its resolved
    path, else the store's name), the context mode (``retrieved``: per-question facts; ``kg``), the ``as_of``
    cutoff (``None``: the whole KG, ``all`` included) and ``obfuscate``. The question selection is not
    (``limit``, ``sample``, ``seed``): a row means the same whichever selection included it."""
    ds, _, name = _source(data)
    meta = ds.meta if ds is not None else {}
    cut = parse_as_of(as_of)  # a bad time fails here as it would in the KG view
    return {
        "dataset": name,
        "questions_file": _stable_path(meta.get("questions_file")),
        "retrieved_file": _stable_path(meta.get("retrieved_file")),
        "kg": _kg_identity(kg if kg is not None or ds is None else ds.kg_path),
        "context": None if ds is None else ("retrieved" if ds.has_context else "kg"),
        "as_of": None if cut is None else str(cut),
        "obfuscate": bool(obfuscate),
    }


def _stable_path(value: str | Path | None) -> str | None:
    """An existing file as its resolved absolute path (the same run from another directory compares
    equal), anything else (a store name such as ``demo``) as given."""
    if value is None:
        return None
    try:
        path = Path(value).expanduser()
        return str(path.resolve()) if path.exists() else str(value)
    except (OSError, RuntimeError):  # "~user" of an unknown user, an unreadable path
        return str(value)


def _kg_identity(kg: KGStore | str | Path | None) -> str | None:
    """The KG a run answers over: a file (or store name) as :func:`_stable_path`, a store by its name."""
    if kg is None or isinstance(kg, str | Path):
        return _stable_path(kg)
    return str(getattr(kg, "name", type(kg).__name__))


def _resume_sessions(out: Path, info: dict[str, Any], resume: bool) -> list[Any]:
    """The ``llm_sessions`` of the run in ``out`` that this one resumes (none when it starts over); a
    ConfigError when that run was made with another method or settings (:func:`run_settings`). Reads
    only: called before anything is written into ``out``."""
    path = out / RUN_FILE
    if not (resume and path.is_file() and (out / RESULTS_FILE).is_file()):
        return []
    previous = _read_run_file(path)
    if not isinstance(previous, dict):
        return []
    written = json.loads(json.dumps(clean_json(redact(info)), ensure_ascii=False))  # as run.json holds it
    if previous.get("method") not in (info["method"], redact(info["method"]), written["method"]):
        raise ConfigError(
            f"{out} holds results of another method configuration ({previous.get('method')}); "
            "use another output folder or --no-resume to start over"
        )
    # A run.json of an earlier version lacks the newer keys (it has ``method`` and ``dataset``): only the
    # keys present in both are compared, so that its runs still resume.
    changed = [k for k, v in written.items() if k != "method" and k in previous and previous[k] != v]
    if changed:
        was = ", ".join(f"{k}={previous[k]}" for k in changed)
        asks = ", ".join(f"{k}={written[k]}" for k in changed)
        raise ConfigError(
            f"{out} was run with {was}, this run asks {asks}: use another output folder or --no-resume to "
            "start over"
        )
    sessions = previous.get("llm_sessions")
    return sessions if isinstance(sessions, list) else []


def _check_run_file(out: Path, info: dict[str, Any], resume: bool, started: float) -> None:
    """Write ``run.json``: ``info`` (the method and :func:`run_settings`) and ``llm_sessions``, the
    ``[start, end]`` Unix times of every invocation that wrote into the folder (``end`` ``None`` until it
    finishes) — which run-log calls are this run's (:mod:`tkgqa.eval.record`). A resume of a run made with
    another method or settings is refused (:func:`_resume_sessions`)."""
    sessions = _resume_sessions(out, info, resume)
    _write_run_file(out / RUN_FILE, {**info, "llm_sessions": [*sessions, [started, None]]})


def _read_run_file(path: Path) -> Any:
    try:
        return parse_json(read_input(path, what="the run file"))
    except (ValueError, ConfigError):
        return None


def _end_session(out: Path, started: float) -> None:
    """Close this invocation's entry of ``run.json``'s ``llm_sessions`` (see :func:`_check_run_file`)."""
    path = out / RUN_FILE
    info = _read_run_file(path)
    sessions = info.get("llm_sessions") if isinstance(info, dict) else None
    if isinstance(info, dict) and isinstance(sessions, list) and sessions and sessions[-1] == [started, None]:
        sessions[-1] = [started, time.time()]
        _write_run_file(path, info)


def _write_run_file(path: Path, info: dict[str, Any]) -> None:
    try:
        path.write_text(json.dumps(clean_json(redact(info)), indent=2, ensure_ascii=False) + "\n", "utf-8")
    except OSError as exc:
        raise write_failed(path, exc) from None


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
    retry_errors: bool = True,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    executor: ExecutorConfig = LOCAL,
    method_factory: Callable[[], Method] | None = None,
    force: bool = False,
    as_of: str | int | TimePoint | None = None,
    obfuscate: bool = False,
) -> Report:
    """Evaluate ``method`` and write ``results.jsonl``, ``report.json``, ``report.md``, ``breakdown.png``.

    ``kg``: a store, a KG file, or ``None`` (the dataset's ``kg_path``; an empty KG when there is none).
    ``limit``/``sample``/``seed`` choose the questions (``first``, ``random`` or ``stratified`` by qtype).
    ``retry_errors``: a resume answers the error rows again (else it keeps them). ``strict``: a missing
    optional input (see :func:`input_warnings`) is a DataError instead of a warning given to ``warn``
    (default: :func:`warnings.warn` with :class:`~tkgqa.errors.MissingInputWarning`). ``executor``: where the
    questions are answered (default here); ``method_factory``: how a Ray worker builds its own ``method``
    (a picklable zero-argument callable; default: the registry for a name, else ``method`` pickled).
    ``force``: write into ``output_dir`` even when another command's files are there
    (:func:`make_run_folder`). ``as_of``: answer over the KG as of that time (:func:`tkgqa.time.parse_as_of`:
    a year, month or date; ``"all"``: the whole KG, recorded as such); ``obfuscate``: Q′ over
    ``K_all ∪ K′`` (CIK-LLM, Fig. 6) — either is recorded in ``report.json``'s ``kg_view``
    (:mod:`tkgqa.eval.kg_view`)."""
    runner = resolve_method(method) if isinstance(method, str) else method
    info = {"method": runner.describe(), **run_settings(dataset_or_questions, kg, as_of, obfuscate)}
    dataset_or_questions, kg, view = _kg_view(dataset_or_questions, kg, as_of, obfuscate)
    ds, all_questions, name = _source(dataset_or_questions)
    questions = [clean_question(q) for q in select_questions(all_questions, limit, sample, seed)]
    found = input_warnings(ds, kg, questions)
    kgs = KGs(kg, ds.kg_path if ds is not None else None, check_support, strict)
    if strict and any(q.context is None for q in questions):
        kgs.shared()  # a malformed KG entry stops the run before any question
    if found and strict:
        raise DataError(
            f"{len(found)} missing input(s) that change results (strict mode): " + " | ".join(found)
            + " — provide them, or run without --strict to go on with a warning"
        )  # fmt: skip
    _warn(found, warn)
    _resume_sessions(Path(output_dir).expanduser(), info, resume)  # refused before anything is written
    out = make_run_folder(output_dir, force=force)
    with run_lock(out):
        describe = info["method"]
        started = time.time()
        _check_run_file(out, info, resume, started)
        results = out / RESULTS_FILE
        previous = _prepare_results(results, resume)
        done = {r.qid for r in previous if not (retry_errors and r.failed)}
        retried = {r.qid for r in previous if r.qid not in done}
        remaining = [q for q in questions if q.qid not in done]
        factory = method_factory_for(method, method_factory)  # how a Ray worker builds it
        rows_iter = answer_rows(executor, runner, remaining, kgs, method_factory=factory)
        _append_rows(results, rows_iter, _progress(len(remaining), runner.name, progress))
        _warn(kgs.warnings, warn)  # malformed KG entries skipped while loading (known once loaded)
        _end_session(out, started)
        rows = _run_rows(results, questions, retried)
        wanted = {q.qid for q in questions}
        report = build_report(
            rows,
            method=describe,
            dataset=_dataset_info(name, ds, all_questions, questions, kgs),
            ks=ks,
            selection={
                "limit": limit,
                "sample": sample if len(questions) < len(all_questions) else None,  # all kept: no sample
                "seed": seed,
                "resumed": len(done & wanted),
                "retried_errors": len(retried & wanted),
            },
            warnings=[*found, *kgs.warnings],
            method_metrics=runner.report_metrics(rows) if hasattr(runner, "report_metrics") else None,
            kg_view=view,
        )
        try:
            write_report(report, out)
        except OSError as exc:
            raise write_failed(out, exc) from None
        return report


def _kg_view(
    data: Dataset | Sequence[Question],
    kg: KGStore | str | Path | None,
    as_of: str | int | TimePoint | None,
    obfuscate: bool,
) -> tuple[Dataset | Sequence[Question], KGStore | str | Path | None, dict[str, Any] | None]:
    """``data`` and ``kg`` with ``as_of``/``obfuscate`` applied (:func:`~tkgqa.eval.kg_view.apply_kg_view`),
    and the ``kg_view`` to record (``None``: neither asked)."""
    if as_of is None and not obfuscate:
        return data, kg, None
    if not isinstance(data, Dataset):
        data = Dataset(name=_source(data)[2], questions=list(data))
    return apply_kg_view(data, kg, as_of=as_of, obfuscate=obfuscate)


def _source(data: Dataset | Sequence[Question]) -> tuple[Dataset | None, list[Question], str]:
    """The dataset (``None`` for bare questions), all its questions and its name."""
    if isinstance(data, Dataset):
        return data, list(data.questions), data.name
    questions = list(data)
    return None, questions, questions[0].dataset if questions else "custom"


def _warn(messages: Sequence[str], warn: Callable[[str], None] | None) -> None:
    """Give each message to ``warn``, else :func:`warnings.warn` (pointing at ``evaluate``'s caller)."""
    for message in messages:
        if warn is not None:
            warn(message)
        else:
            warnings.warn(message, MissingInputWarning, stacklevel=3)


def _append_rows(results: Path, rows: Iterator[ResultRow], bar: Any) -> None:
    """Append each row to ``results`` as it arrives (flushed), with the progress bar's running Hits@1."""
    hits = 0
    try:
        with results.open("a", encoding="utf-8") as fh:
            for i, row in enumerate(rows, 1):
                fh.write(row_line(row))
                fh.flush()
                hits += row.strict_hit
                bar.update(1)
                bar.set_postfix(hits1=f"{hits / i:.3f}", refresh=False)
    except OSError as exc:
        raise write_failed(results, exc) from None
    finally:
        bar.close()


def _run_rows(results: Path, questions: Sequence[Question], retried: set[str]) -> list[ResultRow]:
    """The rows of ``questions`` in their order (the report does not depend on finish order); a retried
    question's old row is replaced in ``results`` first, so that it holds one line per question."""
    wanted = {q.qid for q in questions}
    if retried & wanted:
        _rewrite(results, read_results(results))
    order = {q.qid: i for i, q in enumerate(questions)}
    return sorted((r for r in read_results(results) if r.qid in wanted), key=lambda r: order[r.qid])


def _dataset_info(
    name: str, ds: Dataset | None, all_questions: Sequence[Question], questions: Sequence[Question], kgs: KGs
) -> dict[str, Any]:
    """``report.json``'s ``dataset``: its name, size, KG, context questions, scalar metadata, notices."""
    info: dict[str, Any] = {
        "name": name,
        "n_available": len(all_questions),
        "kg": kgs.description or (str(ds.kg_path) if ds is not None and ds.kg_path else None),
        "context_questions": sum(q.context is not None for q in questions),
    }
    if ds is not None:
        info["meta"] = {k: v for k, v in ds.meta.items() if not isinstance(v, list | dict)}
        info["notices"] = list(ds.notices)
    return info


def input_warnings(
    ds: Dataset | None, kg: KGStore | str | Path | None, questions: Sequence[Question]
) -> list[str]:
    """The missing optional inputs that change this run's results: the dataset's own
    :attr:`~tkgqa.datasets.Dataset.warnings`, and a dataset without a KG file (none given either) for
    questions without per-question context. (Bare questions with ``kg=None`` ask for the empty KG.)"""
    if ds is None:
        return []
    found = list(ds.warnings)
    shared = sum(q.context is None for q in questions)
    if kg is None and ds.kg_path is None and shared:
        found.append(
            f"no KG: the {ds.name} dataset has no KG file and none was given, so {shared} of "
            f"{len(questions)} questions (those without per-question context) are answered over an empty "
            "KG; pass --kg FILE (kg=) or put the KG where the loader looks for it"
        )
    return found


def _prepare_results(path: Path, resume: bool) -> list[ResultRow]:
    """Rows already in ``path`` (resume) or an emptied file; a torn last line (an interrupted write) or a
    repeated qid is cleaned up so that appending stays valid JSONL."""
    try:
        if not resume or not path.exists():
            path.write_text("", "utf-8")
            return []
        data = path.read_bytes()
    except OSError as exc:
        raise write_failed(path, exc) from None
    rows = read_results(path)
    n_lines = sum(1 for line in data.splitlines() if line.strip())
    if (data and not data.endswith(b"\n")) or n_lines != len(rows):
        _rewrite(path, rows)
    return rows


def _rewrite(path: Path, rows: Sequence[ResultRow]) -> None:
    """Replace ``path`` with ``rows`` atomically (a failed write leaves the old file whole)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(row_line(row))
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_failed(path, exc) from None

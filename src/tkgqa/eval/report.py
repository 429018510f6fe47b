"""Evaluation reports: aggregate ``results.jsonl`` rows into ``report.json`` / ``report.md`` /
``breakdown.png``, read results back, and compare two runs (McNemar).

Error rows (a method or LLM failure, ``error`` set; see :mod:`tkgqa.eval.runner`) are not abstentions: the
report counts them (``errors``, ``errors_by_type``, ``error_examples``) and ``report.md`` opens with them.
They stay in ``n``, scored as misses, so a run with errors never looks better than it is; a resume retries
them. ``warnings`` lists the missing optional inputs that changed the results."""

from __future__ import annotations

import json
import statistics
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..credentials import redact
from ..errors import DataError, NotFoundError
from ..llm.helpers import REPLAY_KEYS
from ..markdown import md_row, md_rule, md_text
from ..outcomes import ResultRow
from ..userfiles import parse_json, write_text
from .scoring import breakdown, mcnemar

RESULTS_FILE = "results.jsonl"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
BREAKDOWN_PNG = "breakdown.png"
DEFAULT_KS = (1, 3, 10)


@dataclass(frozen=True)
class Report:
    """Aggregated metrics of one run (``to_dict()`` is ``report.json``)."""

    n: int
    metrics: dict[str, float]
    breakdown: dict[str, Any]
    supported: dict[str, Any]
    method: dict[str, Any]
    dataset: dict[str, Any]
    usage: dict[str, float]
    latency: dict[str, float]
    errors: int = 0
    error_examples: list[dict[str, str]] = field(default_factory=list)
    errors_by_type: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    method_metrics: dict[str, Any] = field(default_factory=dict)  # Method.report_metrics(rows)
    selection: dict[str, Any] = field(default_factory=dict)
    supported_loose: dict[str, Any] = field(default_factory=dict)  # one question entity suffices
    replay: dict[str, int] = field(default_factory=dict)  # replay: backend: {exact, by_id, miss} calls
    kg_view: dict[str, Any] = field(
        default_factory=dict
    )  # as_of / obfuscate (eval.kg_view); {}: the KG as given

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.kg_view:  # the KG as given: report.json has no kg_view key, as before
            del data["kg_view"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def _mean(rows: Sequence[ResultRow], value: Callable[[ResultRow], float | bool | None]) -> float:
    return sum(float(value(r) or 0.0) for r in rows) / len(rows) if rows else 0.0


def _strict(r: ResultRow) -> bool:
    return r.strict_hit


def _lenient(r: ResultRow) -> bool:
    return r.lenient_hit


def _metrics(rows: Sequence[ResultRow], ks: Sequence[int]) -> dict[str, float]:
    n = len(rows)
    done = [r for r in rows if r.answered]
    metrics: dict[str, float] = {
        "strict_hits@1": _mean(rows, _strict),
        "lenient_hits@1": _mean(rows, _lenient),
        "answered": len(done) / n if n else 0.0,
        "strict_hits@1_answered": _mean(done, _strict),
    }
    for k in ks:
        if k != 1:
            metrics[f"strict_hits@{k}"] = (
                sum(1 for r in rows if r.rank is not None and r.rank <= k) / n if n else 0.0
            )
    metrics.update(
        set_precision=_mean(rows, lambda r: r.precision),
        set_recall=_mean(rows, lambda r: r.recall),
        set_f1=_mean(rows, lambda r: r.f1),
        exact_set=_mean(rows, lambda r: r.exact_set),
    )
    return metrics


def _support_block(
    rows: Sequence[ResultRow], flag: Callable[[ResultRow], bool | None]
) -> tuple[dict[str, Any], list[ResultRow]]:
    """Counts and hits of the rows ``flag`` calls supported (among those it decides), and the unsupported."""
    checked = [r for r in rows if flag(r) is not None]
    sup = [r for r in checked if flag(r)]
    block = {
        "n": len(sup),
        "checked": len(checked),
        "fraction": len(sup) / len(checked) if checked else 0.0,
        "strict_hits@1": _mean(sup, _strict),
        "lenient_hits@1": _mean(sup, _lenient),
    }
    return block, [r for r in checked if not flag(r)]


def _supported(rows: Sequence[ResultRow]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The KG-supported subset (every question entity linked) and its loose variant (one suffices)."""
    supported, unsupported = _support_block(rows, lambda r: r.supported)
    supported["unsupported_strict_hits@1"] = _mean(unsupported, _strict)
    loose, _ = _support_block(rows, lambda r: r.supported_loose)
    return supported, loose


def _usage(rows: Sequence[ResultRow]) -> tuple[dict[str, float], dict[str, int]]:
    """Usage per question and for the run, and the replay backend's counts (``{}`` when none replayed)."""
    n = len(rows)
    usage_sum: dict[str, float] = {}
    for r in rows:
        for key, value in r.usage.items():
            if isinstance(value, int | float):
                usage_sum[key] = usage_sum.get(key, 0.0) + value
    usage = {
        "llm_calls_per_question": usage_sum.get("llm_calls", 0.0) / n if n else 0.0,
        "prompt_tokens_per_question": usage_sum.get("prompt_tokens", 0.0) / n if n else 0.0,
        "completion_tokens_per_question": usage_sum.get("completion_tokens", 0.0) / n if n else 0.0,
        "parse_failures": int(usage_sum.get("parse_failures", 0)),
        "cost_usd": usage_sum.get("cost_usd", 0.0),
        "llm_calls": usage_sum.get("llm_calls", 0.0),
        "cached_calls": usage_sum.get("cached_calls", 0.0),  # part of llm_calls, free (llm.usage_cost)
    }
    replay = {name: int(usage_sum.get(key, 0)) for key, name in REPLAY_KEYS.items()}
    return usage, replay if any(replay.values()) else {}


def _latency(rows: Sequence[ResultRow]) -> dict[str, float]:
    lat = sorted(float(r.latency_s or 0.0) for r in rows)
    return {
        "mean_s": statistics.fmean(lat) if lat else 0.0,
        "median_s": statistics.median(lat) if lat else 0.0,
        "p95_s": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else 0.0,
        "total_s": sum(lat),
    }


def build_report(
    rows: Sequence[ResultRow],
    *,
    method: Mapping[str, Any] | None = None,
    dataset: Mapping[str, Any] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    selection: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
    method_metrics: Mapping[str, Any] | None = None,
    kg_view: Mapping[str, Any] | None = None,
) -> Report:
    """Aggregate per-question rows (as written to ``results.jsonl``); ``warnings``: the missing inputs."""
    supported, supported_loose = _supported(rows)
    usage, replay = _usage(rows)
    errors = [r for r in rows if r.failed]
    ds = dict(dataset or {})
    return Report(
        n=len(rows),
        metrics=_metrics(rows, ks),
        breakdown=breakdown(rows, ds.get("name")),
        supported=supported,
        supported_loose=supported_loose,
        method=dict(method or {}),
        dataset=ds,
        usage=usage,
        latency=_latency(rows),
        errors=len(errors),
        error_examples=[{"qid": r.qid, "error": str(r.error)[:300]} for r in errors[:5]],
        errors_by_type=dict(Counter(r.error_type or "error" for r in errors).most_common()),
        selection=dict(selection or {}),
        warnings=list(warnings),
        method_metrics=dict(method_metrics or {}),
        replay=replay,
        kg_view=dict(kg_view or {}),
    )


def problem_lines(report: Report) -> list[str]:
    """What makes the run's numbers incomplete, one sentence each: its errors, then its warnings."""
    out: list[str] = []
    if report.errors:
        kinds = ", ".join(f"{kind} × {n}" for kind, n in report.errors_by_type.items())
        first = report.error_examples[0]["error"] if report.error_examples else ""
        out.append(
            f"{report.errors} of {report.n} questions FAILED with errors ({kinds}; first: {first[:200]}). "
            "They are not abstentions: the metrics count them as wrong answers. Fix the cause and run the "
            "same command again: the resume retries them."
        )
    out += [f"Warning: {w}" for w in report.warnings]
    out += [f"Note: {n}" for n in report.dataset.get("notices") or ()]
    return out


# --- writing ------------------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


#: What the headline metrics mean, under every table of them (CLI and report.md).
METRICS_NOTE = (
    "Values are % of the n questions (answered: % with an answer; *_answered: % of those answered). "
    "Strict Hits@k: a gold answer among the first k answers after normalisation; lenient Hits@1: a strict "
    "hit at any rank or a gold answer's text inside the output (TimeR4's substring rule)."
)


def method_label(method: Mapping[str, Any]) -> str:
    """The method as run: its name, the settings given that differ from its defaults, and its LLM —
    ``ari (policy=symbolic, top_k=5; no LLM)``."""
    name = str(method.get("method", "?"))
    given = method.get("requested") or method.get("config") or {}
    defaults: dict[str, Any] = {}
    try:
        from ..methods.base import METHODS

        factory = METHODS.factory(name)
        config_class = getattr(factory, "config_class", None)
        if config_class is not None:
            defaults = config_class().model_dump(mode="json")
    except Exception:  # a plugin without a config, a missing extra: show the settings as given
        defaults = {}
    shown = [
        f"{k}={v}"
        for k, v in given.items()
        if k != "llm"
        and v is not None
        and (k not in defaults or defaults[k] != v)
        and not isinstance(v, dict)
    ]
    llm = method.get("llm") or given.get("llm")
    uses = "llm" in given or "llm" in defaults
    tail = (f"LLM {llm}" if llm else "no LLM") if uses else ""
    inside = ", ".join(shown[:8]) + (", …" if len(shown) > 8 else "")
    parts = "; ".join(p for p in (inside, tail) if p)
    return f"{name} ({parts})" if parts else name


def sample_label(n: int, dataset: Mapping[str, Any], selection: Mapping[str, Any]) -> str:
    """Which questions: ``10 of 60 questions, stratified sample (seed 1)``, ``all 60 questions``…"""
    total = dataset.get("n_available")
    sample, seed, limit = selection.get("sample"), selection.get("seed"), selection.get("limit")
    if not limit or (total is not None and n >= int(total)):
        return f"all {n} questions" if total is None or n >= int(total) else f"{n} of {total} questions"
    how = {"stratified": "stratified sample", "random": "random sample"}.get(str(sample), "the first ones")
    seeded = f" (seed {seed})" if seed is not None and sample in ("stratified", "random") else ""
    of = f" of {total}" if total is not None else ""
    return f"{n}{of} questions, {how}{seeded}"


def run_title(
    method: Mapping[str, Any], dataset: Mapping[str, Any], n: int, selection: Mapping[str, Any]
) -> str:
    """One line saying what a run is: method with its settings and LLM, dataset and split, the sample."""
    split = (dataset.get("meta") or {}).get("split")
    where = f"{dataset.get('name', '?')}" + (f" ({split} split)" if split else "")
    return f"{method_label(method)} on {where}: {sample_label(n, dataset, selection)}"


def latency_line(latency: Mapping[str, float]) -> str:
    """Latency per question, saying why a mean can exceed the p95: a few slow questions (a first one loads
    the models) pull the mean up, the median and p95 are what a typical question takes. The note is given
    only when the mean shown is above the p95 shown (equal at 3 decimals: no note)."""
    median, p95, mean = (
        f"{v:.3f}" for v in (latency.get("median_s", 0.0), latency["p95_s"], latency["mean_s"])
    )
    note = (
        " (the mean is above the p95: a few slow questions, e.g. the first loading models)"
        if float(mean) > float(p95)
        else ""
    )
    return f"Latency per question: median {median} s, p95 {p95} s, mean {mean} s{note}."


def render_markdown(report: Report) -> str:
    """``report.md``: headline metrics, usage, the supported subset and one table per breakdown. Every
    value from data is escaped (:mod:`tkgqa.markdown`); headings are fixed words."""
    m = report.metrics
    title = run_title(report.method, report.dataset, report.n, report.selection)
    lines = ["# Evaluation report", "", f"{md_text(title)}.", ""]
    for i, problem in enumerate(problem_lines(report)):
        lines += [">"] if i else []
        lines.append(f"> **{md_text(problem)}**")
    if lines[-1]:
        lines.append("")
    lines += [md_row(("metric", "%")), md_rule(2)]
    lines += [md_row((k, _pct(v))) for k, v in m.items()]
    lines += ["", METRICS_NOTE]
    s, u = report.supported, report.usage
    lines += [
        "",
        f"KG-supported: {s['n']} of {s['checked']} checked ({_pct(s['fraction'])} %); strict Hits@1 on them "
        f"{_pct(s['strict_hits@1'])}, on the rest {_pct(s['unsupported_strict_hits@1'])}.",
    ]
    a = report.supported_loose
    if a:
        lines.append(
            f"KG-supported, loose (one question entity linked suffices): {a['n']} of {a['checked']}; "
            f"strict Hits@1 on them {_pct(a['strict_hits@1'])}."
        )
    lines += [
        "",
        f"Usage per question: {u['llm_calls_per_question']:.2f} LLM calls, "
        f"{u['prompt_tokens_per_question']:.0f} prompt + "
        f"{u['completion_tokens_per_question']:.0f} completion tokens; "
        f"{u['parse_failures']} parse failures. Run total: {u.get('llm_calls', 0):.0f} LLM calls "
        f"({u.get('cached_calls', 0):.0f} cached), ~${u.get('cost_usd', 0.0):.4f} (as `tkgqa llm log`). "
        f"{latency_line(report.latency)} Errors: {report.errors}.",
    ]
    if report.replay:
        r = report.replay
        lines.append(
            f"Replayed LLM calls: {r['exact']} by the same prompt, {r['by_id']} by question id and stage, "
            f"{r.get('reask', 0)} parse re-asks of a recorded exchange, {r['miss']} not found "
            "(ReplayMiss error rows)."
        )
    for dim, groups in report.breakdown.items():
        if dim == "overall":
            continue
        lines += [
            "",
            f"## by {md_text(dim)}",
            "",
            md_row(("value", "n", "strict Hits@1", "lenient Hits@1")),
            md_rule(4),
        ]
        lines += [
            md_row((v, g["n"], _pct(g["strict_hits@1"]), _pct(g["lenient_hits@1"])))
            for v, g in groups.items()
        ]
    return "\n".join(lines) + "\n"


def plot_breakdown(report: Report, path: Path) -> None:
    """A horizontal bar chart of strict (dark) and lenient (light) Hits@1 per breakdown group."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels: list[str] = []
    strict: list[float] = []
    lenient: list[float] = []
    for dim, groups in report.breakdown.items():
        items = {"all": groups}.items() if dim == "overall" else groups.items()
        for value, g in items:
            labels.append(f"{dim}: {value} (n={g['n']})" if dim != "overall" else f"overall (n={g['n']})")
            strict.append(100 * g["strict_hits@1"])
            lenient.append(100 * g["lenient_hits@1"])
    fig = Figure(figsize=(8, 0.35 * len(labels) + 1.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, lenient, color="#9ecae1", label="lenient Hits@1")
    ax.barh(ys, strict, color="#08519c", height=0.5, label="strict Hits@1")
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("%")
    ax.set_title(f"{report.method.get('method', '?')} on {report.dataset.get('name', '?')}", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def write_report(report: Report, output_dir: str | Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``breakdown.png`` into ``output_dir``, credential-shaped
    text masked (:func:`~tkgqa.credentials.redact`: an error message quoting a URL with a key)."""
    report = Report.from_dict(redact(report.to_dict()))
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / REPORT_JSON, "md": out / REPORT_MD, "png": out / BREAKDOWN_PNG}
    write_text(paths["json"], json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    write_text(paths["md"], render_markdown(report))  # each whole or the old one (userfiles.atomic_output)
    plot_breakdown(report, paths["png"])
    return paths


# --- reading and comparing -------------------------------------------------------------------------------
def results_path(run: str | Path) -> Path:
    """``results.jsonl`` of a run folder (or the file itself)."""
    p = Path(run)
    path = p / RESULTS_FILE if p.is_dir() else p
    if not path.is_file():
        raise NotFoundError(f"no {RESULTS_FILE} at {str(p)!r} (pass a run folder written by `tkgqa eval`)")
    return path


def read_results(
    path: str | Path, *, strict: bool = False, skipped: list[int] | None = None
) -> list[ResultRow]:
    """The rows of a ``results.jsonl`` (a run folder or the file). A torn line (an interrupted write) is
    skipped, or raises DataError when ``strict``; a repeated qid keeps its last row. ``skipped``, when
    given, receives the numbers of the lines that are no result row (torn, not JSON, no qid)."""
    p = results_path(path)
    rows: dict[str, ResultRow] = {}
    try:
        fh = p.open("rb")
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror or exc})", path=str(p)) from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:  # a line cut inside a UTF-8 character, binary junk, bad JSON: all torn lines
                row = parse_json(raw)
            except ValueError:
                if strict:
                    raise DataError(
                        "invalid JSON line (torn or not UTF-8)", path=str(p), line=lineno
                    ) from None
                row = None
            if (
                isinstance(row, dict)
                and isinstance(row.get("qid"), str | int)
                and not isinstance(row["qid"], bool)
            ):
                result = ResultRow.from_json(row)
                rows[result.qid] = result
            elif skipped is not None:
                skipped.append(lineno)
    return list(rows.values())


def _compared_rows(run: str | Path) -> dict[str, ResultRow]:
    """One run of :func:`compare_runs`, its rows by qid: a run without a row is a DataError naming the file
    (and its first line that is no row); lines that are no result row are skipped with one warning."""
    skipped: list[int] = []
    rows = {r.qid: r for r in read_results(run, skipped=skipped)}
    if not skipped and rows:
        return rows
    p, fix = str(results_path(run)), "pass a run written by `tkgqa eval`"
    if not skipped:
        raise DataError(f"the run has no rows to compare ({RESULTS_FILE} is empty); {fix}", path=p)
    more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
    what = f"line {skipped[0]}{more}: not a result row (torn, not JSON or without a qid)"
    if not rows:
        raise DataError(f"the run has no rows to compare ({what}); {fix}", path=p)
    warnings.warn(f"{p}: skipped {what}", stacklevel=3)
    return rows


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    """McNemar test of strict Hits@1 on the questions both runs answered (a run without a row is a
    DataError; lines that are no result row are skipped with a warning naming the file and line)."""
    a, b = _compared_rows(run_a), _compared_rows(run_b)
    common = [q for q in a if q in b]
    if not common:
        raise DataError(f"runs {str(run_a)!r} and {str(run_b)!r} share no question ids")
    hits_a = [a[q].strict_hit for q in common]
    hits_b = [b[q].strict_hit for q in common]
    test = mcnemar(hits_a, hits_b)
    return {
        "run_a": str(run_a),
        "run_b": str(run_b),
        "n_common": len(common),
        "only_in_a": len(a) - len(common),
        "only_in_b": len(b) - len(common),
        "a_strict_hits@1": sum(hits_a) / len(common),
        "b_strict_hits@1": sum(hits_b) / len(common),
        "mcnemar": test.to_dict(),
    }

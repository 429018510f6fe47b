"""``reproduce.md`` and the shared text forms of a cell (numbers in the paper's scale, the CI, the reason)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...markdown import md_code, md_row, md_text

HEADER = ("row", "column", "paper", "ours", "n", "95% CI", "model", "status", "reason / deviations")


def number(value: float | None, scale: str) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if scale == "percent" else f"{value:.3f}"


def interval(ci: Sequence[float] | None, scale: str) -> str:
    if not ci:
        return "—"
    return f"[{number(ci[0], scale)}, {number(ci[1], scale)}]"


def short_deviations(deviations: Sequence[str], limit: int = 4) -> str:
    """The settings in force that differ from the paper, by name (``name=value``); the rest counted."""
    names = [d.split(":", 1)[0] for d in deviations if not d.startswith(("warning:", "--limit"))]
    names = [n for n in names if "=" in n]
    more = len(names) - limit
    shown = ", ".join(names[:limit]) + (f", +{more}" if more > 0 else "")
    return f"deviations: {shown}" if shown else ""


def cell_texts(cell: Mapping[str, Any], run_ids: Mapping[str, str]) -> tuple[str, ...]:
    """One cell as the strings of :data:`HEADER`."""
    scale = cell["scale"]
    notes = [cell["reason"]] if cell["reason"] else []
    if cell["status"] != "n/a":
        dev = short_deviations(cell.get("deviations") or [])
        notes += [dev] if dev else []
        notes.append(f"run {run_ids.get(cell['run_dir'] or '', '?')}")
    return (
        cell["row"],
        cell["column"],
        number(cell["paper"], scale),
        number(cell["ours"], scale),
        str(cell["n"]) if cell["status"] != "n/a" else "—",
        interval(cell["ci"], scale),
        cell["model"] or "—",
        cell["status"],
        "; ".join(notes),
    )


def _md_row(values: Sequence[str]) -> str:
    return md_row(values)


def render_markdown(result: Mapping[str, Any]) -> str:
    """``reproduce.md``: one table per paper table, then each run with every deviation in force."""
    settings = result["settings"]
    run_ids = {r["run_dir"]: r["run_id"] for r in result["runs"]}
    lines = [
        "# Reproduce",
        "",
        f"{md_text(result['paper'])}: {md_text(result['title'])}.",
        "",
        f"Published numbers typed from {md_code('../shared/papers/' + result['source'])} (the paper's model: "
        f"{md_text(result['paper_model'])}). Ours: LLM {md_code(settings['llm'] or 'none')}, "
        f"limit {settings['limit'] or 'all'}"
        f"{' (stratified, seed ' + str(settings['seed']) + ')' if settings['limit'] else ''}, data root "
        f"{md_code(settings['data_root'])}. Status `bound`: no LLM (an upper bound or an offline reasoner), "
        "not an LLM accuracy; `n/a`: not measurable here, with the reason.",
        "",
    ]
    lines += [f"- {md_text(note)}" for note in result["notes"]]
    for table in settings["tables"]:
        cells = [c for c in result["cells"] if c["table"] == table]
        if not cells:
            continue
        metric = cells[0]["metric"]
        lines += [
            "",
            f"## {md_text(table)} ({md_text(metric)}, {md_text(cells[0]['scale'])})",
            "",
            _md_row(HEADER),
            _md_row(["---"] * len(HEADER)),
        ]
        lines += [_md_row(cell_texts(c, run_ids)) for c in cells]
    counts = {s: sum(1 for c in result["cells"] if c["status"] == s) for s in ("ran", "bound", "n/a")}
    lines += ["", f"Cells: {counts['ran']} ran, {counts['bound']} bound, {counts['n/a']} n/a."]
    if result["runs"]:
        lines += [
            "",
            "## Runs (each a `tkgqa eval` folder: it resumes; `tkgqa eval-compare` takes any two)",
            "",
        ]
    for run in result["runs"]:
        head = f"- {md_code(run['run_id'])}: {md_code(run['method'])} on {md_text(run['dataset'])}"
        head += f" as of {md_text(run['as_of'])}" if run["as_of"] else ""
        head += f", model {md_text(run['model'])}, n = {run['n']}, folder {md_code(run['run_dir'])}"
        lines.append(head + (f" — {md_text(run['error'])}" if run["error"] else ""))
        lines += [f"  - {md_text(d)}" for d in run["deviations"]]
    return "\n".join(lines) + "\n"


def render_estimates(estimates: Sequence[Mapping[str, Any]], method_note: str) -> str:
    """The dry run as a markdown table."""
    head = (
        "run",
        "method",
        "dataset",
        "cells",
        "questions",
        "LLM calls / q",
        "prompt tokens / q",
        "total prompt tokens",
        "note",
    )
    lines = [_md_row(head), _md_row(["---"] * len(head))]
    for e in estimates:
        lines.append(
            _md_row(
                (
                    e["run_id"], e["method"], e["dataset"], str(e["cells"]), str(e["questions"]),
                    f"{e['calls_per_question']:.1f}", f"{e['prompt_tokens_per_question']:.0f}",
                    f"{e['prompt_tokens']:.0f}", e["note"],
                )
            )
        )  # fmt: skip
    if not estimates:
        return "No run can start here: every cell is n/a (run without --dry-run to see each reason).\n"
    total = sum(e["prompt_tokens"] for e in estimates)
    lines += ["", f"Total: ~{total:,.0f} prompt tokens. How: {method_note}"]
    return "\n".join(lines) + "\n"

"""``reproduce.md`` and the shared text forms of a cell (numbers in the paper's scale, the CI, the reason).

The tables are written through a :class:`~tkgqa.markdown.Flavour`: :data:`~tkgqa.markdown.MARKDOWN` for
``reproduce.md`` (values escaped), :data:`~tkgqa.markdown.PLAIN` for the terminal (the same tables, values as
they are: a Markdown escape would show there as a backslash)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...markdown import MARKDOWN, Flavour
from .run import STATUSES

HEADER = ("row", "column", "paper", "ours", "n", "95% CI", "model", "status", "reason / deviations")
#: What each status means (``reproduce.md`` says it under each table, for the statuses the table has).
STATUS_MEANING = {
    "ran": "the paper's row with the paper's model family (or its recording, every call matched by its exact "
    "prompt) in the paper's setting, no error row",
    "ran-other-model": "ran without error, with another model than the paper's (the model column says which)",
    "ran-fake-llm": "ran without error with tkgqa's fake test LLM (canned replies, not a model): its number "
    "is no model's accuracy",
    "failed": "the run could not start or some questions ended in errors (how many, and the first error)",
    "reference": "an offline method of ours shown for orientation: not the paper's method, not an LLM "
    "accuracy",
    "bound": "a true upper bound (gold-guided search over the same action space), not an accuracy",
    "n/a": "not measurable here, with the reason",
}
#: How much of an n/a reason the one-line summary of a table's n/a cells shows (cut after a whole word).
NA_REASON_CHARS = 240


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


def clip_words(text: str, limit: int) -> str:
    """``text``, or as many of its words as fit in ``limit`` characters, then ``…`` (cut at a space, with a
    comma or semicolon left before it dropped; inside a word only when the first word alone is too long)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rfind(" ") if not text[limit - 1].isspace() else len(head)
    return (head[:cut] if cut > 0 else head).rstrip(" ,;:") + "…"


def status_counts(cells: Sequence[Mapping[str, Any]]) -> str:
    """The summary line: how many cells have each status."""
    counts = {s: sum(1 for c in cells if c["status"] == s) for s in STATUSES}
    return "Cells: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "."


def _na_summary(cells: Sequence[Mapping[str, Any]], flavour: Flavour) -> str:
    """The n/a cells of a table in one line: how many, by reason (without its parenthesised details, cut
    after :data:`NA_REASON_CHARS` at a word)."""
    groups: dict[str, int] = {}
    for c in cells:
        key = c["reason"]
        while (shorter := re.sub(r"\s*\([^()]*\)", "", key)) != key:
            key = shorter
        key = clip_words(" ".join(key.split()) or "no reason", NA_REASON_CHARS)
        groups[key] = groups.get(key, 0) + 1
    parts = [f"{flavour.text(why)} ({n})" for why, n in sorted(groups.items(), key=lambda kv: -kv[1])]
    return f"n/a: {len(cells)} cells — " + "; ".join(parts) + " (`--all` lists them)."


def render_markdown(result: Mapping[str, Any], *, all_cells: bool = True, flavour: Flavour = MARKDOWN) -> str:
    """``reproduce.md``: one table per paper table (results first), what its statuses mean, the summary
    line, the paper's notes, then each run with every deviation in force. ``all_cells=False`` lists only the
    cells that ran and summarises each table's n/a cells in one line; ``flavour=PLAIN``: for a terminal."""
    text, code, row = flavour.text, flavour.code, flavour.row
    settings = result["settings"]
    run_ids = {r["run_dir"]: r["run_id"] for r in result["runs"]}
    lines = [
        "# Reproduce",
        "",
        f"{text(result['paper'])}: {text(result['title'])}.",
        "",
        f"Published numbers typed from the paper's text {code(result['source'])} (in `../shared/papers/` "
        f"from the repository root; the paper's model: {text(result['paper_model'])}). "
        f"Ours: LLM {code(settings['llm'] or 'none')}, "
        f"limit {settings['limit'] or 'all'}"
        f"{' (stratified, seed ' + str(settings['seed']) + ')' if settings['limit'] else ''}, data root "
        f"{code(settings['data_root'])}.",
    ]
    for table in settings["tables"]:
        cells = [c for c in result["cells"] if c["table"] == table]
        if not cells:
            continue
        shown = cells if all_cells else [c for c in cells if c["status"] != "n/a"]
        hidden = [c for c in cells if c not in shown]
        metric, scale = text(cells[0]["metric"]), text(cells[0]["scale"])
        lines += ["", f"## {text(table)} ({metric}, {scale})", ""]
        if shown:
            lines += [row(HEADER), flavour.rule(len(HEADER))]
            lines += [row(cell_texts(c, run_ids)) for c in shown]
            lines.append("")
        if hidden:
            lines += [_na_summary(hidden, flavour), ""]
        present = [s for s in STATUSES if any(c["status"] == s for c in cells)]
        lines += [f"Status `{s}`: {STATUS_MEANING[s]}." for s in present]
    lines += ["", status_counts(result["cells"])]
    if result["notes"]:
        lines += ["", "Notes on the paper's tables:", ""]
        lines += [f"- {text(note)}" for note in result["notes"]]
    if result["runs"]:
        lines += [
            "",
            "## Runs (each a `tkgqa eval` folder: it resumes; `tkgqa eval-compare` takes any two)",
            "",
        ]
    for run in result["runs"]:
        head = f"- {code(run['run_id'])}: {code(run['method'])} on {text(run['dataset'])}"
        head += f" as of {text(run['as_of'])}" if run["as_of"] else ""
        head += f", model {text(run['model'])}, n = {run['n']}, folder {code(run['run_dir'])}"
        lines.append(head + (f" — {text(run['error'])}" if run["error"] else ""))
        lines += [f"  - {text(d)}" for d in run["deviations"]]
    return "\n".join(lines) + "\n"


def render_estimates(
    estimates: Sequence[Mapping[str, Any]], method_note: str, flavour: Flavour = MARKDOWN
) -> str:
    """The dry run as a markdown table (``flavour=PLAIN``: for a terminal)."""
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
    lines = [flavour.row(head), flavour.rule(len(head))]
    for e in estimates:
        lines.append(
            flavour.row(
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

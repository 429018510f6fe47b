"""CIK-LLM on MultiTQ, the paper's configuration vs our variants (``docs/cik_paper_vs_ours.md``): evidence
answer coverage, facts and prompt tokens of each pruning variant on the same retrieved evidence, and how
often path selection fails.

    .venv/bin/python bench/cik_variants.py [--limit N] [--output runs/cik_variants.json]

The relation paths come from the deterministic lexical policy (no LLM), as in ``tkgqa analyze coverage
--method cik``; its failures are the lexical policy's, not an LLM's. Retrieval and multi-hop truncation
run once per question (1-hop fallback on, so that both fallback settings can be read from it); each
variant then applies its time rule (``footnote`` = the paper's footnote 2, ``lifetime`` = ours, ``off``)
and its rule above δ2 (``none`` = the paper: no cut, ``hops`` = stage 1's rule with δ2, ``phi_t`` = ours),
with the fallback (ours) or without (the paper: an entity whose path fails contributes nothing). Coverage:
a gold answer among the final facts (:func:`tkgqa.query.coverage.answer_covered`). Tokens of the final
evidence: the paper's compressed form (``flat``: variables, times in every term, map included), our time
tree (``tree``) and uncompressed (``plain``), with :func:`tkgqa.llm.count_tokens`. Skips cleanly when
``../shared/data/multitq`` (or ``$TKGQA_SHARED_DATA/multitq``) is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean, median
from typing import Any

from tkgqa.datasets.core import load_dataset
from tkgqa.kg.loaders import load_kg
from tkgqa.llm.tokens import counter_name
from tkgqa.methods.cik import CIKMethod, render_compressed, render_plain
from tkgqa.query.coverage import answer_covered
from tkgqa.retrieval.temporal import parse_time_constraint

# (label, time rule, δ2 rule, fallback): the paper's preset first, ours last.
VARIANTS = [
    ("paper", "footnote", "none", False),
    ("paper + fallback", "footnote", "none", True),
    ("paper + lifetime window", "lifetime", "none", False),
    ("paper + δ2 hops", "footnote", "hops", False),
    ("paper + δ2 phi_t", "footnote", "phi_t", False),
    ("no time rule", "off", "none", False),
    ("ours (lifetime, phi_t, fallback)", "lifetime", "phi_t", True),
    ("ours with footnote rule", "footnote", "phi_t", True),
]
TOKEN_VARIANTS = {"paper", "paper + δ2 phi_t", "ours (lifetime, phi_t, fallback)", "ours with footnote rule"}


def shared_data() -> Path:
    env = os.environ.get("TKGQA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--output", default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    data = shared_data() / "multitq"
    if not data.exists():
        print(f"skipped: no MultiTQ data at {data} (set TKGQA_SHARED_DATA)")
        return 0
    ds = load_dataset("multitq", str(data))
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    assert ds.kg_path is not None
    kg = load_kg(ds.kg_path)
    base = CIKMethod(path_policy="lexical", time_pruning="off", delta2_rule="none", fallback=True)
    methods = {
        label: CIKMethod(path_policy="lexical", time_pruning=rule, delta2_rule=cap, fallback=fb)
        for label, rule, cap, fb in VARIANTS
    }
    stats: dict[str, dict[str, list[float]]] = {label: {} for label, *_ in VARIANTS}
    stages_stats: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    for q in questions:
        st = base.evidence(q, kg, use_llm=False)
        failed = set(st.path_failed)
        constraint = parse_time_constraint(q.text)
        row = stages_stats
        row.setdefault("entities", []).append(len(st.entities))
        row.setdefault("path_failed_some", []).append(bool(failed))
        row.setdefault("path_failed_all", []).append(bool(st.entities) and failed >= set(st.entities))
        row.setdefault("retrieved", []).append(len(st.retrieved))
        row.setdefault("truncated", []).append(len(st.truncated))
        row.setdefault("covered_retrieved", []).append(
            answer_covered(q.answers, [i.fact for i in st.retrieved], kg)
        )
        row.setdefault("covered_truncated", []).append(
            answer_covered(q.answers, [i.fact for i in st.truncated], kg)
        )
        for label, _, _, fallback in VARIANTS:
            m = methods[label]
            items = list(st.truncated) if fallback else [it for it in st.truncated if it.entity not in failed]
            time_pruned = m.time_prune(kg, list(st.entities), items)
            pruned = m.apply_delta2(time_pruned, constraint)
            s = stats[label]
            s.setdefault("time_pruned", []).append(len(time_pruned))
            s.setdefault("pruned", []).append(len(pruned))
            s.setdefault("over_delta2", []).append(len(pruned) > 30)
            s.setdefault("covered_time_pruned", []).append(
                answer_covered(q.answers, [i.fact for i in time_pruned], kg)
            )
            s.setdefault("covered", []).append(answer_covered(q.answers, [i.fact for i in pruned], kg))
            s.setdefault("no_evidence", []).append(not pruned)
            if label in TOKEN_VARIANTS and pruned:
                s.setdefault("tokens_flat", []).append(
                    render_compressed(pruned, kg, st.entities, elide_times=False).tokens()
                )
                s.setdefault("tokens_tree", []).append(render_compressed(pruned, kg, st.entities).tokens())
                s.setdefault("tokens_plain", []).append(render_plain(pruned, kg).tokens())
    elapsed = time.perf_counter() - t0
    out: dict[str, Any] = {
        "questions": len(questions),
        "seconds": round(elapsed, 1),
        "token_counter": counter_name(),
        "stages": {k: fmean(float(x) for x in v) for k, v in stages_stats.items()},
        "variants": {},
    }
    print(f"{len(questions)} MultiTQ questions in {elapsed:.0f}s; tokens: {counter_name()}")
    st_ = out["stages"]
    print(
        f"retrieved {st_['retrieved']:.0f} facts (coverage {st_['covered_retrieved']:.3f}) → truncated "
        f"{st_['truncated']:.0f} ({st_['covered_truncated']:.3f}); lexical path selection failed for some "
        f"entity in {st_['path_failed_some']:.3f}, for all in {st_['path_failed_all']:.3f} of the questions"
    )
    head = f"{'variant':34} {'time-pruned':>11} {'final':>7} {'median':>6} {'>δ2':>6} {'cov(tp)':>7}"
    print(head + f" {'coverage':>8} {'empty':>6} {'flat tok':>8} {'tree tok':>8} {'plain tok':>9}")
    for label, *_ in VARIANTS:
        s = stats[label]
        summary = {
            "time_pruned_mean": fmean(s["time_pruned"]),
            "pruned_mean": fmean(s["pruned"]),
            "pruned_median": median(s["pruned"]),
            "over_delta2": fmean(s["over_delta2"]),
            "coverage_time_pruned": fmean(s["covered_time_pruned"]),
            "coverage": fmean(s["covered"]),
            "no_evidence": fmean(s["no_evidence"]),
        }
        for k in ("tokens_flat", "tokens_tree", "tokens_plain"):
            if s.get(k):
                summary[k] = fmean(s[k])
        out["variants"][label] = summary
        tok = " ".join(
            f"{summary[k]:>8.0f}" if k in summary else f"{'':>8}" for k in ("tokens_flat", "tokens_tree")
        )
        plain = f"{summary['tokens_plain']:>9.0f}" if "tokens_plain" in summary else ""
        print(
            f"{label:34} {summary['time_pruned_mean']:>11.1f} {summary['pruned_mean']:>7.1f} "
            f"{summary['pruned_median']:>6.0f} {summary['over_delta2']:>6.3f} "
            f"{summary['coverage_time_pruned']:>7.3f} {summary['coverage']:>8.3f} "
            f"{summary['no_evidence']:>6.3f} {tok} {plain}"
        )
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

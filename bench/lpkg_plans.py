"""LPKG plan accuracy: planners on held-out generated questions (parse rate, shape accuracy per pattern,
executed exact-set match, plans/s), summaries of any ``tkgqa eval --method lpkg`` runs, and the questions
where two runs differ.

    # held-out generated questions (entity-disjoint from training), N per pattern, over the MultiTQ KG
    .venv/bin/python bench/lpkg_plans.py heldout --data runs/lpkg/data/heldout.full_partial.jsonl \\
        --kg ../shared/data/multitq/kg/full_partial.txt --per-pattern 10 --out runs/lpkg/heldout \\
        --planner random --planner finetuned:NAME --planner icl:llamacpp:smollm2 \\
        --demos runs/lpkg/data/train.jsonl
    # tables of existing runs (report.json method_metrics)
    .venv/bin/python bench/lpkg_plans.py summary runs/lpkg/clqa_finetuned runs/lpkg/mtq_finetuned
    # the same table recomputed from results.jsonl over the questions every run answered (paired)
    .venv/bin/python bench/lpkg_plans.py paired runs/lpkg/heldout/random runs/lpkg/heldout/finetuned_NAME \\
        runs/lpkg/heldout_icl/icl_llamacpp_smollm2
    # planner throughput (no LLM cache): plans/s, CPU seconds per plan, generated tokens/s
    .venv/bin/python bench/lpkg_plans.py throughput --planner NAME --data runs/lpkg/data/heldout.jsonl \\
        --n 20 --inference llamacpp --threads 2
    # where two runs differ (e.g. LPKG vs the symbolic reasoner on MultiTQ)
    .venv/bin/python bench/lpkg_plans.py diff runs/lpkg/mtq_finetuned runs/lpkg/mtq_symbolic --n 8
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from tkgqa.datasets.jsonl import read_jsonl_questions
from tkgqa.eval.report import read_results
from tkgqa.eval.runner import evaluate
from tkgqa.kg.loaders import load_kg
from tkgqa.methods import resolve_method
from tkgqa.methods.lpkg.metrics import plan_metrics


def planner_options(spec: str, demos: str | None, k: int, tokens: int, threads: int | None) -> dict[str, Any]:
    """``random`` | ``direct`` | ``finetuned:NAME`` | ``icl:LLM_SPEC`` → lpkg method options."""
    kind, _, rest = spec.partition(":")
    opts: dict[str, Any] = {"max_plan_tokens": tokens, "preset": "ours"}  # the offline reader (no --llm)
    if threads:
        opts["threads"] = threads
    if kind == "icl":
        llm: Any = rest
        if threads and rest.startswith("llamacpp:"):  # one thread: llama.cpp's spin-waits waste busy cores
            from tkgqa.llm import resolve_llm
            from tkgqa.llm.llamacpp_backend import LlamaCppBackend

            llm = resolve_llm(LlamaCppBackend(rest.partition(":")[2], n_threads=threads))
        opts.update(planner="icl", llm=llm, demos=demos, k=k)
    else:
        opts["planner"] = spec
    return opts


def select(data: str, per_pattern: int) -> list[Any]:
    """The first ``per_pattern`` questions of each pattern, in file order."""
    by_type: dict[str, list[Any]] = defaultdict(list)
    for q in read_jsonl_questions(Path(data)):
        if len(by_type[q.qtype or "?"]) < per_pattern:
            by_type[q.qtype or "?"].append(q)
    return [q for qs in by_type.values() for q in qs]


def heldout(args: argparse.Namespace) -> None:
    chosen = select(args.data, args.per_pattern)
    kg = load_kg(args.kg)
    runs = []
    for spec in args.planner:
        name = spec.replace(":", "_").replace("/", "_")
        method = resolve_method(
            "lpkg", **planner_options(spec, args.demos, args.k, args.max_plan_tokens, args.threads)
        )
        out = Path(args.out) / name
        evaluate(method, chosen, kg, out, progress=True)
        runs.append(out)
    summary(runs)


def _report(run: Path) -> dict[str, Any]:
    return json.loads((run / "report.json").read_text("utf-8"))


def summary(runs: list[Path]) -> None:
    reports = {r.name: _report(r) for r in runs}
    print(
        "| run | n | plan parse rate | fallback | plan shape accuracy | plan exact set | exact set (with "
        "fallback) | strict Hits@1 | plans/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rep in reports.items():
        m = rep.get("method_metrics") or {}
        shape = m.get("plan_shape_accuracy")
        pps = m.get("plans_per_second")
        print(
            f"| {name} | {rep['n']} | {m.get('plan_parse_rate', 0):.3f} | "
            f"{m.get('plan_fallback_rate', 0):.3f} | "
            f"{'' if shape is None else f'{shape:.3f}'} | {m.get('plan_exact_set', 0):.3f} | "
            f"{rep['metrics']['exact_set']:.3f} | "
            f"{rep['metrics']['strict_hits@1']:.3f} | {'' if pps is None else f'{pps:.2f}'} |"
        )
    types = sorted(
        {t for rep in reports.values() for t in (rep.get("method_metrics") or {}).get("per_type", {})}
    )
    if not types:
        return
    print("\nper question type: plan shape accuracy / plan exact set (n)")
    print("| type | " + " | ".join(reports) + " |")
    print("|---|" + "---|" * len(reports))
    for t in types:
        cells = []
        for rep in reports.values():
            e = (rep.get("method_metrics") or {}).get("per_type", {}).get(t)
            if e is None:
                cells.append("")
                continue
            shape = e["plan_shape_accuracy"]
            ex = e.get("plan_exact_set", e["exact_set"])
            cells.append(f"{'—' if shape is None else f'{shape:.2f}'} / {ex:.2f} ({e['n']})")
        print(f"| {t} | " + " | ".join(cells) + " |")


def paired(runs: list[Path], data: str | None = None, per_pattern: int | None = None) -> None:
    """Plan metrics recomputed from each run's rows, over the questions all runs answered (and, with
    ``data``/``per_pattern``, among the first ``per_pattern`` questions of each pattern there)."""
    rows = {r.name: {x.qid: x for x in read_results(r / "results.jsonl")} for r in runs}
    common = set.intersection(*(set(v) for v in rows.values()))
    if data is not None and per_pattern is not None:
        common &= {q.qid for q in select(data, per_pattern)}
    print(f"{len(common)} questions answered by every run")
    print("| run | n | plan parse rate | plan shape accuracy | plan exact set | exact set (with fallback) | "
          "strict Hits@1 | plans/s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    metrics = {}
    for name, by_qid in rows.items():
        sel = [by_qid[q] for q in sorted(common)]
        m = metrics[name] = plan_metrics(sel)
        shape = m.get("plan_shape_accuracy")
        pps = m.get("plans_per_second")
        exact = sum(r.exact_set for r in sel) / len(sel)
        hits = sum(r.strict_hit for r in sel) / len(sel)
        shape_s = "" if shape is None else f"{shape:.3f}"
        pps_s = "" if pps is None else f"{pps:.2f}"
        print(f"| {name} | {len(sel)} | {m['plan_parse_rate']:.3f} | {shape_s} | {m['plan_exact_set']:.3f} | "
              f"{exact:.3f} | {hits:.3f} | {pps_s} |")  # fmt: skip
    types = sorted({t for m in metrics.values() for t in m["per_type"]})
    print("\nper question type: plan shape accuracy / plan exact set (n)")
    print("| type | " + " | ".join(metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    for t in types:
        cells = []
        for m in metrics.values():
            e = m["per_type"].get(t)
            shape = None if e is None else e["plan_shape_accuracy"]
            cells.append("" if e is None else f"{'—' if shape is None else f'{shape:.2f}'} / "
                         f"{e['plan_exact_set']:.2f} ({e['n']})")  # fmt: skip
        print(f"| {t} | " + " | ".join(cells) + " |")


def throughput(args: argparse.Namespace) -> None:
    """Plans/s of a fine-tuned planner, uncached: one warm-up plan (model load), then ``n`` questions."""
    import time

    from tkgqa.llm import resolve_llm
    from tkgqa.llm.llamacpp_backend import LlamaCppBackend
    from tkgqa.methods.lpkg.planner import FinetunedPlanner, Inference

    questions = [q.text for q in read_jsonl_questions(Path(args.data))]
    questions = questions[:: max(1, len(questions) // (args.n + 1))][: args.n + 1]
    planner = FinetunedPlanner(args.planner, inference=args.inference, threads=args.threads,
                               max_tokens=args.max_plan_tokens, batch_size=args.batch_size)  # fmt: skip
    if planner.inference is Inference.LLAMACPP:
        gguf = planner.gguf_adapter()
        backend = LlamaCppBackend("smollm2", n_ctx=2048, n_threads=args.threads, lora_path=str(gguf))
        planner._llm = resolve_llm(backend, cache=False, log=False)
    t0, c0 = time.perf_counter(), time.process_time()
    planner.plan(questions[0])
    load_s = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    outs = planner.plan_many(questions[1:])
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    tokens = sum(o.usage.completion_tokens for o in outs)
    parsed = sum(o.plan is not None for o in outs)
    row = {
        "planner": planner.path.name, "inference": str(planner.inference), "threads": args.threads,
        "n": len(outs), "parsed": parsed, "load_and_first_plan_s": round(load_s, 1),
        "plans_per_s": round(len(outs) / wall, 3), "cpu_s_per_plan": round(cpu / len(outs), 2),
        "tokens_per_plan": round(tokens / len(outs), 1), "tokens_per_s": round(tokens / wall, 1),
        "startup_cpu_s": round(c1 - c0, 1),
    }  # fmt: skip
    print(json.dumps(row))


def diff(run_a: Path, run_b: Path, n: int) -> None:
    a = {r.qid: r for r in read_results(run_a / "results.jsonl")}
    b = {r.qid: r for r in read_results(run_b / "results.jsonl")}
    both = sorted(set(a) & set(b))
    only_a = [q for q in both if a[q].strict_hit and not b[q].strict_hit]
    only_b = [q for q in both if b[q].strict_hit and not a[q].strict_hit]
    print(
        f"{len(both)} paired questions: {run_a.name} right only {len(only_a)}, "
        f"{run_b.name} right only {len(only_b)}"
    )
    for label, qids, win, lose in ((run_a.name, only_a, a, b), (run_b.name, only_b, b, a)):
        print(f"\n### right only in {label}")
        for q in qids[:n]:
            steps = win[q].steps("plan") + lose[q].steps("plan")
            plan: dict[str, Any] = steps[0] if steps else {}
            print(f"- {win[q].question} gold={win[q].gold[:3]} {label}={win[q].predictions[:2]} "
                  f"other={lose[q].predictions[:2]} plan pattern={plan.get('pattern')}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("heldout")
    h.add_argument("--data", required=True)
    h.add_argument("--kg", required=True)
    h.add_argument("--planner", action="append", required=True)
    h.add_argument("--per-pattern", type=int, default=10)
    h.add_argument("--demos", default=None)
    h.add_argument("--k", type=int, default=4)
    h.add_argument("--max-plan-tokens", type=int, default=400)
    h.add_argument("--threads", type=int, default=None)
    h.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("runs", nargs="+", type=Path)
    t = sub.add_parser("throughput")
    t.add_argument("--planner", required=True)
    t.add_argument("--data", required=True)
    t.add_argument("--n", type=int, default=20)
    t.add_argument("--inference", default="llamacpp", choices=["llamacpp", "transformers"])
    t.add_argument("--threads", type=int, default=None)
    t.add_argument("--batch-size", type=int, default=8)
    t.add_argument("--max-plan-tokens", type=int, default=400)
    p = sub.add_parser("paired")
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--data", default=None, help="with --per-pattern: the held-out questions file")
    p.add_argument("--per-pattern", type=int, default=None)
    d = sub.add_parser("diff")
    d.add_argument("run_a", type=Path)
    d.add_argument("run_b", type=Path)
    d.add_argument("--n", type=int, default=8)
    args = ap.parse_args()
    if args.cmd == "heldout":
        heldout(args)
    elif args.cmd == "summary":
        summary(args.runs)
    elif args.cmd == "throughput":
        throughput(args)
    elif args.cmd == "paired":
        paired(args.runs, args.data, args.per_pattern)
    else:
        diff(args.run_a, args.run_b, args.n)


if __name__ == "__main__":
    main()

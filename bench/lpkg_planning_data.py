"""LPKG planning data from the KGs: pattern instances per pattern (yield within a fixed sampling budget) and
how often a template-verbalised gold plan, executed by the offline reader, returns the gold answers.

    .venv/bin/python bench/lpkg_planning_data.py --per-pattern 300 --check 30 --out runs/lpkg/bench_data.json

KGs: the MultiTQ KG (``../shared/data/multitq/kg/full_partial.txt``) and the Wikidata-labelled TimeQuestions
facts (``../shared/data/timequestions/kg/tkbc_valid_test_facts.tsv``; facts whose subject, relation and
object all have labels). ``per_pattern`` instances are wanted per pattern with ``attempts`` (80) tries per
wanted instance, so a count below ``per_pattern`` is what the KG yields within that budget.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tkgqa.kg.loaders import load_kg
from tkgqa.methods.lpkg.execute import KGSearch, PlanExecutor, SymbolicReader, final_labels
from tkgqa.methods.lpkg.verbalize import TemplateVerbalizer
from tkgqa.query import QuestionLinker, Reasoner
from tkgqa.query.generate.grounding import GroundingConfig, ground
from tkgqa.query.generate.patterns import PatternType

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
KGS = {
    "multitq": SHARED / "multitq" / "kg" / "full_partial.txt",
    "timequestions": SHARED / "timequestions" / "kg" / "tkbc_valid_test_facts.tsv",
}


def bench_kg(name: str, path: Path, per_pattern: int, check: int, seed: int) -> dict[str, Any]:
    kg = load_kg(path)
    t0 = time.perf_counter()
    result = ground(kg, GroundingConfig(per_pattern=per_pattern, seed=seed))
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {
        "kg": str(path),
        "facts": len(kg),
        "counts": result.counts,
        "attempts": result.attempts,
        "seconds": round(seconds, 1),
    }
    if check:
        reasoner, linker = Reasoner(), QuestionLinker()
        executor = PlanExecutor(KGSearch(reasoner, linker), SymbolicReader(reasoner), linker)
        verbalize = TemplateVerbalizer(kg, seed=seed)
        hits: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for inst in result.instances:
            p = str(inst.pattern)
            if total[p] >= check:
                continue
            v = verbalize(inst)
            gold = {a if inst.kind == "time" else kg.label(a) for a in inst.answers}
            got = set(final_labels(executor.run(v.plan, kg, v.question).answers, kg))
            total[p] += 1
            hits[p] += gold == got
        out["gold_plan_exact_set"] = {p: round(hits[p] / total[p], 3) for p in total}
        out["gold_plan_exact_set_all"] = round(sum(hits.values()) / max(1, sum(total.values())), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-pattern", type=int, default=300)
    ap.add_argument("--check", type=int, default=30, help="gold plans executed per pattern (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    results = {}
    for name, path in KGS.items():
        if not path.is_file():
            print(f"skipping {name}: {path} not found")
            continue
        results[name] = bench_kg(
            name, path, args.per_pattern, args.check if name == "multitq" else 0, args.seed
        )
    print(
        f"| pattern | {' | '.join(f'{n} instances (attempts)' for n in results)} "
        "| gold plan exact set (MultiTQ) |"
    )
    print("|---|" + "---|" * (len(results) + 1))
    for p in PatternType:
        cells = [f"{r['counts'][p.value]} ({r['attempts'][p.value]})" for r in results.values()]
        check = results.get("multitq", {}).get("gold_plan_exact_set", {}).get(p.value, "")
        print(f"| {p.value} | {' | '.join(cells)} | {check} |")
    for name, r in results.items():
        print(
            f"{name}: {r['facts']} facts, grounding {r['seconds']} s; "
            f"gold plans: {r.get('gold_plan_exact_set_all')}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

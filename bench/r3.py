"""R3 measured offline (issue #11): what can be measured without a real LLM, on the shared CR-LT-KGQA and
Recipe-MPR data, next to the R3 paper's numbers (reference only: they are GPT-3.5 on live Wikidata).

    .venv/bin/python bench/r3.py [--embedders minilm,model2vec,hashing] [--smollm2 N] [--out FILE.md]

Sections (every one on the *oracle-subgraph* KG: the union of the file's gold ``KG Triples``, since no
Wikidata is available offline — much smaller and cleaner neighbourhoods than R3's):

1. Entity extraction vs the gold ``KG Entities`` (paper Table 5): the KG linker alone (the shared question
   linker over the file's KG). A gold entity is found when an extracted KG entity has its label (normalised),
   or a near-identical one (rapidfuzz ratio ≥ 90: the files misspell some names, "Ilary Blast"). "LLM alone"
   and the union need an LLM (``--smollm2`` shows the tiny local model's, not R3's, extractor).
2. Pruning recall of the gold triples at equal k (Table 7's ablation): candidates = the 1-hop sub-graph of the
   gold anchor entities (and, synthetic, that plus 50 facts of other entries, shuffled); ranked by embedding
   similarity to the gold inference rule (the axiom R3 would surface: an *oracle axiom*) or to the question,
   vs truncation (the candidates' order); recall over the gold triples present among the candidates.
3. Reachability (Table 8's upper bound): an oracle expansion policy (each depth expands the one entity, among
   those mentioned by the facts retrieved so far, that brings the most missing gold triples) — the fraction
   of queries whose gold triples are all retrieved within depth 0/1/2/3, starting from the gold anchors or
   from the linker's entities; no pruning.
4. The automatic grounding score (the mechanical half of FActScore): the gold reasoning steps themselves (a
   check of the scorer: their cited triples should exist), and, with ``--smollm2 N``, every method's answers
   on N questions per set with SmolLM2-135M (the loop runs, parses, usage — never R3's accuracy).
5. Recipe-MPR (non-personalised, 350 shared queries): an embedding baseline (query ↔ option) and R3's
   offline scoring path (``judge=embedding``: options ranked by mean premise similarity; premises = the
   query, or the gold aspects as *oracle premises*), vs the published Recipe-MPR baselines and R3's Table 4
   (reference).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from tkgqa.datasets import load_dataset
from tkgqa.datasets.base import Question
from tkgqa.kg import Fact, KGStore
from tkgqa.kg.linking import normalize
from tkgqa.kg.loaders import load_kg
from tkgqa.methods.r3 import Ranker, grounding_of, grounding_score, render_fact, subgraph
from tkgqa.methods.r3.entities import EntityFinder
from tkgqa.methods.r3.facts import Direction
from tkgqa.methods.r3.grounding import Grounding, triple_exists, triples_in_text
from tkgqa.methods.r3.preference import score_options
from tkgqa.retrieval.embedders import resolve_embedder

SETS = (("crlt_qa", "CR-LT-QA.json", "QA"), ("crlt_claims", "CR-LT-ClaimVerification.json", "claims"))
KS = (1, 2, 3, 5, 10, 20)
PAPER = {
    "table5": "linker (ReFinED): QA 0.938 / 0.854, claims 0.974 / 0.986; LLM: QA 0.960 / 0.979, "
    "claims 0.928 / 0.986; union 1.00 (original / long-tail)",
    "table7": "accuracy with truncation instead of pruning: QA 0.527 / 0.480, claims 0.726 / 0.800; "
    "R3 0.820 / 0.727, 0.846 / 0.853",
    "table8": "accuracy by depth (long-tail): QA 0.473, 0.553, 0.727, 0.733; "
    "claims 0.620, 0.707, 0.853, 0.860",
    "table2": "FActScore (human): R3 0.97/0.96 (QA), 0.98/0.98 (claims); KAPING 0.74/0.59, 0.81/0.75; "
    "CoT 0.63-0.78",
    "mpr": "Recipe-MPR (Zhang et al. 2023, monolithic, 500 queries): GPT-3 zero-shot 73 %, few-shot 83 %; "
    "aspect-based GPT-3 zero-shot 68 %. R3 Table 4 (personalised, 100 queries + a 6th option): KAPING 44 %, "
    "R3 57 %",
}


def shared_data() -> Path:
    env = os.environ.get("TKGQA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# --- gold ---------------------------------------------------------------------------------------------
def gold_facts(q: Question, kg: KGStore) -> list[Fact]:
    out = []
    for d in q.extra["gold_facts"]:
        f = Fact.from_dict(d)
        if kg.facts(subject=f.subject, relation=f.relation, object=f.object, limit=1):
            out.append(f)
    return list(dict.fromkeys(out))


def matches(gold: str, names: Sequence[str], kg: KGStore) -> bool:
    g = normalize(gold)
    for n in names:
        label = normalize(kg.label(n))
        if label == g or fuzz.ratio(label, g) >= 90:
            return True
    return False


def gold_anchors(q: Question, kg: KGStore, finder: EntityFinder) -> list[str]:
    """The gold ``KG Entities`` as KG names (exact, else the linker's fuzzy name linking)."""
    out = []
    for surface in q.extra["gold_entities"]:
        e = finder.link_name(surface, kg)
        if e is not None and e not in out:
            out.append(e)
    return out


# --- 1. entity extraction -----------------------------------------------------------------------------
def entity_extraction(qs: Sequence[Question], kg: KGStore, finder: EntityFinder) -> dict[str, Any]:
    ok = n_gold = found = in_kg = 0
    for q in qs:
        names = finder.linked(q.text, kg)
        gold = list(q.extra["gold_entities"])
        hit = [matches(g, names, kg) for g in gold]
        ok += all(hit)
        n_gold += len(gold)
        found += sum(hit)
        in_kg += sum(matches(g, list(kg.entities), kg) for g in gold)
    return {
        "queries": len(qs),
        "success": ok / len(qs),
        "entity_recall": found / n_gold,
        "gold_in_kg": in_kg / n_gold,
    }


# --- 2. pruning recall ------------------------------------------------------------------------------------
def neighbourhood(kg: KGStore, anchors: list[str], distractors: int, seed: str) -> list[Fact]:
    """The paper's head-side 1-hop sub-graph; with ``distractors``, that many facts of other entries mixed in
    at random positions (a synthetic stand-in for Wikidata's large neighbourhoods, where truncation bites)."""
    own = subgraph(kg, anchors, Direction.HEAD)
    if not distractors:
        return own
    rng = random.Random(f"{seed}-{distractors}")
    mine = set(own)
    others = [f for f in kg if f not in mine]
    mixed = own + rng.sample(others, min(distractors, len(others)))
    rng.shuffle(mixed)
    return mixed


def pruning_recall(
    qs: Sequence[Question],
    kg: KGStore,
    finder: EntityFinder,
    rankers: dict[str, Ranker],
    distractors: int = 0,
) -> tuple[dict[str, dict[int, float]], dict[str, float]]:
    """``{variant: {k: mean recall}}`` over the queries with a gold triple among the candidates, and the
    candidate-set statistics."""
    sums: dict[str, dict[int, float]] = {}
    n = 0
    everything = (
        [render_fact(f, kg) for f in kg] + [q.text for q in qs] + [q.extra["inference_rule"] for q in qs]
    )
    for ranker in rankers.values():
        ranker.warm(everything)
    sizes = []
    for q in qs:
        anchors = gold_anchors(q, kg, finder)
        cands = neighbourhood(kg, anchors, distractors, q.qid)
        gold = set(gold_facts(q, kg)) & set(cands)
        if not gold:
            continue
        n += 1
        sizes.append(len(cands))
        texts = [render_fact(f, kg) for f in cands]
        orders: dict[str, list[int]] = {"truncation": list(range(len(cands)))}
        for name, ranker in rankers.items():
            orders[f"semantic:{name} (rule)"] = ranker.order(q.extra["inference_rule"], texts)
            orders[f"semantic:{name} (question)"] = ranker.order(q.text, texts)
        for variant, order in orders.items():
            row = sums.setdefault(variant, dict.fromkeys(KS, 0.0))
            for k in KS:
                row[k] += len({cands[i] for i in order[:k]} & gold) / len(gold)
    stats = {
        "queries": n,
        "mean_candidates": sum(sizes) / n if n else 0.0,
        "share_over_10": sum(s > 10 for s in sizes) / n if n else 0.0,
        "max_candidates": max(sizes, default=0),
    }
    return {v: {k: s / n for k, s in row.items()} for v, row in sums.items()}, stats


# --- 3. reachability ----------------------------------------------------------------------------------------
def mentioned(f: Fact) -> list[str]:
    """Entities a retrieved fact lets the policy expand: its subject, object and entity-valued qualifiers."""
    from tkgqa.kg.crlt import split_relation

    return [f.subject, f.object, *(q.value for q in split_relation(f.relation)[1])]


def reachability(
    qs: Sequence[Question],
    kg: KGStore,
    starts: Callable[[Question], list[str]],
    direction: Direction,
    depths: int = 3,
) -> list[float]:
    """Fraction of queries (with gold triples in the KG) fully retrieved within depth 0..``depths``."""
    done = [0] * (depths + 1)
    n = 0
    for q in qs:
        gold = set(gold_facts(q, kg))
        if not gold:
            continue
        n += 1
        expanded = list(dict.fromkeys(starts(q)))
        got = set(subgraph(kg, expanded, direction))
        for d in range(depths + 1):
            if gold <= got:
                for j in range(d, depths + 1):
                    done[j] += 1
                break
            if d == depths:
                break
            options = [e for f in got for e in mentioned(f) if kg.has_entity(e) and e not in expanded]
            if not options:
                break
            best = max(
                dict.fromkeys(options), key=lambda e: len((set(subgraph(kg, [e], direction)) - got) & gold)
            )
            expanded.append(best)
            got |= set(subgraph(kg, [best], direction))
    return [x / n for x in done] if n else []


# --- 4. grounding of the gold reasoning ---------------------------------------------------------------
def gold_reasoning_grounding(qs: Sequence[Question], kg: KGStore) -> dict[str, float]:
    gs = []
    for q in qs:
        cited = [t for s in q.extra["reasoning_steps"] for f in s["facts"] for t in triples_in_text(f)]
        existing = sum(triple_exists(kg, *t) for t in cited)
        gs.append(Grounding(True, len(cited), existing, "text"))
    return grounding_score(gs)


def smollm2_runs(qs: Sequence[Question], kg: KGStore, n: int, n_r3: int) -> list[dict[str, Any]]:
    """Every method on the first ``n`` questions with SmolLM2-135M: errors, parse failures, grounding."""
    from tkgqa.llm import resolve_llm
    from tkgqa.methods import resolve_method

    llm = resolve_llm("llamacpp:smollm2")
    rows = []
    small: dict[str, Any] = {"max_tokens": 160, "retries": 0}  # a 135M model on 2 CPU cores: keep it short
    for name, opts in (
        ("r3", {**small, "embedder": "minilm", "breadth": 1, "max_depth": 1, "grounding_retries": 1}),
        ("kaping", {**small, "embedder": "minilm"}),
        ("cot0", small),
        ("cot2", small),
    ):
        method = resolve_method(name, llm=llm, **opts)
        gs, errors, t0 = [], [], time.perf_counter()
        usage = {"llm_calls": 0.0, "parse_failures": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0}
        count = min(n, n_r3) if name == "r3" else n
        for q in qs[:count]:
            try:
                a = method.answer(q, kg)
            except Exception as exc:  # reported, not hidden
                errors.append(f"{q.qid}: {type(exc).__name__}: {exc}"[:200])
                continue
            gs.append(grounding_of(a, kg))
            for k in usage:
                usage[k] += float(a.usage.get(k, 0))
        done = max(len(gs), 1)
        rows.append(
            {
                "method": name,
                "questions": min(count, len(qs)),
                "errors": errors,
                **{f"{k}/q": v / done for k, v in usage.items()},
                **grounding_score(gs),
                "seconds": time.perf_counter() - t0,
            }
        )
    return rows


# --- 5. Recipe-MPR -----------------------------------------------------------------------------------------
def recipe_mpr(qs: Sequence[Question], rankers: dict[str, Ranker]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    texts = [t for q in qs for t in (q.text, *(o["text"] for o in q.extra["options"]), *q.extra["aspects"])]
    for name, ranker in rankers.items():
        ranker.warm([t.strip() for t in texts])
        hits = {
            "baseline: query ↔ option": 0,
            "R3 scoring: premise = query": 0,
            "R3 scoring: oracle aspects": 0,
        }
        for q in qs:
            options = [o["text"] for o in q.extra["options"]]
            gold = q.answers[0]
            base = ranker.scores(q.text, options)
            hits["baseline: query ↔ option"] += (
                options[max(range(len(options)), key=lambda i: base[i])] == gold
            )
            for key, premises in (
                ("R3 scoring: premise = query", [q.text]),
                ("R3 scoring: oracle aspects", [a.strip() for a in q.extra["aspects"]] or [q.text]),
            ):
                scores = score_options(premises, options, ranker)
                means = [sum(s) / len(s) for s in scores]
                hits[key] += options[max(range(len(options)), key=lambda i: means[i])] == gold
        out[name] = {k: v / len(qs) for k, v in hits.items()}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--embedders", default="minilm,model2vec,hashing")
    ap.add_argument(
        "--smollm2", type=int, default=0, help="run every method on N questions per set with SmolLM2"
    )
    ap.add_argument(
        "--smollm2-r3", type=int, default=1, help="R3's share of --smollm2 (it makes ~8 calls each)"
    )
    ap.add_argument("--out", default="/tmp/r3_results.md")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    data = shared_data()
    if not (data / "crlt_kgqa").is_dir():
        print(f"skipped: no CR-LT-KGQA data at {data / 'crlt_kgqa'} (set TKGQA_SHARED_DATA)")
        return 0
    started = time.perf_counter()
    rankers = {name: Ranker(resolve_embedder(name)) for name in args.embedders.split(",") if name}
    finder = EntityFinder(max_entities=6)
    md = ["## R3 (issue #11) — offline measurements, oracle-subgraph KG", ""]
    md.append(
        f"`{' '.join(['.venv/bin/python bench/r3.py', *(argv or sys.argv[1:])])}`; every number below is "
        "on the union of the file's gold triples (no Wikidata offline); paper numbers are reference only."
    )
    for dataset, filename, label in SETS:
        qs = load_dataset(dataset, data / "crlt_kgqa").questions
        kg = load_kg(data / "crlt_kgqa" / filename)
        md += ["", f"### {label} ({len(qs)} queries; KG {len(kg)} facts, {len(kg.entities)} entities)", ""]
        ee = entity_extraction(qs, kg, finder)
        md += [
            "**Entity extraction** (Table 5): linker alone — all gold entities found in "
            f"{pct(ee['success'])} of queries; {pct(ee['entity_recall'])} of gold entities; "
            f"{pct(ee['gold_in_kg'])} of gold entities are KG entities at all (the ceiling). LLM alone and "
            "the "
            f"union need an LLM. Paper: {PAPER['table5']}.",
            "",
        ]
        variants = (
            (0, "the 1-hop sub-graph (head side) of the gold anchors, as R3"),
            (50, "the same plus 50 facts of other entries, shuffled (synthetic distractors)"),
        )
        for noise, what in variants:
            recall, stats = pruning_recall(qs, kg, finder, rankers, noise)
            md += [
                f"**Pruning recall of the gold triples at equal k**, candidates = {what} (Table 7's "
                "ablation; "
                f"{stats['queries']} queries, {stats['mean_candidates']:.1f} candidate facts on average, "
                f"{pct(stats['share_over_10'])} with more than 10, at most {stats['max_candidates']}):",
                "",
                "| ranking | " + " | ".join(f"k={k}" for k in KS) + " |",
                "|---|" + "---|" * len(KS),
            ]
            md += [f"| {v} | " + " | ".join(f"{r[k]:.3f}" for k in KS) + " |" for v, r in recall.items()]
            md.append("")
        md += [f"Paper (accuracy, not recall): {PAPER['table7']}.", ""]
        md += [
            "**Reachability with an oracle expansion policy** (all gold triples retrieved; "
            "Table 8's upper bound):",
            "",
        ]
        md += ["| start | direction | depth 0 | depth 1 | depth 2 | depth 3 |", "|---|---|---|---|---|---|"]
        for start_name, start in (
            ("gold anchors", lambda q, kg=kg: gold_anchors(q, kg, finder)),
            ("linker", lambda q, kg=kg: finder.linked(q.text, kg)),
        ):
            for direction in (Direction.HEAD, Direction.BOTH):
                r = reachability(qs, kg, start, direction)
                md.append(f"| {start_name} | {direction} | " + " | ".join(f"{x:.3f}" for x in r) + " |")
        md += ["", f"Paper (R3 accuracy by depth): {PAPER['table8']}.", ""]
        g = gold_reasoning_grounding(qs, kg)
        md += [
            f"**Grounding score of the gold reasoning steps** (scorer check): {g['grounded']}/{g['n']} "
            f"({pct(g['score_all'])}) cite only existing triples and at least one.",
            "",
        ]
        if args.smollm2:
            md += [
                f"**SmolLM2-135M, first {args.smollm2} queries ({args.smollm2_r3} for R3)** (the loop runs, "
                "parses survive, usage recorded; never R3's accuracy):",
                "",
            ]
            md += [
                "| method | errors | LLM calls/q | parse failures/q | tokens/q | answered | grounded | s |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for row in smollm2_runs(qs, kg, args.smollm2, args.smollm2_r3):
                tokens = row["prompt_tokens/q"] + row["completion_tokens/q"]
                md.append(
                    f"| {row['method']} | {len(row['errors'])} | {row['llm_calls/q']:.1f} | "
                    f"{row['parse_failures/q']:.1f} | {tokens:.0f} | {row['answered']}/{row['questions']} | "
                    f"{row['grounded']}/{row['answered']} | {row['seconds']:.0f} |"
                )
                md += [f"  - error: {e}" for e in row["errors"][:3]]
            md.append("")
    mpr_dir = data / "recipe_mpr"
    if mpr_dir.is_dir():
        qs = load_dataset("recipe_mpr", mpr_dir).questions
        res = recipe_mpr(qs, rankers)
        md += ["", f"### Recipe-MPR, non-personalised ({len(qs)} queries, 5 options, chance 20 %)", ""]
        md += ["| embedder | " + " | ".join(next(iter(res.values()))) + " |", "|---|---|---|---|"]
        md += [f"| {name} | " + " | ".join(pct(v) for v in row.values()) + " |" for name, row in res.items()]
        md += [
            "",
            f"Reference: {PAPER['mpr']}. The personalised items are unpublished; our five hand-written "
            "examples (`--data-dir personal_kg`) exercise that path in the tests.",
            "",
        ]
    md.append(f"_{time.perf_counter() - started:.0f} s on this machine._")
    text = "\n".join(md) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

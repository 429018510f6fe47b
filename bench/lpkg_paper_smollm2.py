"""LPKG's paper preset on a few CLQA-Wiki questions with SmolLM2-135M: a pipeline check (SmolLM2 cannot plan
or reason), never LPKG's accuracy. Phase 1 plans every question with the method's own in-context planner, so
llama.cpp keeps the official prompt's shared prefix (~4.7k tokens) in its KV cache between questions and the
replies land in the LLM cache; phase 2 evaluates the method, whose planning calls are then cache hits.

    .venv/bin/python bench/lpkg_paper_smollm2.py 2p,2i,compare \\
        ../shared/data/llm_recordings/lpkg_official_planning_prompt.json runs/lpkg/clqa_paper_smollm2
    .venv/bin/python bench/lpkg_paper_smollm2.py 2p,2i,compare random runs/lpkg/clqa_paper_smollm2_random

Arguments: CLQA types (the first question of each), demonstrations (the authors' prompt file, a planning-data
JSONL, or ``random`` for the baseline planner), output folder.
"""

from __future__ import annotations

import json
import sys
import time

from tkgqa.datasets import load_dataset
from tkgqa.eval.runner import evaluate
from tkgqa.llm import resolve_llm
from tkgqa.llm.llamacpp_backend import LlamaCppBackend
from tkgqa.methods.lpkg import LPKGMethod


def main(types: list[str], demos: str, out: str, data: str = "../shared/data/clqa_wiki") -> None:
    llm = resolve_llm(LlamaCppBackend("smollm2", n_ctx=8192, n_threads=1))
    ds = load_dataset("clqa", data)
    qs = [next(q for q in ds.questions if q.qtype == t) for t in types]
    method = LPKGMethod(llm=llm, planner="random") if demos == "random" else LPKGMethod(llm=llm, demos=demos)
    t0 = time.time()
    for q in qs:
        p = method.planner.plan(q.text)
        print(f"planned {q.qid} {q.qtype} in {time.time() - t0:.0f}s parsed={p.plan is not None}", flush=True)
    rep = evaluate(method, qs, None, out, progress=False)
    keys = ("plan_parse_rate", "plan_fallback_rate", "plan_shape_accuracy")
    print(json.dumps({
        "n": rep.n, "wall_s": round(time.time() - t0, 1), "metrics": rep.metrics, "usage": rep.usage,
        "method_metrics": {k: rep.method_metrics.get(k) for k in keys}, "preset": rep.method["preset"],
        "deviations": rep.method["deviations"], "errors": rep.errors,
    }, indent=1, default=str))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1].split(","), sys.argv[2], sys.argv[3], *sys.argv[4:5])

"""Instruction-tuning data for TimeR4's reasoning LLM (§4.6, Eq. 11): one JSONL row per question with the
Figure 6 prompt built from the retrieved (and reranked) facts, and the gold answers as the target.

Rows: ``{"qid", "question", "rewritten_question", "facts", "prompt", "answer", "answers"}`` where ``answer``
is the target text (a JSON list, what the model should output) and ``prompt`` the full user message. The
LoRA recipe that consumes it is in ``docs/timer4_lora.md``. Only train/dev questions may be exported
(``split``), so that no test question leaks into fine-tuning; ``allow_test=True`` overrides this for
inspection only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ...datasets.base import Question
from ...errors import ConfigError
from ...kg import KGStore
from ...retrieval.training import TRAIN_SPLITS
from .method import TimeR4Method
from .prompts import reason_text


@dataclass(frozen=True)
class ExportReport:
    path: Path
    rows: int
    rewritten: int
    skipped: int


def export_instruction_data(
    questions: Iterable[Question],
    kg: KGStore | Callable[[Question], KGStore],
    path: str | Path,
    *,
    split: str,
    method: TimeR4Method | None = None,
    allow_test: bool = False,
) -> ExportReport:
    """Write the JSONL; ``kg`` is one store or ``question → store`` (per-question contexts). ``method``
    decides retrieval and rewriting (the LLM's with an LLM, else the offline KG rewrite); default:
    ``TimeR4Method()`` without an LLM."""
    if split.strip().lower() not in TRAIN_SPLITS and not allow_test:
        raise ConfigError(
            f"instruction data must come from a train/dev split, got split={split!r}; never fine-tune on test"
        )
    method = method or TimeR4Method()
    cfg = method.config
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = rewritten = skipped = 0
    with out.open("w", encoding="utf-8") as fh:
        for q in questions:
            store = kg(q) if callable(kg) else kg
            if not q.answers or not len(store):
                skipped += 1
                continue
            ids = method.scope(q, store)[0]
            outcome = method.rewrite(q, method.rewrite_facts(q, store, ids), store)
            query = outcome.text
            stages = method.retrieve(
                q,
                store,
                rewritten=query if outcome.rewritten else None,
                k=cfg.top_k,
                time_constraint=outcome.constraint,
            )
            ranked = stages.tks_rerank if cfg.rerank else stages.tks
            facts = [s.text for s in ranked[: cfg.top_k]]
            row = {
                "qid": q.qid,
                "question": q.text,
                "rewritten_question": query,
                "facts": facts,
                "prompt": reason_text(query, facts),
                "answer": json.dumps(list(q.answers), ensure_ascii=False),
                "answers": list(q.answers),
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows += 1
            rewritten += query != q.text
    return ExportReport(out, rows, rewritten, skipped)

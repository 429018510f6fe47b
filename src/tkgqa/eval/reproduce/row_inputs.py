"""What an LLM row is given as the paper gave it: ICL-LPKG the authors' planning prompt as its
demonstrations, and ARI its history memory — built as the paper does (§3.3, Algorithm 1): ARI without guidance
answers *training/dev* questions with the same LLM, the processes are clustered and the methodologies
induced by that LLM — never from the test questions evaluated. Without such questions under the data root
an ARI cell that needs the memory is n/a: without it "ARI" is ARI without abstract guidance, and the
no-clustering / no-incorrect ablations change nothing.
"""

from __future__ import annotations

from pathlib import Path

from ...datasets import load_dataset
from ...datasets.sampling import sample_questions
from ...errors import ConfigError
from .data import LPKG_PLANNING_PROMPT, dataset_dir, lpkg_planning_prompt
from .models import split_spec
from .spec import Column, PaperRow

#: The splits a history memory may come from, in the order they are tried (never ``test``).
HISTORY_SPLITS = ("train", "dev", "valid")
#: History questions per memory (a stratified sample by question type, as ``tkgqa ari build-memory``).
HISTORY_QUESTIONS = 200
#: The methodology variants the table rows use: (clustered, with incorrect examples) — ARI, w/o History
#: Cluster, w/o Incorrect Examples.
VARIANTS = ((True, True), (False, True), (True, False))
MEMORY_SEED = 0


def needs_memory(method: str) -> bool:
    """Whether the ARI row spec ``method`` uses the history memory: the LLM policy with guidance on (every
    ARI row but ``no_guidance=true``; the ablations of clustering and incorrect examples act only on it)."""
    name, options = split_spec(method)
    if name != "ari" or options.get("no_guidance") == "true":
        return False
    return options.get("policy", options.get("", "llm")) == "llm"


def history_split(root: Path, dataset: str) -> str | None:
    """The first split of :data:`HISTORY_SPLITS` whose questions are under ``root`` for ``dataset``."""
    folder = dataset_dir(root, dataset)
    for split in HISTORY_SPLITS:
        names = (f"questions/{split}.json", f"questions/{split}.pickle", f"{split}.json", f"{split}.jsonl")
        if any((folder / name).is_file() for name in names):
            return split
    return None


def memory_reason(row: PaperRow, column: Column, root: Path | None) -> str | None:
    """Why the ARI cell ``row``/``column`` cannot run as the paper did (no history questions for its
    memory); ``None`` when it needs no memory or one can be built."""
    if row.method is None or not needs_memory(row.method) or root is None:
        return None
    if history_split(root, column.dataset) is not None:
        return None
    return (
        f"ARI needs its history memory, built from training/dev questions with the same LLM (§3.3); the data "
        f"root has no {column.dataset} train/dev questions ({'/'.join(HISTORY_SPLITS)}), and a memory from "
        "the test questions would leak into the evaluation"
    )


def is_icl_lpkg(method: str) -> bool:
    name, options = split_spec(method)
    return name == "lpkg" and options.get("planner", options.get("", "icl")) == "icl"


def inputs_reason(row: PaperRow, column: Column, root: Path | None) -> str | None:
    """Why an LLM cell cannot be given what the paper gave it: ARI's history memory
    (:func:`memory_reason`), ICL-LPKG's planning demonstrations (the authors' planning prompt)."""
    reason = memory_reason(row, column, root)
    icl = row.method is not None and is_icl_lpkg(row.method)
    if reason is None and icl and root is not None and lpkg_planning_prompt(root) is None:
        return (
            "ICL-LPKG plans with the authors' planning prompt (its 10 demonstrations, Appendix C.2); it is "
            f"not under the data root ({LPKG_PLANNING_PROMPT.as_posix()})"
        )
    return reason


def memory_path(output: Path, dataset: str) -> Path:
    return output / f"ari-memory-{dataset}.json"


def build_history_memory(root: Path, dataset: str, llm: str, output: Path) -> Path:
    """Build (or reuse, when already in ``output``) the ARI memory of ``dataset`` from its history split with
    ``llm``; the JSON's path (passed to the ARI runs as ``memory=``)."""
    from ...kg.loaders import load_kg
    from ...methods.ari import ARIMethod, build_memory, check_history_split

    path = memory_path(output, dataset)
    if path.is_file():
        return path
    split = history_split(root, dataset)
    if split is None:
        raise ConfigError(f"no {dataset} train/dev questions under {root} to build ARI's memory from")
    check_history_split(split)
    ds = load_dataset(dataset, dataset_dir(root, dataset), split=split)
    history = sample_questions([q for q in ds.questions if q.answers], HISTORY_QUESTIONS, seed=MEMORY_SEED)
    if ds.kg_path is None:
        raise ConfigError(f"no KG file for {dataset} under {root}: ARI's memory needs one")
    method = ARIMethod(llm=llm, no_guidance=True, seed=MEMORY_SEED)
    memory, _ = build_memory(
        history,
        load_kg(ds.kg_path),
        method,
        per_kind=method.config.examples_per_kind,
        induce_with=method.llm,
        variants=VARIANTS,
        meta={"dataset": dataset, "n": len(history), "llm": llm, "built_by": "tkgqa reproduce"},
        split=split,
    )
    output.mkdir(parents=True, exist_ok=True)
    memory.save(path)
    return path

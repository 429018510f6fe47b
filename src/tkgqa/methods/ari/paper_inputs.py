"""What ARI is given in a paper row (:mod:`tkgqa.methods.paper_inputs`): its history memory, built as the
paper does (§3.3, Algorithm 1) — ARI without guidance answers *training/dev* questions with the same LLM, the
processes are clustered and the methodologies induced by that LLM — never from the test questions evaluated.
Without such questions under the data root an ARI cell that needs the memory is n/a: without it "ARI" is ARI
without abstract guidance, and the no-clustering / no-incorrect ablations change nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...errors import ConfigError, TKGQAError
from ..paper_inputs import InputsRequest, PaperInputs
from .variants import MemoryVariant

#: The splits a history memory may come from, in the order they are tried (never ``test``).
HISTORY_SPLITS = ("train", "dev", "valid")
#: History questions per memory (a stratified sample by question type, as ``tkgqa ari build-memory``).
HISTORY_QUESTIONS = 200
#: The methodology variants the table rows use: ARI, w/o History Cluster, w/o Incorrect Examples.
VARIANTS = (MemoryVariant.CLUSTERED, MemoryVariant.GLOBAL, MemoryVariant.CLUSTERED_CORRECT_ONLY)
MEMORY_SEED = 0


def needs_memory(options: Mapping[str, str]) -> bool:
    """Whether an ARI row with ``options`` uses the history memory: the LLM policy with guidance on (every
    ARI row but ``no_guidance=true``; the ablations of clustering and incorrect examples act only on it)."""
    if options.get("no_guidance") == "true":
        return False
    return options.get("policy", options.get("", "llm")) == "llm"


def history_split(folder: Path) -> str | None:
    """The first split of :data:`HISTORY_SPLITS` whose questions are in the dataset folder ``folder``."""
    for split in HISTORY_SPLITS:
        names = (f"questions/{split}.json", f"questions/{split}.pickle", f"{split}.json", f"{split}.jsonl")
        if any((folder / name).is_file() for name in names):
            return split
    return None


def missing(request: InputsRequest) -> str | None:
    """Why the ARI cell cannot run as the paper did (no history questions for its memory); ``None`` when it
    needs no memory or one can be built."""
    if not needs_memory(request.options) or history_split(request.dataset_dir) is not None:
        return None
    return (
        f"ARI needs its history memory, built from training/dev questions with the same LLM (§3.3); the data "
        f"root has no {request.dataset} train/dev questions ({'/'.join(HISTORY_SPLITS)}), and a memory from "
        "the test questions would leak into the evaluation"
    )


def memory_path(output: Path, dataset: str) -> Path:
    return output / f"ari-memory-{dataset}.json"


def build_history_memory(request: InputsRequest, llm: str, output: Path) -> Path:
    """Build (or reuse, when already in ``output``) the ARI memory of the request's dataset from its history
    split with ``llm``; the JSON's path (passed to the ARI runs as ``memory=``)."""
    from ...datasets import load_dataset
    from ...datasets.sampling import sample_questions
    from ...kg.loaders import load_kg
    from .build import build_memory, check_history_split
    from .method import ARIMethod

    dataset, root = request.dataset, request.root
    path = memory_path(output, dataset)
    if path.is_file():
        return path
    split = history_split(request.dataset_dir)
    if split is None:
        raise ConfigError(f"no {dataset} train/dev questions under {root} to build ARI's memory from")
    check_history_split(split)
    ds = load_dataset(dataset, request.dataset_dir, split=split)
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


def prepare(request: InputsRequest) -> dict[str, object]:
    """``{"memory": path}`` for a run that uses the history memory (built first, once per dataset, kept in
    the output folder); nothing without an LLM."""
    if not request.llm or not needs_memory(request.options):
        return {}
    try:
        if request.output is None:
            raise ConfigError("no output folder to keep it in")
        path = build_history_memory(request, request.llm, request.output)
    except (TKGQAError, ImportError) as exc:
        raise ConfigError(f"could not build ARI's history memory: {exc}") from exc
    return {"memory": str(path)}


PAPER_INPUTS = PaperInputs(missing=missing, prepare=prepare)

"""``tkgqa reproduce --dry-run``: what each run would cost, in seconds, without a model.

Each LLM run is answered on its first few sampled questions by the fake LLM, with the prompts built by the
method itself, over a *neighbourhood KG*: the facts of the KG file that name one of those questions'
entities or the capitalised names in their text (read line by line, at most :data:`NEIGHBOURHOOD_FACTS`; a
KG file under :data:`SMALL_KG_BYTES` is used whole), and with the hashing embedder in every embedder setting
of the method's config (:func:`offline_options`: ``embedder``, ``tks_embedder``… of any method, ARI's
``cot_kb`` and ``react_kb`` included) — so no full-KG load, no embedding of the KG and no model is loaded. A
model that loads all the same (:mod:`tkgqa.loading` tells) is named in that run's note. Tokens are counted
offline; calls and prompt tokens per question × the questions of the run give the estimate.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...datasets.base import Question
from ...datasets.core import Dataset
from ...datasets.sampling import select_questions
from ...errors import TKGQAError
from ...kg.base import KGStore
from ...loading import Loading, add_listener
from ..runner import evaluate
from .row_inputs import inputs_reason
from .run import SAMPLE, SEED, MethodOptions, RunKey, build, open_dataset, plan_cells, runs_of
from .spec import load_paper, select_tables

#: The LLM a dry run builds the prompts with (scripted replies, offline token counts; never a real model).
DRY_RUN_LLM = "fake"
DRY_RUN_QUESTIONS = 3
#: At most this many facts of the KG file around the sampled questions' entities.
NEIGHBOURHOOD_FACTS = 3000
#: A KG file smaller than this is used whole.
SMALL_KG_BYTES = 2_000_000
#: The embedder a dry run puts in every embedder setting (no dependency, no model).
DRY_RUN_EMBEDDER = "hashing"


def offline_options(method: str) -> dict[str, Any]:
    """The settings that keep ``method`` (a registered name) free of neural models in a dry run: each field
    of its config class named ``embedder`` or ``*_embedder``, set to :data:`DRY_RUN_EMBEDDER`."""
    from ...methods.base import METHODS
    from ...methods.client import config_class_of

    config = config_class_of(METHODS.factory(method))
    fields = config.model_fields if config is not None else {}
    return {name: DRY_RUN_EMBEDDER for name in fields if name == "embedder" or name.endswith("_embedder")}


@dataclass(frozen=True)
class Estimate:
    """A run's estimated cost: per question from a fake-LLM run on a few questions, times the questions."""

    run_id: str
    method: str
    dataset: str
    cells: int
    llm: bool
    questions: int  # how many the run would evaluate
    sampled: int  # how many the estimate ran
    calls_per_question: float = 0.0
    prompt_tokens_per_question: float = 0.0
    completion_tokens_per_question: float = 0.0
    note: str = ""

    @property
    def prompt_tokens(self) -> float:
        return self.prompt_tokens_per_question * self.questions

    @property
    def calls(self) -> float:
        return self.calls_per_question * self.questions

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "calls": self.calls, "prompt_tokens": self.prompt_tokens}


ESTIMATE_METHOD = (
    "each LLM run is answered on its first {k} sampled questions by the fake LLM (tkgqa.testing.FakeLLM: the "
    "first offered choice, '{{}}' for JSON, else 'OK'), with the prompts the method itself builds, over the "
    f"KG file's facts that name those questions' entities (at most {NEIGHBOURHOOD_FACTS:,}; no full-KG load, "
    "no neural embedding, no model: every embedder setting is the hashing one, and a run that loads a model "
    "all the same says so in its note), tokens counted offline "
    "(tkgqa.llm.tokens: cl100k when cached, else ~1.3 × words); calls and prompt tokens per question × the "
    "questions of the run. Steps that depend on real replies (more ARI actions, R3's tree, re-asks) are not "
    "foreseen, and a retriever over the whole KG may pick other facts, so real runs may cost more; "
    "completions are not estimated."
)


def dry_run(
    paper: str,
    *,
    table: str | None = None,
    limit: int | None = None,
    data_root: str | Path | None = None,
    questions: int = DRY_RUN_QUESTIONS,
    method_options: MethodOptions | None = None,
) -> list[Estimate]:
    """The prompts and tokens each run of ``paper``'s tables would cost, estimated without a model."""
    spec = load_paper(paper)
    root = Path(data_root).expanduser() if data_root is not None else None
    planned = plan_cells(
        spec, select_tables(spec, table), llm=DRY_RUN_LLM, root=root,
        ready=lambda row, column: inputs_reason(row, column, root),
    )  # fmt: skip
    out: list[Estimate] = []
    for key in runs_of(planned):
        n_cells = sum(1 for p in planned if p.run == key)
        assert root is not None
        out.append(_estimate(key, root, limit, questions, n_cells, method_options))
    return out


@contextmanager
def models_loaded() -> Iterator[list[str]]:
    """The models loaded while the block runs (what :mod:`tkgqa.loading` announces), in order."""
    seen: list[str] = []

    def listen(event: str, work: Loading, _seconds: float | None) -> None:
        if event == "start" and work.kind == "model":
            seen.append(work.what)

    stop = add_listener(listen)
    try:
        yield seen
    finally:
        stop()


def capitalised(text: str) -> list[str]:
    """The runs of capitalised words of ``text`` (names a question mentions: ``Barack Obama``), each run
    and its words."""
    runs = re.findall(r"[A-Z][\w'.-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][\w'.-]*)*", text)
    return list(dict.fromkeys([r for r in runs] + [w for r in runs for w in r.split() if w[:1].isupper()]))


def neighbourhood_kg(ds: Dataset, questions: list[Question], key: RunKey, tmp: Path) -> KGStore | Path | None:
    """The KG the estimate runs over: the dataset's KG file when small, else the facts of it that name one
    of ``questions``' entities (``None``: the dataset has no KG file)."""
    from ...kg.loaders import load_kg
    from ...time import try_parse_time

    path = ds.kg_path
    if path is None:
        return None
    cut = try_parse_time(key.as_of) if key.as_of else None
    if Path(path).stat().st_size <= SMALL_KG_BYTES:
        return load_kg(path).as_of(cut) if cut is not None else Path(path)
    names = [e for q in questions for e in q.entities] + [n for q in questions for n in capitalised(q.text)]
    needles = {form for e in names for form in (e, e.replace(" ", "_")) if len(e) > 2}
    lines: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if any(n in line for n in needles):
                lines.append(line)
                if len(lines) >= NEIGHBOURHOOD_FACTS:
                    break
    if not lines:
        return None
    small = tmp / Path(path).name
    small.write_text("".join(lines), "utf-8")
    kg = load_kg(small, cache=False)
    return kg.as_of(cut) if cut is not None else kg


def _estimate(
    key: RunKey, root: Path, limit: int | None, k: int, n_cells: int, method_options: MethodOptions | None
) -> Estimate:
    base = Estimate(key.run_id, key.method, key.dataset, n_cells, key.llm, questions=0, sampled=0)
    try:
        ds = open_dataset(root, key)
        chosen = select_questions(ds.questions, limit, SAMPLE if limit else None, SEED)
        if not key.llm:
            return replace(base, questions=len(chosen), note="no LLM: runs offline")
        few = list(chosen[:k])
        name = key.method.partition(":")[0].strip()
        options = {**(method_options or {})}
        options[name] = {**offline_options(name), **(options.get(name) or {})}
        with models_loaded() as loaded, tempfile.TemporaryDirectory(prefix="tkgqa-dry-run-") as tmp:
            method = build(key, DRY_RUN_LLM, options)
            kg = neighbourhood_kg(ds, few, key, Path(tmp))
            report = evaluate(
                method, few, kg, Path(tmp) / "run", progress=False, check_support=False, warn=lambda _m: None
            )
    except (TKGQAError, ImportError, OSError) as exc:
        return replace(base, note=f"cannot estimate: {type(exc).__name__}: {exc}")
    u = report.usage
    note = f"loaded a model all the same: {', '.join(dict.fromkeys(loaded))}" if loaded else ""
    if report.errors:
        first = next(iter(report.errors_by_type), "an error")
        errors = (
            f"{report.errors} of {len(few)} sampled questions ended in errors ({first}): calls undercounted"
        )
        note = f"{note}; {errors}" if note else errors
    return replace(
        base,
        note=note,
        questions=len(chosen),
        sampled=len(few),
        calls_per_question=u["llm_calls_per_question"],
        prompt_tokens_per_question=u["prompt_tokens_per_question"],
        completion_tokens_per_question=u["completion_tokens_per_question"],
    )

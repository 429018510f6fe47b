"""Where each dataset of the papers' tables lives under a data root laid out like ``../shared/data``, what it
must contain for a cell to run, and what differs from the paper's data (shown with every cell)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...home import DATA_ENV, data_root

#: The environment variable naming the default data root (see :func:`tkgqa.home.data_root`).
DATA_ROOT_ENV = DATA_ENV


@dataclass(frozen=True)
class DataSpec:
    """``folder`` under the data root; ``needs``: files (relative to it; any one of each tuple) without which
    no cell runs, with what they are; ``kg_needed``: the file a column with ``as_of`` (a KG cutoff) needs;
    ``options``: loader options; ``notes``: how this data differs from the paper's."""

    folder: str
    needs: tuple[tuple[tuple[str, ...], str], ...]
    notes: tuple[str, ...] = ()
    kg_needed: tuple[str, ...] = ()


def _crlt_kgqa(file: str, what: str, shared: str) -> DataSpec:
    """One of CR-LT-KGQA's two sets (``what``: questions or claims): one folder, each answered over the union
    of its entries' own KG triples."""
    return DataSpec(
        "crlt_kgqa",
        (((file,), f"CR-LT-KGQA {what}"),),
        (
            f"CR-LT-KGQA {what} (long-tail): {shared} shared; KG = the union of the entries' own KG Triples "
            "(an oracle sub-graph), not live Wikidata",
        ),
    )


DATA: dict[str, DataSpec] = {
    "multitq": DataSpec(
        "multitq",
        (
            (
                ("questions/test_gold_sample.json", "questions/test.json"),
                "MultiTQ test questions with answers",
            ),
        ),
        (
            "MultiTQ: 350 shared questions of the 500-question gold sample of the test set (54,584 in the "
            "paper's test set)",
        ),
        ("kg/full.txt", "kg/full_partial.txt"),
    ),
    "timequestions": DataSpec(
        "timequestions",
        (
            (("questions/test.json",), "TimeQuestions test questions"),
            (
                ("retrieved/test_timer4_retrieved_facts.json", "kg/full.txt"),
                "TimeR4's retrieved facts or the KG",
            ),
        ),
        (
            "TimeQuestions: 2,266 of 3,237 test questions shared; without kg/full.txt each question is "
            "answered over TimeR4's published retrieved facts (per-question context), not the whole KG",
        ),
        ("kg/full.txt",),
    ),
    "cronquestions": DataSpec(
        "cronquestions",
        (
            (
                ("questions/test.json", "questions/test.pickle", "questions/test_sample_ari198.json"),
                "CronQuestions test questions",
            ),
            (("kg/full.txt",), "the CronQuestions KG (328k facts; PROVENANCE.md: not in the shared data)"),
        ),
        ("CronQuestions: ARI's 198-question test sample (139 shared), not the full test set",),
        ("kg/full.txt",),
    ),
    "clqa": DataSpec(
        "clqa_wiki",
        ((("CLQA_Wiki_v1.json",), "CLQA-Wiki questions"),),
        (
            "CLQA-Wiki: 840 of 1,200 questions shared; no Wikidata15k KG and no Wikipedia corpus, so plans "
            "are read by the LLM alone",
        ),
    ),
    "crlt_qa": _crlt_kgqa("CR-LT-QA.json", "questions", "140 of 200"),
    "crlt_claims": _crlt_kgqa("CR-LT-ClaimVerification.json", "claims", "105 of 150"),
    "recipe_mpr": DataSpec(
        "recipe_mpr",
        ((("500QA.json",), "Recipe-MPR queries"),),
        (
            "Recipe-MPR: 350 of 500 non-personalised queries with five options; the paper's 100 personalised "
            "queries (personal KG, sixth option) are not published",
        ),
    ),
}


def default_data_root() -> Path | None:
    """The data root every command reads by name (:func:`tkgqa.home.data_root`: ``$TKGQA_DATA``, else
    ``$TKGQA_HOME/data``, which ``tkgqa data fetch`` fills)."""
    return data_root()


def dataset_dir(root: Path, dataset: str) -> Path:
    return root / DATA[dataset].folder


def missing_data(root: Path | None, dataset: str, *, as_of: str | None = None) -> str | None:
    """Why ``dataset`` cannot be evaluated from ``root`` (``None`` when it can)."""
    if root is None:
        return f"missing data: no data root (pass --data-root DIR or set {DATA_ROOT_ENV})"
    spec = DATA[dataset]
    folder = root / spec.folder
    if not folder.is_dir():
        return f"missing data: no {spec.folder}/ under {root} (`tkgqa data fetch {dataset}`)"
    for options, what in spec.needs:
        if not any((folder / name).exists() for name in options):
            return f"missing data: {what} ({' or '.join(options)} under {folder})"
    if as_of is not None and spec.kg_needed and not any((folder / n).exists() for n in spec.kg_needed):
        return (
            f"missing data: a KG cutoff (--as-of {as_of}) needs {' or '.join(spec.kg_needed)} under {folder}"
        )
    return None

"""Which model a cell's number came from, and which cells a recording can fill.

A cell is ``ran`` only when our run used the model family the paper used (:func:`model_family` of the
``--llm`` spec, or of a recording's model, against the row's ``paper_model``). A ``replay:`` recording fills
a cell only when it is a recording *of that cell*: the same model family, the method the row names (with the
row's options), the cell's dataset, and prompts to match (:func:`recording_of`, :meth:`Recording.why_not`);
every other LLM cell is ``n/a`` with the reason, and no run starts for it.

The authors' recordings in ``../shared/data/llm_recordings`` carry no header: what each one is stands in
its method package's ``paper.json`` (``recordings``, from that folder's PROVENANCE.md), keyed by its file
name (:func:`authors_recordings`); a cassette written by ``tkgqa eval --record`` or ``tkgqa llm export`` says
it in its header (model, method, dataset).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import TKGQAError
from .spec import Paper, RecordingFacts, Switch, load_paper, paper_names, split_spec

#: The family of tkgqa's fake test LLM (``--llm fake``: canned replies, not a model; its cells are
#: ``ran-fake-llm``, never compared with a paper's model).
TEST_LLM_FAMILY = "fake (tkgqa's scripted test LLM)"
#: (pattern on the lower-cased model text, family), first match wins.
_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"^fake\b", TEST_LLM_FAMILY),
    (r"llama-?2.*(?<!not )(fine-?tuned)", "llama-2-7b-chat (fine-tuned)"),
    (r"llama-?2", "llama-2-7b-chat"),
    (r"llama-?3", "llama-3"),
    (r"gpt-?4o-mini", "gpt-4o-mini"),
    (r"gpt-?4o", "gpt-4o"),
    (r"gpt-?4\.1", "gpt-4.1"),
    (r"gpt-?4", "gpt-4"),
    (r"gpt-?3\.5|gpt-?35|chatgpt", "gpt-3.5"),
    (r"slerp", "solarm-sakurasolar-slerp"),
    (r"sakura-?solar-?instruct", "sakura-solar-instruct"),
    (r"codeqwen", "codeqwen1.5-7b"),
)


def model_family(text: str | None) -> str | None:
    """The model family named by ``text`` (an ``--llm`` spec, a recording's model, a row's ``paper_model``):
    ``gpt-3.5`` for ``openai:gpt-3.5-turbo-0125`` and ``ChatGPT`` alike; ``None`` when unknown."""
    if not text:
        return None
    low = text.strip().lower()
    for pattern, family in _FAMILIES:
        if re.search(pattern, low):
            return family
    return None


class Recording(RecordingFacts):
    """A ``replay:`` recording (:class:`~.spec.RecordingFacts`) and what follows for a paper's cells: its
    model's family, the spec it records, why it cannot fill a cell."""

    @property
    def family(self) -> str | None:
        return model_family(self.model)

    @property
    def recorded(self) -> str:
        """The method spec it records: its method, with the row-telling options its config sets off their
        defaults (``timer4:rewrite=off``)."""
        if self.stands_for is None:
            return "unknown"
        off = off_defaults(self.stands_for, self.config or {})
        options = ",".join(f"{key}={str(value).lower()}" for key, value in off.items())
        return (
            f"{self.stands_for}{',' if ':' in self.stands_for else ':'}{options}" if off else self.stands_for
        )

    def why_not(self, method: str, paper_model: str | None, dataset: str) -> str | None:
        """Why this recording cannot fill a cell of ``method`` (the row's spec) whose paper used
        ``paper_model``, on ``dataset``; ``None`` when it can."""
        head = f"replay of {self.file}"
        if not self.cassette:
            return f"{head}: not a replay cassette (its own format, which `tkgqa llm parse` reads)"
        if self.family is None or self.family != model_family(paper_model):
            theirs = paper_model or "unknown"
            return f"{head}: not this row's model (the paper's: {theirs}; the recording's: {self.model})"
        fits = (
            config_fits(method, self.stands_for, self.config)
            if self.config is not None and self.stands_for is not None
            else self.stands_for is not None and same_method(self.stands_for, method)
        )
        if not fits:
            return f"{head}: not this row's method (it records `{self.recorded}`, not `{method}`)"
        if self.datasets and dataset not in self.datasets:
            return f"{head}: not this dataset (it covers {', '.join(self.datasets)} only)"
        if not self.prompted:
            return (
                f"{head}: replies without their prompts (matched by question id only, it would fill the cell "
                "with replies to prompts tkgqa never sent)"
            )
        return None


def same_method(recorded: str, row: str) -> bool:
    """Whether a recording of spec ``recorded`` stands for the row spec ``row`` (same name and options)."""
    return split_spec(recorded) == split_spec(row)


def authors_recordings() -> dict[str, Recording]:
    """The recordings the papers' authors released (``llm_recordings/`` under the data root: no header, what
    each one is stands in its method package's ``paper.json``), by file name without ``.jsonl``. A paper
    table that cannot be read adds none here (``tkgqa reproduce`` of that paper says why)."""
    return {r.file: Recording(**r.model_dump()) for paper in _readable_papers() for r in paper.recordings}


def ablation_switches(method: str) -> dict[str, Switch]:
    """The options that tell ``method``'s rows apart, with their defaults: ``switches`` of each ``paper.json``
    that a row of ``method`` names. A recorded config with one of them off its default stands only for a row
    that names it."""
    out: dict[str, Switch] = {}
    for paper in _readable_papers():
        named = [options for name, options in map(split_spec, paper.row_methods()) if name == method]
        out |= {key: default for key, default in paper.switches.items() if any(key in o for o in named)}
    return out


def _readable_papers() -> list[Paper]:
    papers = []
    for name in paper_names():
        try:
            papers.append(load_paper(name))
        except TKGQAError:
            continue
    return papers


def recording_of(llm: str | None) -> Recording | None:
    """What the ``replay:`` recording of ``llm`` holds (``None`` for any other LLM). An authors' recording is
    known by its file name; a tkgqa cassette by its header. TKGQAError when the recording cannot be read."""
    if not llm or not llm.startswith("replay:"):
        return None
    target = llm.partition(":")[2]
    stem = Path(target.split("?", 1)[0]).name.removesuffix(".jsonl")
    known = authors_recordings()
    if stem in known:
        return known[stem]
    from ...llm.replay_backend import ReplayLLM

    backend = ReplayLLM(target)
    found = known.get(backend.cassette.path.name.removesuffix(".jsonl"))
    if found is not None:
        return found
    return _from_header(backend.cassette.path.name, backend.cassette.header, backend)


def _from_header(name: str, header: Mapping[str, Any], backend: Any) -> Recording:
    method = header.get("method") if isinstance(header.get("method"), Mapping) else {}
    assert isinstance(method, Mapping)
    spec = method.get("method")
    config = method.get("config")
    dataset = header.get("dataset")
    if isinstance(dataset, Mapping):
        dataset = dataset.get("name")
    prompted = any(e.prompt is not None or e.messages is not None for e in backend.cassette.entries)
    return Recording(
        file=name,
        model=str(header.get("model") or "unknown (the cassette has no header)"),
        stands_for=spec if isinstance(spec, str) else None,
        datasets=(str(dataset),) if isinstance(dataset, str) else (),
        prompted=prompted,
        config=config if isinstance(config, Mapping) else {},
    )


def config_fits(row: str, name: str, config: Mapping[str, Any]) -> bool:
    """Whether a recording of method ``name`` with ``config`` stands for the row spec ``row``: the same
    method, every option the row names set so, and no ablation switch off its default that the row does
    not name. (Other settings cannot be told from a spec; a prompt they change misses in the replay and the
    cell is ``failed``, never ``ran``.)"""
    row_name, options = split_spec(row)
    if row_name != name:
        return False
    for key, value in options.items():
        if not key or str(config.get(key)).lower() != value:
            return False
    return all(key in options for key in off_defaults(name, config))


def off_defaults(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The options of :func:`ablation_switches` that ``config`` (a recording of method ``name``) sets off
    their defaults."""
    switches = ablation_switches(name)
    return {key: config[key] for key, default in switches.items() if key in config and config[key] != default}


def describe_llm(llm: str | None) -> str | None:
    """The ``--llm`` spec as a cell shows it (a recording with its model)."""
    try:
        rec = recording_of(llm)
    except TKGQAError:
        rec = None
    if rec is not None:
        return f"{llm} ({rec.model})"
    return llm


def run_family(llm: str | None) -> str | None:
    """The family of the model a run with ``llm`` used (a recording's model for ``replay:``)."""
    try:
        rec = recording_of(llm)
    except TKGQAError:
        return None
    return rec.family if rec is not None else model_family(llm)

"""The prompts of R3's paper preset: the authors' own, loaded at run time from their released prompt files
(atoroghi/RRR-release ``prompts*/``; a copy sits in the shared data folder,
``llm_recordings/r3_authors_prompts/`` — never copied into this repository), else ours in the paper's
format (:data:`~tkgqa.methods.r3.prompts.paper.OURS_AXIOM_DEMOS`, ``OURS_ANSWER_DEMOS``).

Which files (:data:`AUTHORS_FILES`): for every step — entities (``identify_entities``), axiom
(``inference_rule_v4``), pruning (``relevant_facts``, with its few-shot examples), answer
(``decide_answer``), missing evidence (``identify_missing``), next entity (``decide_next_entity``) — the
``rev1`` prompts for questions (the paper's Appendix D prints their instructions) and the ``Creak_rev2``
prompts for claims; for Recipe-MPR, ``MPR_RRR_inference_rule_v4`` (the user's rule) and
``MPR_RRR_decide_answer`` (one prompt choosing among the recipes). A file's ``system`` text is used with its
demonstrations; each demonstration is a user turn (the template's lead, ``Question:``, ``Sentence:`` or
``Query:``, then the demonstration's block, which carries its own rules and facts) and an assistant turn (its
``output``). The axiom and answer files are needed for the authors' set at all; any other file that is
missing leaves only its own step on ours, listed (``report.json``: ``demonstrations.missing`` and
``fallbacks``).

Where the folder is looked for (:func:`candidate_dirs`): ``demos_dir`` (the ``r3`` option), else
``llm_recordings/r3_authors_prompts`` under the data root (:func:`tkgqa.home.data_root`: ``$TKGQA_DATA``, else
``$TKGQA_HOME/data``), where ``tkgqa data fetch r3-prompts`` puts them. Reading the files needs PyYAML
(``yaml.safe_load``: data only). When the authors' files are asked for (the paper preset) and not found, the
method stops with a ConfigError naming ``tkgqa data fetch r3-prompts`` and the option that uses ours
(``demos=ours``) — never a silent swap; when they cannot be read, it falls back to ours and says why
(``report.json``: ``deviations`` and ``fallbacks``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import ConfigError, DataError
from ...home import DATA_ENV, data_root
from .prompts.paper import (
    OURS_ANSWER_DEMOS,
    OURS_AXIOM_DEMOS,
    PAPER_ANSWER_SYSTEM,
    PAPER_AXIOM_SYSTEM,
    Demo,
)

AUTHORS_SUBDIR = Path("llm_recordings") / "r3_authors_prompts"
#: The data catalogue's name for the authors' prompt files (``tkgqa data fetch r3-prompts``).
AUTHORS_ENTRY = "r3-prompts"


class DemoSource(StrEnum):
    AUTHORS = "authors"  # the authors' released demonstrations (paper)
    OURS = "ours"  # our examples in the paper's format


class Stage(StrEnum):
    AXIOM = "axiom"
    ANSWER = "answer"
    ENTITIES = "entities"
    PRUNE = "prune"
    NEED = "need"
    NEXT_ENTITY = "next_entity"
    PREFERENCE_AXIOM = "preference_axiom"
    PREFERENCE_CHOICE = "preference_choice"


#: (stage, claim) → the authors' file (questions: ``rev1``; claims: ``Creak_rev2``; Recipe-MPR: ``MPR_RRR``,
#: keyed as questions).
AUTHORS_FILES: dict[tuple[Stage, bool], str] = {
    (Stage.AXIOM, False): "prompts_rev1_inference_rule_v4.yaml",
    (Stage.ANSWER, False): "prompts_rev1_decide_answer.yaml",
    (Stage.AXIOM, True): "prompts_Creak_rev2_inference_rule_v4.yaml",
    (Stage.ANSWER, True): "prompts_Creak_rev2_decide_answer.yaml",
    (Stage.ENTITIES, False): "prompts_rev1_identify_entities.yaml",
    (Stage.ENTITIES, True): "prompts_Creak_rev2_identify_entities.yaml",
    (Stage.PRUNE, False): "prompts_rev1_relevant_facts.yaml",
    (Stage.PRUNE, True): "prompts_Creak_rev2_relevant_facts.yaml",
    (Stage.NEED, False): "prompts_rev1_identify_missing.yaml",
    (Stage.NEED, True): "prompts_Creak_rev2_identify_missing.yaml",
    (Stage.NEXT_ENTITY, False): "prompts_rev1_decide_next_entity.yaml",
    (Stage.NEXT_ENTITY, True): "prompts_Creak_rev2_decide_next_entity.yaml",
    (Stage.PREFERENCE_AXIOM, False): "prompts_MPR_RRR_inference_rule_v4.yaml",
    (Stage.PREFERENCE_CHOICE, False): "prompts_MPR_RRR_decide_answer.yaml",
}
#: The stages without which the authors' set is not used at all (Appendix D's two printed prompts).
CORE_STAGES = frozenset({Stage.AXIOM, Stage.ANSWER})


@dataclass(frozen=True)
class PromptFile:
    """One prompt: its instruction, the lead of its input (``Question``/``Sentence``) and demonstrations."""

    name: str
    system: str
    lead: str
    demos: tuple[Demo, ...]
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.name, "demos": len(self.demos), "lead": self.lead, "sha256": self.sha256[:16]}


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: expected a non-empty text")
    return value


def parse_prompt_file(name: str, data: Any, sha256: str = "") -> PromptFile:
    """A loaded YAML prompt file (``system``, ``input_template``, ``few-shot: [{input: {QUESTION}, output}]``)
    as a :class:`PromptFile`; DataError naming what is wrong."""
    if not isinstance(data, dict):
        raise DataError(f"{name}: not a mapping of system / input_template / few-shot")
    system = _text(data.get("system"), f"{name}: system").strip()
    template = _text(data.get("input_template"), f"{name}: input_template")
    m = re.match(r"\s*(\w+)\s*:\s*\{\{\s*(QUESTION|QUERY)\s*\}\}", template)
    if m is None:
        raise DataError(f"{name}: input_template does not start with '<Lead>: {{{{QUESTION}}}}'")
    slot = m.group(2)
    shots = data.get("few-shot") or []
    if not isinstance(shots, list):
        raise DataError(f"{name}: few-shot is not a list")
    demos = []
    for i, shot in enumerate(shots, 1):
        inp = shot.get("input") if isinstance(shot, dict) else None
        question = _text(inp.get(slot) if isinstance(inp, dict) else None, f"{name}: few-shot {i} input")
        output = _text(shot.get("output"), f"{name}: few-shot {i} output")
        demos.append(Demo(f"{m.group(1)}: {question.strip()}", output.strip()))
    return PromptFile(name, system, m.group(1), tuple(demos), sha256)


@lru_cache(maxsize=16)
def _read(path: str, mtime: float) -> PromptFile:
    try:
        import yaml
    except ImportError:
        raise DataError("reading the authors' YAML prompt files needs PyYAML (pip install pyyaml)") from None
    raw = Path(path).read_bytes()
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"{Path(path).name}: not readable YAML ({exc})"[:300]) from None
    return parse_prompt_file(Path(path).name, data, hashlib.sha256(raw).hexdigest())


def read_prompt_file(path: Path) -> PromptFile:
    """One of the authors' files (cached by path and modification time)."""
    try:
        return _read(str(path), path.stat().st_mtime)
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None


def candidate_dirs(explicit: str | None = None) -> list[Path]:
    """Where the authors' prompt files are looked for, in order: ``explicit``, else the data root's copy."""
    if explicit:
        return [Path(explicit).expanduser()]
    return [data_root() / AUTHORS_SUBDIR]


@dataclass(frozen=True)
class DemoSet:
    """The prompts of the paper-style stages: per (stage, claim), the file in use."""

    source: DemoSource
    files: dict[tuple[Stage, bool], PromptFile] = field(default_factory=dict)
    folder: str = ""
    reason: str = ""  # why the authors' demonstrations are not used (empty when they are, or not asked)
    missing: tuple[str, ...] = ()  # "stage: why" of each non-core step left on ours

    def authors(self, stage: Stage, claim: bool) -> PromptFile | None:
        """The authors' prompt of ``stage`` (``None``: not loaded — the step uses ours)."""
        return self.files.get((stage, claim))

    def prompt(self, stage: Stage, claim: bool) -> PromptFile:
        found = self.files.get((stage, claim))
        if found is not None:
            return found
        match stage:
            case Stage.AXIOM:
                return PromptFile("ours", PAPER_AXIOM_SYSTEM, "Question", OURS_AXIOM_DEMOS)
            case Stage.ANSWER:
                return PromptFile("ours", PAPER_ANSWER_SYSTEM, "Question", OURS_ANSWER_DEMOS)
        raise ConfigError(f"no fallback prompt file for the {stage.value} step (use DemoSet.authors)")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source.value}
        if self.folder:
            out["folder"] = self.folder
        if self.files:
            out["files"] = {
                f"{stage.value}{'_claims' if claim else ''}": f.to_dict()
                for (stage, claim), f in sorted(self.files.items())
            }
        if self.reason:
            out["reason"] = self.reason
        if self.missing:
            out["missing"] = list(self.missing)
        return out


OURS = DemoSet(DemoSource.OURS)


def load_demos(source: DemoSource, folder: str | None = None) -> DemoSet:
    """The demonstrations to use: the authors' when asked for and found (every file read), else ours with
    the reason. An explicit ``folder`` that does not exist is a ConfigError."""
    if source == DemoSource.OURS:
        return OURS
    if folder and not Path(folder).expanduser().is_dir():
        raise ConfigError(
            f"r3 demos_dir {folder!r} is not a folder: give the folder holding the authors' prompt files "
            f"(…/{AUTHORS_SUBDIR.as_posix()}) with --method-option demos_dir=DIR, or leave it unset"
        )
    tried = candidate_dirs(folder)
    found = next((d for d in tried if d.is_dir()), None)
    if found is None:
        where = ", ".join(str(d) for d in tried)
        raise ConfigError(
            f"r3's paper preset reads the authors' released prompt files, which are not at {where}: run "
            f"`tkgqa data fetch {AUTHORS_ENTRY}` (or set {DATA_ENV}, or --method-option demos_dir=DIR), or "
            "use our demonstrations with --method-option demos=ours"
        )
    files: dict[tuple[Stage, bool], PromptFile] = {}
    missing: list[str] = []
    for key, name in AUTHORS_FILES.items():
        try:
            files[key] = read_prompt_file(found / name)
        except DataError as exc:
            if key[0] in CORE_STAGES:
                return DemoSet(DemoSource.OURS, folder=str(found), reason=f"the authors' prompt files: {exc}")
            missing.append(f"{key[0].value}{' (claims)' if key[1] else ''}: {exc}")
    return DemoSet(DemoSource.AUTHORS, files, str(found), missing=tuple(missing))

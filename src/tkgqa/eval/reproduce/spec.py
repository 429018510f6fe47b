"""The published tables, typed in once: a method package's ``paper.json`` read into frozen, validated models.

A method package names its paper table in its registration (``paper`` of its
:class:`~tkgqa.methods.package.MethodPackage`, e.g. ``tkgqa/methods/ari/paper.json``), so a third-party
package can ship one too. Each file holds a paper's tables that name a dataset tkgqa can load. A table has a
metric (the per-question field of ``results.jsonl`` its numbers average, see :data:`METRICS`) and a scale
(``fraction`` as 0.380 or ``percent`` as 38.0, as printed); columns say which dataset, which questions
(``filter``: a breakdown value such as ``{"qlabel": "Single"}``) and, where needed, a KG cutoff (``as_of``) or
why tkgqa cannot measure it (``na``: a human-evaluated metric, a query set not published); rows say which
tkgqa method spec reproduces them (``method``, with ``llm`` whether it needs a model) or why none does
(``reason``). A row's ``cells`` are the published numbers by column id; a row without any (our offline
references, or a paper whose numbers are not in the extraction) is listed in every column with no published
number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...errors import ConfigError, DataError
from ...methods.package import paper_packages, read_paper


def paper_names() -> tuple[str, ...]:
    """The papers ``tkgqa reproduce`` knows (the method packages that name a paper table), in the order they
    are listed: the built-in ones (ari, timer4, cik, lpkg, r3), then the plugins'."""
    return tuple(paper_packages())


class Metric(StrEnum):
    """What a cell averages over its questions (fields of ``results.jsonl`` rows)."""

    STRICT_HIT = "strict_hit"  # Hits@1 / accuracy, strict normalised match
    LENIENT_HIT = "lenient_hit"  # the substring rule of TimeR4's evaluation
    STRICT_HIT_ANSWERED = "strict_hit_answered"  # Hits@1 over the questions the method answered
    RECALL = "recall"  # set recall (CLQA-Wiki)
    PRECISION = "precision"  # set precision (CLQA-Wiki)


class Scale(StrEnum):
    FRACTION = "fraction"
    PERCENT = "percent"


#: The question filters a column may use: breakdown dimensions of the rows, plus the number of question
#: entities (``single``/``multiple``).
FILTER_KEYS = frozenset({"qlabel", "answer_type", "qtype", "types", "complexity", "time_level", "entities"})


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Frozen):
    id: str
    dataset: str
    split: str = "test"  # every table here reports the test split
    filter: dict[str, str] = Field(default_factory=dict)
    as_of: str | None = None  # answer over the KG as of this time (CIK-LLM's K<1960, K<2000)
    metric: Metric | None = None  # overrides the table's
    na: str | None = None  # why tkgqa cannot measure this column

    @model_validator(mode="after")
    def _known_filters(self) -> Column:
        unknown = set(self.filter) - FILTER_KEYS
        if unknown:
            raise ValueError(f"column {self.id!r}: unknown filter keys {sorted(unknown)}")
        return self


class Printed(_Frozen):
    """Where a row's numbers stand in the paper's text: ``line`` as the extraction prints it (a table row, or
    part of one when the table is split or transposed) and the column id of each decimal number in it, in
    printed order (``null`` for one that is not a cell here, e.g. a percentage in brackets)."""

    line: str
    columns: tuple[str | None, ...]


class PaperRow(_Frozen):
    id: str
    method: str | None = None  # the tkgqa method spec, e.g. "ari:no_clustering=true"
    llm: bool = False  # whether the method needs --llm
    paper_model: str | None = None  # the model behind the published number
    bound: bool = False  # an offline row that is a true upper bound (the oracle policy), not a reference
    reason: str | None = None  # why no tkgqa method reproduces this row
    note: str | None = None
    cells: dict[str, float] = Field(default_factory=dict)
    #: The row's lines in the paper text when its numbers are not one line in column order (else found by
    #: the guard test itself); ``source``: where numbers not in ``../shared/papers`` were read.
    printed: tuple[Printed, ...] = ()
    source: str | None = None

    @model_validator(mode="after")
    def _method_or_reason(self) -> PaperRow:
        if (self.method is None) == (self.reason is None):
            raise ValueError(f"row {self.id!r}: give exactly one of 'method' and 'reason'")
        if self.bound and self.llm:
            raise ValueError(f"row {self.id!r}: a bound runs without an LLM ('llm': false)")
        return self


class Table(_Frozen):
    id: str
    caption: str
    metric: Metric
    scale: Scale
    columns: tuple[Column, ...]
    rows: tuple[PaperRow, ...]

    @model_validator(mode="after")
    def _cells_name_columns(self) -> Table:
        ids = [c.id for c in self.columns]
        if len(set(ids)) != len(ids):
            raise ValueError(f"table {self.id}: repeated column ids")
        rows = [r.id for r in self.rows]
        if len(set(rows)) != len(rows):
            raise ValueError(f"table {self.id}: repeated row ids")
        for row in self.rows:
            unknown = (set(row.cells) | {c for p in row.printed for c in p.columns if c}) - set(ids)
            if unknown:
                raise ValueError(
                    f"table {self.id} row {row.id!r}: cells of unknown columns {sorted(unknown)}"
                )
        return self

    def column(self, column_id: str) -> Column:
        return next(c for c in self.columns if c.id == column_id)


#: A switch's default as JSON gives it (a flag, a number, an enum's value).
Switch = bool | int | str


class RecordingFacts(_Frozen):
    """What a ``replay:`` recording holds: its file name (``file``; an authors' recording, listed under
    ``recordings`` in its method package's ``paper.json``, without ``.jsonl``), the ``model`` that wrote it,
    the tkgqa method spec it stands for (``stands_for``; ``None`` when a cassette's header names none) and
    the spec that replays it (``run_spec``, default ``stands_for``), the datasets it covers (empty: any),
    whether its lines carry prompts (``prompted``; else they could only be matched by question id), whether
    ``replay:`` reads it at all (``cassette``), what differs from the paper when it fills a cell
    (``deviations``) and a tkgqa cassette's recorded method config (``config``; an authors' recording
    carries no header, so none)."""

    file: str
    model: str
    stands_for: str | None
    run_spec: str | None = None
    datasets: tuple[str, ...] = ()
    prompted: bool = True
    cassette: bool = True
    deviations: tuple[str, ...] = ()
    config: Mapping[str, Any] | None = None


class Paper(_Frozen):
    paper: str
    title: str
    source: str  # the text in ../shared/papers the numbers were typed from
    model: str
    notes: tuple[str, ...] = ()
    #: Every option its rows set to tell them apart (option → the method's default): a recorded run with one
    #: of them off its default stands only for a row that names it (:func:`.models.config_fits`).
    switches: dict[str, Switch] = Field(default_factory=dict)
    recordings: tuple[RecordingFacts, ...] = ()
    tables: tuple[Table, ...]

    def row_methods(self) -> list[str]:
        """The method spec of every row that names one."""
        return [r.method for t in self.tables for r in t.rows if r.method is not None]

    @model_validator(mode="after")
    def _switches_and_recordings(self) -> Paper:
        named = {key for spec in self.row_methods() for key in split_spec(spec)[1] if key}
        unknown, missing = sorted(set(self.switches) - named), sorted(named - set(self.switches))
        if unknown or missing:
            wrong = [f"{unknown} named by no row of the tables"] if unknown else []
            wrong += [f"{missing} set by rows but not listed (with the method's default)"] if missing else []
            raise ValueError(f"switches: {'; '.join(wrong)}")
        files = [r.file for r in self.recordings]
        if len(set(files)) != len(files):
            raise ValueError("recordings: a file is listed twice")
        for r in self.recordings:
            if r.stands_for is None or r.config is not None:
                raise ValueError(f"recordings: {r.file} needs stands_for (a method spec) and takes no config")
        return self


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"ari:no_clustering=true"`` → ``("ari", {"no_clustering": "true"})`` (a positional value is kept
    under ``""``)."""
    name, _, rest = spec.partition(":")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        options[key.strip() if eq else ""] = (value if eq else key).strip().lower()
    return name.strip(), options


@cache
def load_paper(name: str) -> Paper:
    """The published tables of ``name`` (one of :func:`paper_names`), as its method package ships them."""
    text, ref = read_paper(name.strip().lower())
    try:
        data: Any = json.loads(text)
        return Paper.model_validate(data)
    except (ValueError, ValidationError) as exc:
        raise DataError(f"{ref} is not a valid table file: {exc}") from None


def select_tables(paper: Paper, table: str | None) -> tuple[Table, ...]:
    """The tables of ``paper`` (all, or the one whose id is ``table``, case-insensitive)."""
    if table is None:
        return paper.tables
    chosen = tuple(t for t in paper.tables if t.id.lower() == table.strip().lower())
    if not chosen:
        ids = ", ".join(t.id for t in paper.tables)
        raise ConfigError(f"--table {table!r}: {paper.paper} has tables {ids}")
    return chosen

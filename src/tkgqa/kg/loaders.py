r"""Load temporal KG files into a :class:`TemporalKG`.

Formats (``format=`` of :func:`load_kg`; ``"auto"`` sniffs the first lines):

* ``quadruples`` — MultiTQ / ICEWS ``subject\trelation\tobject\tYYYY-MM-DD`` (names with ``_``).
* ``icews_ids`` — integer quadruples + ``entity2id``/``relation2id`` maps (``name\tid`` text or JSON
  ``{name: id}``) + a ``ts2id`` map or day offsets (step ``t`` → ``base + (t - first_step) // step`` days).
* ``wikidata`` — CronQuestions-style ``s\tr\to\tstart\tend``: QIDs/PIDs, years (1/2916/empty = open);
  labels from ``wd_id2entity_text.txt`` / ``wd_id2relation_text.txt`` next to the file (or ``labels=``).
* ``timequestions`` — the TimeQuestions tkbc TSV with a header (``subject_id``, ``subject_label``, …,
  ``start_year``, ``end_year``); the label columns fill the labels table.
* ``tsv`` — our format: ``s\tr\to\tstart[\tend]``, ISO dates of any granularity, ``#`` comments; a
  4-column line is a point event, an empty end is ongoing (open).
* ``csv`` / ``jsonl`` — generic tables with a column mapping (:func:`load_table`).

Every loader raises :class:`DataError` with ``file:line`` on malformed input (``strict=True``), or skips bad
lines and counts them in the :class:`LoadReport` attached as ``kg.load_report`` (``strict=False``).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, DataError, NotFoundError
from ..time import NEG_INF, POS_INF, TimePoint, parse_bound
from .memory import COLUMNS, TemporalKG

PathLike = str | os.PathLike[str]
LabelsArg = Mapping[str, str] | PathLike | Sequence[PathLike] | None
FORMATS = ("quadruples", "icews_ids", "wikidata", "timequestions", "tsv", "csv", "jsonl")
_ALIASES = {
    "icews": "quadruples",
    "multitq": "quadruples",
    "cronquestions": "wikidata",
    "quintuples": "wikidata",
}
WIKIDATA_LABEL_FILES = ("wd_id2entity_text.txt", "wd_id2relation_text.txt")
_MAX_ERRORS = 10
_WIKIDATA_ID = re.compile(r"^[QP]\d+$")
_INT = re.compile(r"^-?\d+$")


@dataclass(frozen=True)
class LoadReport:
    """What a loader read: lines seen, facts kept, bad lines skipped (lenient mode) and the first errors."""

    path: str
    format: str
    n_lines: int = 0
    n_facts: int = 0
    n_skipped: int = 0
    n_duplicates: int = 0
    first_errors: tuple[str, ...] = ()
    from_cache: bool = False


class _Builder:
    """Accumulates encoded columns, interning names and memoising time parses; reports bad lines."""

    def __init__(self, path: str, fmt: str, strict: bool) -> None:
        self.path, self.format, self.strict = path, fmt, strict
        self.ent: dict[str, int] = {}
        self.rel: dict[str, int] = {}
        self.cols: tuple[list[int], ...] = ([], [], [], [], [], [], [])
        self.times: dict[str, tuple[int, int, int] | None] = {}
        self.labels: dict[str, str] = {}
        self.n_lines = self.n_skipped = self.n_duplicates = 0
        self.errors: list[str] = []

    def fail(self, line: int | None, message: str) -> None:
        """Raise (strict) or count a bad line (lenient)."""
        if self.strict:
            raise DataError(message + " (pass strict=False to skip bad lines)", path=self.path, line=line)
        self.n_skipped += 1
        if len(self.errors) < _MAX_ERRORS:
            self.errors.append(str(DataError(message, path=self.path, line=line)))

    def bound(self, text: str) -> tuple[int, int, int] | None:
        """``(first day, last day, granularity)`` of one interval end (memoised); ``None`` = open.
        Raises DataError."""
        try:
            return self.times[text]
        except KeyError:
            p = parse_bound(text)
            found = self.times[text] = (p.first_day, p.last_day, int(p.granularity)) if p else None
            return found

    def add(self, line: int, s: str, r: str, o: str, start: str | None, end: str | None) -> None:
        """Add one fact from raw text; ``end=None`` makes a point event (end = start)."""
        if not s or not r or not o:
            self.fail(line, "empty subject, relation or object")
            return
        try:
            b0 = self.bound(start) if start is not None else None
            b1 = b0 if end is None else self.bound(end)
        except DataError as exc:
            self.fail(line, exc.message)
            return
        t0, g0 = (b0[0], b0[2]) if b0 else (NEG_INF, 0)
        t1, g1 = (b1[1], b1[2]) if b1 else (POS_INF, 0)
        if t0 > t1:
            self.fail(line, f"start {start} is after end {end}")
            return
        self.append(s, r, o, t0, t1, g0, g1)

    def add_points(self, s: str, r: str, o: str, p0: TimePoint, p1: TimePoint) -> None:
        self.append(s, r, o, p0.first_day, p1.last_day, int(p0.granularity), int(p1.granularity))

    def append(self, s: str, r: str, o: str, t0: int, t1: int, g0: int, g1: int) -> None:
        ent, rel, c = self.ent, self.rel, self.cols
        si = ent.get(s)
        if si is None:
            si = ent[s] = len(ent)
        ri = rel.get(r)
        if ri is None:
            ri = rel[r] = len(rel)
        oi = ent.get(o)
        if oi is None:
            oi = ent[o] = len(ent)
        c[0].append(si)
        c[1].append(ri)
        c[2].append(oi)
        c[3].append(t0)
        c[4].append(t1)
        c[5].append(g0)
        c[6].append(g1)

    def build(self, name: str, labels: Mapping[str, str] | None = None) -> TemporalKG:
        """The store, keeping the first of duplicate facts (same names and day span)."""
        columns = {c: np.asarray(v, dtype=np.int64) for c, v in zip(COLUMNS, self.cols, strict=True)}
        keep = _first_occurrences(np.stack([columns[c] for c in ("s", "r", "o", "t0", "t1")]))
        if keep is not None:
            self.n_duplicates += int(len(keep) - keep.sum())
            columns = {c: v[keep] for c, v in columns.items()}
        all_labels = dict(self.labels)
        all_labels.update(labels or {})
        kg = TemporalKG.from_arrays(list(self.ent), list(self.rel), columns, labels=all_labels, name=name)
        kg.load_report = LoadReport(
            self.path,
            self.format,
            self.n_lines,
            len(kg),
            self.n_skipped,
            self.n_duplicates,
            tuple(self.errors),
        )
        return kg


def _first_occurrences(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
    """Mask of the columns of ``rows`` (k × n) that repeat no earlier column; ``None`` if none repeats."""
    n = rows.shape[1]
    if n < 2:
        return None
    order = np.lexsort(rows[::-1])  # stable: equal rows stay in file order
    ordered = rows[:, order]
    repeat = (ordered[:, 1:] == ordered[:, :-1]).all(axis=0)
    if not repeat.any():
        return None
    keep = np.ones(n, dtype=bool)
    keep[order[1:][repeat]] = False
    return keep


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without newline)`` of the data lines (blank lines and ``#`` comments skipped)."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.rstrip("\r\n")
                if line and not line.startswith("#") and line.strip():
                    yield lineno, line
    except FileNotFoundError:
        raise NotFoundError(f"KG file {str(path)!r} does not exist") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None


def _parse_delimited(b: _Builder, rows: Iterable[tuple[int, str]], n_cols: tuple[int, ...]) -> None:
    """``s r o start [end]`` rows; 4 columns = point event (if 4 is allowed), else end = 5th column."""
    expected = " or ".join(map(str, n_cols))
    for lineno, line in rows:
        b.n_lines += 1
        parts = line.split("\t")
        n = len(parts)
        if n not in n_cols:
            b.fail(lineno, f"expected {expected} tab-separated columns, got {n}: {line[:80]!r}")
            continue
        b.add(lineno, parts[0], parts[1], parts[2], parts[3], parts[4] if n == 5 else None)


# --- the formats ----------------------------------------------------------------------------------
def load_quadruples(
    path: PathLike, *, strict: bool = True, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """MultiTQ / ICEWS quadruples ``subject\\trelation\\tobject\\tdate``."""
    p = Path(path)
    b = _Builder(str(p), "quadruples", strict)
    _parse_delimited(b, _lines(p), (4,))
    return b.build(name or p.stem, read_labels(labels))


def load_tsv(
    path: PathLike, *, strict: bool = True, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """Our TSV format ``s r o start [end]`` (any ISO granularity, ``#`` comments, empty end = open)."""
    p = Path(path)
    b = _Builder(str(p), "tsv", strict)
    _parse_delimited(b, _lines(p), (4, 5))
    return b.build(name or p.stem, read_labels(labels))


def load_wikidata(
    path: PathLike, *, strict: bool = True, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """CronQuestions-style quintuples with Wikidata ids; labels from ``labels`` or the label files beside."""
    p = Path(path)
    b = _Builder(str(p), "wikidata", strict)
    _parse_delimited(b, _lines(p), (5,))
    return b.build(name or p.stem, read_labels(labels if labels is not None else wikidata_label_files(p)))


def load_timequestions(
    path: PathLike, *, strict: bool = True, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """The TimeQuestions tkbc TSV (header ``split subject_id subject_label … start_year end_year``)."""
    p = Path(path)
    b = _Builder(str(p), "timequestions", strict)
    rows = _lines(p)
    header = next(rows, None)
    if header is None:
        raise DataError("empty file", path=str(p))
    cols = header[1].split("\t")
    need = ("subject_id", "relation_id", "object_id", "start_year", "end_year")
    missing = [c for c in need if c not in cols]
    if missing:
        raise DataError(f"header lacks column(s) {missing}", path=str(p), line=header[0])
    at = {c: cols.index(c) for c in cols}
    s_i, r_i, o_i, t0_i, t1_i = (at[c] for c in need)
    label_cols = [
        (at[f"{k}_id"], at[f"{k}_label"]) for k in ("subject", "relation", "object") if f"{k}_label" in at
    ]
    for lineno, line in rows:
        b.n_lines += 1
        parts = line.split("\t")
        if len(parts) != len(cols):
            b.fail(lineno, f"expected {len(cols)} tab-separated columns, got {len(parts)}")
            continue
        for id_col, label_col in label_cols:
            if parts[label_col]:
                b.labels.setdefault(parts[id_col], parts[label_col])
        b.add(lineno, parts[s_i], parts[r_i], parts[o_i], parts[t0_i], parts[t1_i])
    return b.build(name or p.stem, read_labels(labels))


def read_id_map(path: PathLike) -> dict[int, str]:
    """An ``entity2id``/``relation2id`` map (``name\\tid`` lines or JSON ``{name: id}``) as ``{id: name}``."""
    p = Path(path)
    if p.suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DataError(f"invalid JSON id map: {exc}", path=str(p)) from None
        if not isinstance(data, dict):
            raise DataError("a JSON id map must be an object {name: id}", path=str(p))
        return {int(i): str(n) for n, i in data.items()}
    out: dict[int, str] = {}
    for lineno, line in _lines(p):
        name, sep, ident = line.rpartition("\t")
        if not sep or not _INT.match(ident.strip()):
            raise DataError(f"expected 'name<TAB>id', got {line[:80]!r}", path=str(p), line=lineno)
        out[int(ident)] = name
    return out


def _find_beside(path: Path, stem: str) -> Path | None:
    for candidate in (path.parent / f"{stem}.txt", path.parent / f"{stem}.json"):
        if candidate.exists():
            return candidate
    return None


def icews_aux_files(path: PathLike) -> dict[str, Path]:
    """The ``entity2id``/``relation2id``/``ts2id`` files beside an id-quadruple file (those that exist)."""
    p = Path(path)
    found = {stem: _find_beside(p, stem) for stem in ("entity2id", "relation2id", "ts2id")}
    return {k: v for k, v in found.items() if v is not None}


def load_icews_ids(
    path: PathLike,
    *,
    entity2id: PathLike | None = None,
    relation2id: PathLike | None = None,
    ts2id: PathLike | None = None,
    base: str | None = None,
    first_step: int = 0,
    step: int = 1,
    strict: bool = True,
    name: str | None = None,
    labels: LabelsArg = None,
) -> TemporalKG:
    """Integer quadruples ``s r o t`` (extra trailing columns ignored) decoded with the id maps.

    Times: a ``ts2id`` JSON ``{date: id}`` map, or ``base`` (ISO date of step ``first_step``) and ``step``
    (time units per day, e.g. 24 for hours): ``t`` → ``base + (t - first_step) // step`` days."""
    p = Path(path)
    aux = icews_aux_files(p)
    ent_file, rel_file = entity2id or aux.get("entity2id"), relation2id or aux.get("relation2id")
    if ent_file is None or rel_file is None:
        raise ConfigError(
            f"{p}: id quadruples need entity2id and relation2id maps (none found beside the file)"
        )
    ents, rels = read_id_map(ent_file), read_id_map(rel_file)
    ts_file = ts2id or (aux.get("ts2id") if base is None else None)
    days: dict[int, TimePoint] = {}
    if ts_file is not None:
        for i, text in read_id_map(ts_file).items():
            point = parse_bound(text)
            if point is not None:
                days[i] = point
    elif base is None:
        raise ConfigError(f"{p}: pass base='YYYY-MM-DD' (date of step {first_step}) or a ts2id map")
    base_day = TimePoint.of(base).first_day if base is not None else 0
    if step < 1:
        raise ConfigError("step (time units per day) must be >= 1")
    b = _Builder(str(p), "icews_ids", strict)
    for lineno, line in _lines(p):
        b.n_lines += 1
        parts = line.split()
        if len(parts) < 4 or not all(_INT.match(x) for x in parts[:4]):
            b.fail(lineno, f"expected 4 integer columns 's r o t', got {line[:80]!r}")
            continue
        s, r, o, t = (int(x) for x in parts[:4])
        if s not in ents or o not in ents or r not in rels:
            b.fail(lineno, f"id not in the entity/relation maps: {line[:80]!r}")
            continue
        point = days.get(t)
        if point is None:
            if ts_file is not None:
                b.fail(lineno, f"time id {t} not in the ts2id map")
                continue
            point = days[t] = TimePoint.from_ordinal(base_day + (t - first_step) // step)
        b.add_points(ents[s], rels[r], ents[o], point, point)
    return b.build(name or p.stem, read_labels(labels))


def load_table(
    path: PathLike,
    *,
    subject: str = "subject",
    relation: str = "relation",
    object: str = "object",
    start: str = "start",
    end: str | None = "end",
    delimiter: str | None = None,
    strict: bool = True,
    name: str | None = None,
    labels: LabelsArg = None,
) -> TemporalKG:
    """A CSV (header row) or JSONL file; the keywords name the columns. A missing ``end`` column/key makes
    point events; an empty/null end is open. ``delimiter`` defaults to tab for ``.tsv`` files or a header
    with tabs, else comma."""
    p = Path(path)
    is_jsonl = p.suffix in {".jsonl", ".ndjson"}
    b = _Builder(str(p), "jsonl" if is_jsonl else "csv", strict)
    want = {"subject": subject, "relation": relation, "object": object}

    def add(lineno: int, row: Mapping[str, Any]) -> None:
        b.n_lines += 1
        missing = [col for col in want.values() if row.get(col) in (None, "")]
        if missing:
            b.fail(lineno, f"missing value for column(s) {missing}")
            return
        t0 = row.get(start)
        t1 = row.get(end) if end is not None and end in row else None
        point_event = end is None or end not in row
        b.add(
            lineno,
            str(row[subject]),
            str(row[relation]),
            str(row[object]),
            "" if t0 is None else str(t0),
            None if point_event else ("" if t1 is None else str(t1)),
        )

    if is_jsonl:
        for lineno, line in _lines(p):
            try:
                row = json.loads(line)
            except ValueError as exc:
                b.n_lines += 1
                b.fail(lineno, f"invalid JSON: {exc}")
                continue
            if not isinstance(row, dict):
                b.n_lines += 1
                b.fail(lineno, "expected a JSON object per line")
                continue
            add(lineno, row)
    else:
        with p.open(encoding="utf-8", newline="") as fh:
            sep = delimiter or ("\t" if p.suffix == ".tsv" or "\t" in fh.readline() else ",")
            fh.seek(0)
            reader = csv.DictReader(fh, delimiter=sep)
            header = reader.fieldnames or []
            absent = [c for c in (*want.values(), start) if c not in header]
            if absent:
                raise DataError(
                    f"header {header} lacks column(s) {absent}; map them with subject=…", path=str(p), line=1
                )
            for row in reader:
                add(reader.line_num, row)
    return b.build(name or p.stem, read_labels(labels))


# --- labels ---------------------------------------------------------------------------------------
def read_labels(labels: LabelsArg) -> dict[str, str]:
    """A labels mapping, or label file(s) with ``id\\tlabel`` lines, as a dict."""
    if labels is None:
        return {}
    if isinstance(labels, Mapping):
        return {str(k): str(v) for k, v in labels.items()}
    files = [labels] if isinstance(labels, str | os.PathLike) else list(labels)
    out: dict[str, str] = {}
    for f in files:
        for lineno, line in _lines(Path(f)):
            ident, sep, label = line.partition("\t")
            if not sep:
                raise DataError(f"expected 'id<TAB>label', got {line[:80]!r}", path=str(f), line=lineno)
            out[ident] = label
    return out


def wikidata_label_files(path: PathLike) -> list[Path]:
    """``wd_id2entity_text.txt`` / ``wd_id2relation_text.txt`` beside ``path`` (those that exist)."""
    p = Path(path)
    return [p.parent / f for f in WIKIDATA_LABEL_FILES if (p.parent / f).exists()]


# --- dispatch ---------------------------------------------------------------------------------------
def sniff_format(path: PathLike) -> str:
    """Guess the format of a KG file from its name and first data lines."""
    p = Path(path)
    if p.suffix in {".jsonl", ".ndjson"}:
        return "jsonl"
    if p.suffix == ".csv":
        return "csv"
    head: list[str] = []
    for _, line in _lines(p):
        head.append(line)
        if len(head) >= 20:
            break
    if not head:
        raise DataError("no data lines (empty file?)", path=str(p))
    first = head[0].split("\t")
    if {"subject_id", "relation_id", "object_id"} <= set(first):
        return "timequestions"
    if {"subject", "relation", "object"} <= set(first):
        return "csv"
    rows = [line.split("\t") for line in head]
    if all(len(f := line.split()) >= 4 and all(_INT.match(x) for x in f[:4]) for line in head):
        return "icews_ids"
    widths = {len(r) for r in rows}
    if widths == {5} and all(_WIKIDATA_ID.match(r[0]) and _WIKIDATA_ID.match(r[1]) for r in rows):
        return "wikidata"
    if widths == {4}:
        return "quadruples"
    if widths <= {4, 5}:
        return "tsv"
    raise DataError(
        f"cannot detect the KG format (rows of {sorted(widths)} tab-separated columns); "
        f"pass format= one of {FORMATS}",
        path=str(p),
    )


def _normalise_format(fmt: str) -> str:
    fmt = _ALIASES.get(fmt, fmt)
    if fmt not in FORMATS and fmt != "auto":
        raise ConfigError(f"unknown KG format {fmt!r}; use auto or one of {FORMATS}")
    return fmt


def source_files(path: PathLike, fmt: str, labels: LabelsArg = None, **options: Any) -> list[Path]:
    """Every file a load reads (the KG file, id maps, label files): the cache key hashes their bytes."""
    p = Path(path)
    files = [p]
    if fmt == "icews_ids":
        aux = icews_aux_files(p)
        for key in ("entity2id", "relation2id", "ts2id"):
            given = options.get(key)
            if given is not None:
                files.append(Path(given))
            elif key in aux and not (key == "ts2id" and options.get("base") is not None):
                files.append(aux[key])
    if labels is None and fmt == "wikidata":
        files.extend(wikidata_label_files(p))
    elif labels is not None and not isinstance(labels, Mapping):
        files.extend(Path(f) for f in ([labels] if isinstance(labels, str | os.PathLike) else labels))
    return files


_LOADERS: dict[str, Callable[..., TemporalKG]] = {
    "quadruples": load_quadruples,
    "icews_ids": load_icews_ids,
    "wikidata": load_wikidata,
    "timequestions": load_timequestions,
    "tsv": load_tsv,
    "csv": load_table,
    "jsonl": load_table,
}


def load_kg(
    path: PathLike,
    format: str = "auto",
    strict: bool = True,
    cache: bool = True,
    labels: LabelsArg = None,
    **options: Any,
) -> TemporalKG:
    """Load a KG file (``"demo"`` = the bundled demo KG), through the binary cache when ``cache``.

    ``options`` go to the format's loader (e.g. ``base=``/``step=`` for ``icews_ids``, column names for
    ``csv``/``jsonl``). The attached ``kg.load_report`` says what was read (``from_cache`` when cached)."""
    if str(path) == "demo" and not Path(path).exists():
        return load_demo_kg()
    p = Path(path).expanduser()
    if not p.exists():
        raise NotFoundError(f"KG file {str(p)!r} does not exist")
    if p.is_dir():
        raise DataError("is a directory; pass the KG file inside it", path=str(p))
    fmt = _normalise_format(format)
    if fmt == "auto":
        fmt = sniff_format(p)
    loader = _LOADERS[fmt]
    kwargs: dict[str, Any] = dict(options, strict=strict, labels=labels)

    def build() -> TemporalKG:
        return loader(p, **kwargs)

    if not cache:
        return build()
    from .cache import cache_key, cached_build

    key_options = {
        "format": fmt,
        "strict": strict,
        "options": {k: str(v) for k, v in sorted(options.items())},
    }
    if isinstance(labels, Mapping):
        key_options["labels"] = sorted(labels.items())
    key = cache_key(source_files(p, fmt, labels, **options), key_options)
    kg = cached_build(key, build)
    kg.name = options.get("name") or p.stem
    return kg


DEMO_KG_RESOURCE = "demo_kg.tsv"


def load_demo_kg() -> TemporalKG:
    """The bundled demo KG (``tkgqa/data/demo_kg.tsv``, our TSV format), named ``demo``."""
    resource = resources.files("tkgqa.data").joinpath(DEMO_KG_RESOURCE)
    if not resource.is_file():
        raise NotFoundError(
            f"the bundled demo KG {DEMO_KG_RESOURCE!r} is missing from the tkgqa.data package"
        )
    text = resource.read_text(encoding="utf-8")
    b = _Builder(DEMO_KG_RESOURCE, "tsv", strict=True)
    rows = (
        (i, line.rstrip("\r"))
        for i, line in enumerate(text.split("\n"), 1)
        if line.strip() and not line.startswith("#")
    )
    _parse_delimited(b, rows, (4, 5))
    return b.build("demo")

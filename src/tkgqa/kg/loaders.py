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

Each format is one ``register_format(KGFormat(...))`` at the end of this module (name, suffixes, loader,
detection); :func:`load_kg` dispatches through :data:`~tkgqa.kg.formats.KG_FORMATS`, where other
distributions add formats through the ``tkgqa.kg_formats`` entry-point group.

Every loader skips a malformed line (or entry) and counts it in the :class:`LoadReport` attached as
``kg.load_report`` (the default: one flaw in a published file does not stop a run; ``tkgqa eval`` lists
them in ``report.json``'s ``warnings``), or raises :class:`DataError` with ``file:line``
(``strict=True``; the CLI's ``--strict``). A file whose every line is malformed is a :class:`DataError` even
so (a KG of 0 facts read from a non-empty file is another format, or no KG). Names follow
:mod:`tkgqa.kg.validate`.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError, NotFoundError, TKGQAError
from ..sanitize import clean_json, clean_text, shorten
from ..time import TimePoint, parse_bound
from ..userfiles import PathLike
from .builder import FactBuilder, parse_delimited
from .builder import LoadReport as LoadReport
from .builder import load_warnings as load_warnings
from .crlt import is_crlt, load_crlt
from .formats import KG_FORMATS as KG_FORMATS
from .formats import KGFormat as KGFormat
from .formats import LabelsArg as LabelsArg
from .formats import (
    check_file,
    data_lines,
    directory_format,
    get_format,
    not_utf8,
    register_format,
    resolve_format,
)
from .formats import format_names as format_names
from .formats import read_labels as read_labels
from .formats import sniff_format as sniff_format
from .memory import TemporalKG
from .plain_reader import read_plain_delimited

WIKIDATA_LABEL_FILES = ("wd_id2entity_text.txt", "wd_id2relation_text.txt")
_WIKIDATA_ID = re.compile(r"^[QP]\d+$")
_INT = re.compile(r"^-?\d+$")


# --- the formats ----------------------------------------------------------------------------------
def _load_delimited(
    path: PathLike, fmt: str, widths: tuple[int, ...], strict: bool, name: str | None, labels: LabelsArg
) -> TemporalKG:
    """A file of tab-separated rows of ``widths`` fields: read vectorised when it is plain
    (:func:`~tkgqa.kg.plain_reader.read_plain_delimited`), else line by line
    (:func:`~tkgqa.kg.builder.parse_delimited`); the same KG either way."""
    p = Path(path)
    b = FactBuilder(str(p), fmt, strict)
    if not read_plain_delimited(b, p, widths):
        parse_delimited(b, data_lines(p), widths)
    return b.build(name or p.stem, read_labels(labels))


def load_quadruples(
    path: PathLike, *, strict: bool = False, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """MultiTQ / ICEWS quadruples ``subject\\trelation\\tobject\\tdate``."""
    return _load_delimited(path, "quadruples", (4,), strict, name, labels)


def load_tsv(
    path: PathLike, *, strict: bool = False, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """Our TSV format ``s r o start [end]`` (any ISO granularity, ``#`` comments, empty end = open)."""
    return _load_delimited(path, "tsv", (4, 5), strict, name, labels)


def load_wikidata(
    path: PathLike, *, strict: bool = False, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """CronQuestions-style quintuples with Wikidata ids; labels from ``labels`` or the label files beside."""
    files = labels if labels is not None else wikidata_label_files(Path(path))
    return _load_delimited(path, "wikidata", (5,), strict, name, files)


def load_timequestions(
    path: PathLike, *, strict: bool = False, name: str | None = None, labels: LabelsArg = None
) -> TemporalKG:
    """The TimeQuestions tkbc TSV (header ``split subject_id subject_label … start_year end_year``)."""
    p = Path(path)
    b = FactBuilder(str(p), "timequestions", strict)
    rows = data_lines(p)
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
        check_file(p, "id map")
        try:
            data = json.loads(p.read_bytes().decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise not_utf8(p, "id map") from None
        except (ValueError, RecursionError) as exc:
            raise DataError(f"invalid JSON id map: {str(exc)[:200]}", path=str(p)) from None
        except OSError as exc:
            raise DataError(f"cannot read this id map ({exc.strerror or exc})", path=str(p)) from None
        if not isinstance(data, dict):
            raise DataError("a JSON id map must be an object {name: id}", path=str(p))
        bad = next((n for n, i in data.items() if isinstance(i, bool) or not _INT.match(str(i))), None)
        if bad is not None:
            raise DataError(
                f"the id of {shorten(bad)} is {shorten(str(data[bad]))}, not an integer", path=str(p)
            )
        return {int(i): clean_text(str(n)) for n, i in data.items()}
    out: dict[int, str] = {}
    for lineno, line in data_lines(p, "id map"):
        name, sep, ident = line.rpartition("\t")
        if not sep or not _INT.match(ident.strip()):
            raise DataError(f"expected 'name<TAB>id', got {shorten(line)}", path=str(p), line=lineno)
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
    strict: bool = False,
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
            try:
                point = parse_bound(text)
            except DataError:
                raise DataError(
                    f"time id {i}: cannot parse time {shorten(text)}", path=str(ts_file)
                ) from None
            if point is not None:
                days[i] = point
    elif base is None:
        raise ConfigError(f"{p}: pass base='YYYY-MM-DD' (date of step {first_step}) or a ts2id map")
    base_day = TimePoint.of(base).first_day if base is not None else 0
    if step < 1:
        raise ConfigError("step (time units per day) must be >= 1")
    b = FactBuilder(str(p), "icews_ids", strict)
    for lineno, line in data_lines(p):
        b.n_lines += 1
        parts = line.split()
        if len(parts) < 4 or not all(_INT.match(x) for x in parts[:4]):
            b.fail(lineno, f"expected 4 integer columns 's r o t', got {shorten(line)}")
            continue
        s, r, o, t = (int(x) for x in parts[:4])
        if s not in ents or o not in ents or r not in rels:
            b.fail(lineno, f"id not in the entity/relation maps: {shorten(line)}")
            continue
        point = days.get(t)
        if point is None:
            if ts_file is not None:
                b.fail(lineno, f"time id {t} not in the ts2id map")
                continue
            try:
                point = days[t] = TimePoint.from_ordinal(base_day + (t - first_step) // step)
            except (ValueError, OverflowError, DataError):
                b.fail(lineno, f"time step {t} is out of range (base {base}, step {step})")
                continue
        b.add_points(ents[s], rels[r], ents[o], point, point, line=lineno)
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
    strict: bool = False,
    name: str | None = None,
    labels: LabelsArg = None,
) -> TemporalKG:
    """A CSV (header row) or JSONL file; the keywords name the columns. A missing ``end`` column/key makes
    point events; an empty/null end is open. ``delimiter`` defaults to tab for ``.tsv`` files or a header
    with tabs, else comma."""
    p = Path(path)
    check_file(p)
    is_jsonl = p.suffix in {".jsonl", ".ndjson"}
    b = FactBuilder(str(p), "jsonl" if is_jsonl else "csv", strict)
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
        for lineno, line in data_lines(p):
            try:
                row = clean_json(json.loads(line))
            except (ValueError, RecursionError) as exc:
                b.n_lines += 1
                b.fail(lineno, f"invalid JSON: {str(exc)[:200]}")
                continue
            if not isinstance(row, dict):
                b.n_lines += 1
                b.fail(lineno, "expected a JSON object per line")
                continue
            add(lineno, row)
    else:
        _read_csv(p, add, delimiter, (*want.values(), start))
    return b.build(name or p.stem, read_labels(labels))


def _read_csv(
    p: Path,
    add: Callable[[int, Mapping[str, Any]], None],
    delimiter: str | None,
    needed: Sequence[str],
) -> None:
    """Feed the rows of a CSV file with a header to ``add``; bad bytes and broken quoting are DataErrors."""
    reader: csv.DictReader[str] | None = None
    try:
        with p.open(encoding="utf-8-sig", newline="") as fh:
            sep = delimiter or ("\t" if p.suffix == ".tsv" or "\t" in fh.readline() else ",")
            fh.seek(0)
            reader = csv.DictReader(fh, delimiter=sep)
            header = reader.fieldnames or []
            absent = [c for c in needed if c not in header]
            if absent:
                shown = shorten(str(header), 200)
                raise DataError(
                    f"header {shown} lacks column(s) {absent}; map them with subject=…", path=str(p), line=1
                )
            for row in reader:
                add(reader.line_num, row)
    except UnicodeDecodeError:
        raise not_utf8(p) from None
    except csv.Error as exc:
        line = reader.line_num if reader is not None else None
        raise DataError(f"unreadable CSV ({str(exc)[:200]}); fix the line", path=str(p), line=line) from None
    except OSError as exc:
        raise DataError(f"cannot read this KG file ({exc.strerror or exc})", path=str(p)) from None


# --- labels ---------------------------------------------------------------------------------------
def wikidata_label_files(path: PathLike) -> list[Path]:
    """``wd_id2entity_text.txt`` / ``wd_id2relation_text.txt`` beside ``path`` (those that exist)."""
    p = Path(path)
    return [p.parent / f for f in WIKIDATA_LABEL_FILES if (p.parent / f).exists()]


# --- the format registry (one registration per format) ---------------------------------------------
def _header(head: Sequence[str]) -> set[str]:
    return set(re.split(r"[\t,]", head[0].strip())) if head else set()


def _widths(head: Sequence[str]) -> set[int]:
    return {len(line.split("\t")) for line in head}


def _is_icews_ids(head: Sequence[str]) -> bool:
    return all(len(f := line.split()) >= 4 and all(_INT.match(x) for x in f[:4]) for line in head)


def _is_wikidata(head: Sequence[str]) -> bool:
    rows = [line.split("\t") for line in head]
    return _widths(head) == {5} and all(_WIKIDATA_ID.match(r[0]) and _WIKIDATA_ID.match(r[1]) for r in rows)


def _icews_files(path: Path, options: Mapping[str, Any]) -> list[Path]:
    aux = icews_aux_files(path)
    files = []
    for key in ("entity2id", "relation2id", "ts2id"):
        given = options.get(key)
        if given is not None:
            files.append(Path(given))
        elif key in aux and not (key == "ts2id" and options.get("base") is not None):
            files.append(aux[key])
    return files


def _wikidata_files(path: Path, options: Mapping[str, Any]) -> list[Path]:
    return wikidata_label_files(path) if options.get("labels") is None else []


TIMEQUESTIONS = register_format(
    KGFormat(
        "timequestions",
        load_timequestions,
        detect=lambda head: {"subject_id", "relation_id", "object_id"} <= _header(head),
        priority=10,
    )
)
CSV = register_format(
    KGFormat(
        "csv",
        load_table,
        suffixes=(".csv",),
        detect=lambda head: {"subject", "relation", "object"} <= _header(head),
        priority=20,
    )
)
JSONL = register_format(
    KGFormat(
        "jsonl",
        load_table,
        suffixes=(".jsonl", ".ndjson"),
    )
)
ICEWS_IDS = register_format(
    KGFormat(
        "icews_ids",
        load_icews_ids,
        detect=_is_icews_ids,
        priority=30,
        aux_files=_icews_files,
    )
)
WIKIDATA = register_format(
    KGFormat(
        "wikidata",
        load_wikidata,
        aliases=("cronquestions", "quintuples"),
        detect=_is_wikidata,
        priority=40,
        aux_files=_wikidata_files,
    )
)
QUADRUPLES = register_format(
    KGFormat(
        "quadruples",
        load_quadruples,
        aliases=("icews", "multitq"),
        detect=lambda head: _widths(head) == {4},
        priority=80,
    )
)
TSV = register_format(
    KGFormat(
        "tsv",
        load_tsv,
        detect=lambda head: _widths(head) <= {4, 5},
        priority=90,
    )
)
CRLT = register_format(
    KGFormat(
        "crlt",
        load_crlt,
        aliases=("crlt_kgqa",),
        detect=is_crlt,
        priority=5,
        description="CR-LT-KGQA JSON (R3's data): the union of the entries' KG Triples (tkgqa.kg.crlt)",
    )
)


def source_files(path: PathLike, fmt: str, labels: LabelsArg = None, **options: Any) -> list[Path]:
    """Every file a load reads (the KG file, id maps, label files): the cache key hashes their bytes."""
    p = Path(path)
    files = [p, *get_format(fmt).files(p, {**options, "labels": labels})]
    if labels is not None and not isinstance(labels, Mapping):
        files.extend(Path(f) for f in ([labels] if isinstance(labels, str | os.PathLike) else labels))
    return files


#: Who is told, once per load, what a loaded KG skipped (``tkgqa``'s CLI prints it on stderr, once).
_SKIP_LISTENERS: list[Callable[[str], None]] = []


def add_skip_listener(listener: Callable[[str], None]) -> None:
    """Call ``listener(sentence)`` for what every later :func:`load_kg` skipped (the CLI installs one)."""
    if listener not in _SKIP_LISTENERS:
        _SKIP_LISTENERS.append(listener)


def _announce(kg: TemporalKG) -> TemporalKG:
    for warning in load_warnings(kg):
        for listener in list(_SKIP_LISTENERS):
            listener(warning)
    return kg


def load_kg(
    path: PathLike,
    format: str = "auto",
    strict: bool = False,
    cache: bool = True,
    labels: LabelsArg = None,
    **options: Any,
) -> TemporalKG:
    """Load a KG file (``"demo"`` = the bundled demo KG), through the binary cache when ``cache``.

    ``format``: ``"auto"`` (sniffed), a name or alias registered in
    :data:`~tkgqa.kg.formats.KG_FORMATS` (the built-ins of this module, or a plugin's). ``options`` go to
    the format's loader (e.g. ``base=``/``step=`` for ``icews_ids``, column names for ``csv``/``jsonl``).
    The attached ``kg.load_report`` says what was read (``from_cache`` when cached); what it skipped is
    told to the listeners of :func:`add_skip_listener` (:func:`load_warnings` reads it back)."""
    if str(path) == "demo" and not Path(path).exists():
        return load_demo_kg()
    try:
        p = Path(path).expanduser()
    except RuntimeError:  # "~user" of an unknown user
        p = Path(path)
    fmt = directory_format(format, p)  # a folder holding one KG (a Parquet export)
    if fmt is None:
        check_file(p)
        fmt = resolve_format(format, p)
    cache = cache and fmt.cacheable
    kwargs: dict[str, Any] = dict(options, strict=strict, labels=labels)

    def build() -> TemporalKG:
        try:
            kg = fmt(p, **kwargs)
        except TKGQAError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
            # the net under every format (a plugin's too): bad input is a DataError, never a traceback
            raise DataError(
                f"cannot read this file as {fmt.name} ({type(exc).__name__}: {shorten(str(exc), 200)})",
                path=str(p),
            ) from exc
        except OSError as exc:
            raise DataError(f"cannot read this KG file ({exc.strerror or exc})", path=str(p)) from None
        if kg.load_report is None:  # a loader that does not report (a plugin's): what we know
            kg.load_report = LoadReport(str(p), fmt.name, n_facts=len(kg))
        return kg

    if not cache:
        return _announce(build())
    from .cache import cache_key, cached_build

    key_options = {
        "format": fmt.name,
        "strict": strict,
        "options": {k: str(v) for k, v in sorted(options.items())},
    }
    if isinstance(labels, Mapping):
        key_options["labels"] = sorted(labels.items())
    key = cache_key(source_files(p, fmt.name, labels, **options), key_options)
    kg = cached_build(key, build)
    kg.name = options.get("name") or p.stem
    report = kg.load_report
    if report is not None and report.path != str(p):  # the same content cached from another file's name
        errors = tuple(e.replace(report.path, str(p), 1) for e in report.first_errors)
        kg.load_report = replace(report, path=str(p), first_errors=errors)
    return _announce(kg)


DEMO_KG_RESOURCE = "demo_kg.tsv"


def load_demo_kg() -> TemporalKG:
    """The bundled demo KG (``tkgqa/data/demo_kg.tsv``, our TSV format), named ``demo``."""
    resource = resources.files("tkgqa.data").joinpath(DEMO_KG_RESOURCE)
    if not resource.is_file():
        raise NotFoundError(
            f"the bundled demo KG {DEMO_KG_RESOURCE!r} is missing from the tkgqa.data package"
        )
    text = resource.read_text(encoding="utf-8")
    b = FactBuilder(DEMO_KG_RESOURCE, "tsv", strict=True)
    rows = (
        (i, line.rstrip("\r"))
        for i, line in enumerate(text.split("\n"), 1)
        if line.strip() and not line.startswith("#")
    )
    parse_delimited(b, rows, (4, 5))
    return b.build("demo")

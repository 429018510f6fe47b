"""KG file formats as a registry: one :class:`KGFormat` per format (name, suffixes, loader, detection).

:func:`tkgqa.kg.loaders.load_kg` dispatches through :data:`KG_FORMATS`: ``format="auto"`` picks the format
whose ``suffixes`` match the file name, else the first (by ``priority``) whose ``detect`` accepts the first
data lines. The built-in formats register in :mod:`tkgqa.kg.loaders` (imported with :mod:`tkgqa.kg`, so the
registry is complete at import). A new format is one registration::

    register_format(KGFormat("pipe", load_pipe, suffixes=(".pipe",), detect=lambda head: "|" in head[0]))

or, from another distribution, an entry point in the ``tkgqa.kg_formats`` group naming a :class:`KGFormat`
(or a bare loader function ``load(path, *, strict, labels, **options) -> TemporalKG``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError, NotFoundError
from ..registry import Registry
from ..sanitize import shorten
from ..userfiles import PathLike

if TYPE_CHECKING:
    from .memory import TemporalKG

LabelsArg = Mapping[str, str] | PathLike | Sequence[PathLike] | None
#: The first data lines of a file (blank lines and ``#`` comments skipped) → "this is my format".
Detect = Callable[[Sequence[str]], bool]
#: ``(path, options)`` → the other files a load reads (id maps, label files): they go into the cache key.
AuxFiles = Callable[[Path, Mapping[str, Any]], Sequence[Path]]
SNIFF_LINES = 20


@dataclass(frozen=True)
class KGFormat:
    """One KG file format. ``loader(path, *, strict, labels, **options)`` returns a ``TemporalKG``.

    ``suffixes`` (lower case, with the dot) select the format from the file name; ``detect`` from the first
    :data:`SNIFF_LINES` data lines, tried by ascending ``priority`` (built-ins: 10…90; a catch-all should
    come last); ``aliases`` are other names accepted as ``format=``; ``aux_files`` lists the other files a
    load reads (so an edited id map or label file invalidates the binary cache)."""

    name: str
    loader: Callable[..., TemporalKG]
    suffixes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    detect: Detect | None = None
    priority: int = 50
    aux_files: AuxFiles | None = None
    description: str = ""
    cacheable: bool = True  # False: already a binary store (duckdb, parquet), loaded without the npz cache
    directory: bool = False  # the KG is a directory (a Parquet export); ``detect`` gets its file names
    persistent: bool = False  # a store served in place from its file (DuckDB): appends to it are kept

    def __call__(self, path: PathLike, **options: Any) -> TemporalKG:
        return self.loader(path, **options)

    def files(self, path: Path, options: Mapping[str, Any]) -> list[Path]:
        return list(self.aux_files(path, options)) if self.aux_files is not None else []


KG_FORMATS: Registry[TemporalKG] = Registry("KG format")


def register_format(fmt: KGFormat) -> KGFormat:
    """Register ``fmt`` under its name and its aliases."""
    for name in (fmt.name, *fmt.aliases):
        KG_FORMATS.add(name, fmt)
    return fmt


def _as_format(name: str, found: Callable[..., Any]) -> KGFormat:
    if isinstance(found, KGFormat):
        return found
    return KGFormat(name.strip().lower(), found)  # a plugin's bare loader function


def get_format(name: str) -> KGFormat:
    """The format registered as ``name`` (or an alias); ConfigError listing the known ones otherwise."""
    return _as_format(name, KG_FORMATS.factory(name))


def all_formats() -> list[KGFormat]:
    """Every registered format once (aliases folded), by ``priority``; a plugin format that fails to
    import is skipped with a warning (naming it with ``format=`` raises the error)."""
    seen: dict[str, KGFormat] = {}
    for key, found in KG_FORMATS.load_all(on_error="warn").items():
        fmt = _as_format(key, found)
        seen.setdefault(fmt.name, fmt)
    return sorted(seen.values(), key=lambda f: f.priority)


def format_names() -> list[str]:
    """The canonical names of the registered formats (no aliases), sorted."""
    names: set[str] = set()
    for key in KG_FORMATS.names():
        if KG_FORMATS.reference(key) is not None:  # a plugin not imported yet: its entry-point name
            names.add(key)
        else:
            names.add(_as_format(key, KG_FORMATS.factory(key)).name)
    return sorted(names)


def persistent_suffixes() -> tuple[str, ...]:
    """The file-name suffixes of the formats registered with ``persistent`` (``.duckdb``, ``.ddb``)."""
    return tuple(suffix for fmt in all_formats() if fmt.persistent for suffix in fmt.suffixes)


def is_persistent_store(path: PathLike | None) -> bool:
    """Whether ``path`` names a persistent store by its suffix: a format registered with ``persistent``
    (``store.duckdb`` or ``store.ddb``), which the service opens in place and may append to."""
    if path is None:
        return False
    suffix = Path(path).suffix.lower()
    return bool(suffix) and suffix in persistent_suffixes()


def check_file(path: Path, kind: str = "KG file") -> None:
    """Raise a project error unless ``path`` is a regular file that exists: NotFoundError (missing, named
    as ``kind``), DataError (a directory, a FIFO/socket/device, which would block forever, unreadable)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise NotFoundError(f"{kind} {str(path)!r} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise DataError(f"cannot read this {kind} ({_reason(exc)})", path=str(path)) from None
    if stat.S_ISDIR(mode):
        raise DataError(f"is a directory; pass the {kind} inside it", path=str(path))
    if not stat.S_ISREG(mode):
        raise DataError(
            f"is not a regular file (a FIFO, socket or device); write the {kind} to a file first",
            path=str(path),
        )


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)[:200]


def first_bad_utf8(path: Path) -> tuple[int, str]:
    """``(line number, what is wrong)`` of the first line of ``path`` that is not valid UTF-8."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return lineno, f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}: {exc.reason}"
    return 0, "cut inside a character at the end"


def not_utf8(path: Path, kind: str = "KG file") -> DataError:
    """The DataError for a file that is not UTF-8 text, naming the first bad line."""
    try:
        lineno, what = first_bad_utf8(path)
    except OSError:
        lineno, what = 0, "unreadable"
    return DataError(
        f"this {kind} is not UTF-8 text ({what}); re-save it as UTF-8",
        path=str(path),
        line=lineno or None,
    )


def data_lines(path: Path, kind: str = "KG file") -> Iterator[tuple[int, str]]:
    """``(line number, text without newline)`` of the data lines (blank lines and ``#`` comments skipped).

    A UTF-8 byte-order mark is dropped; a missing file is a NotFoundError naming ``kind`` ("labels file",
    "id map"…); a directory, FIFO or device, an unreadable or non-UTF-8 file a DataError with its line."""
    check_file(path, kind)
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.rstrip("\r\n")
                if line and not line.startswith("#") and line.strip():
                    yield lineno, line
    except UnicodeDecodeError:
        raise not_utf8(path, kind) from None
    except OSError as exc:
        raise DataError(f"cannot read this {kind} ({_reason(exc)})", path=str(path)) from None


def sniff_format(path: PathLike) -> str:
    """Guess the format of a KG file from its name (``suffixes``) and first data lines (``detect``)."""
    p = Path(path)
    formats = all_formats()
    suffix = p.suffix.lower()
    for fmt in formats:
        if suffix and suffix in fmt.suffixes:
            return fmt.name
    numbered: list[tuple[int, str]] = []
    for item in data_lines(p):
        numbered.append(item)
        if len(numbered) >= SNIFF_LINES:
            break
    if not numbered:
        raise DataError("no data lines (empty file?)", path=str(p))
    head = [line for _, line in numbered]
    for fmt in formats:
        if fmt.detect is not None and fmt.detect(head):
            return fmt.name
    raise DataError(
        f"cannot detect the KG format: {_odd_line(numbered)}; "
        f"name the format with --format NAME, one of {', '.join(f.name for f in formats)}",
        path=str(p),
    )


def _odd_line(numbered: Sequence[tuple[int, str]]) -> str:
    """The first line whose tab-separated width is not 4 or 5 (or differs from the first line's), named."""
    first = len(numbered[0][1].split("\t"))
    for lineno, line in numbered:
        width = len(line.split("\t"))
        if width not in (4, 5) or width != first:
            return (
                f"line {lineno} has {width} tab-separated column(s), {shorten(line, 60)} "
                "(quadruple files have 4: subject, relation, object, date; tsv/wikidata 5: … start, end)"
            )
    widths = sorted({len(line.split("\t")) for _, line in numbered})
    return f"lines {numbered[0][0]}–{numbered[-1][0]} have {widths} tab-separated columns but match no format"


def directory_format(format: str, path: Path) -> KGFormat | None:
    """The directory format (``directory=True``, e.g. a Parquet export) that reads the folder ``path``:
    the one named by ``format``, or with ``"auto"`` the first whose ``detect`` accepts its file names;
    ``None`` when ``path`` is not a directory or no directory format claims it."""
    if not path.is_dir():
        return None
    name = format.strip().lower()
    if name != "auto":
        fmt = get_format(name) if name in KG_FORMATS else None
        return fmt if fmt is not None and fmt.directory else None
    names = sorted(p.name for p in path.iterdir())
    for fmt in all_formats():
        if fmt.directory and fmt.detect is not None and fmt.detect(names):
            return fmt
    return None


def resolve_format(format: str, path: PathLike) -> KGFormat:
    """``format`` (a name or alias) as a :class:`KGFormat`; ``"auto"`` sniffs ``path``."""
    name = format.strip().lower()
    if name == "auto":
        return get_format(sniff_format(path))
    if name not in KG_FORMATS:
        raise ConfigError(f"unknown KG format {format!r}; use auto or one of {', '.join(format_names())}")
    return get_format(name)


def read_labels(labels: LabelsArg) -> dict[str, str]:
    """A labels mapping, or label file(s) with ``id\\tlabel`` lines, as a dict."""
    if labels is None:
        return {}
    if isinstance(labels, Mapping):
        return {str(k): str(v) for k, v in labels.items()}
    files = [labels] if isinstance(labels, str | os.PathLike) else list(labels)
    out: dict[str, str] = {}
    for f in files:
        for lineno, line in data_lines(Path(f), "labels file"):
            ident, sep, label = line.partition("\t")
            if not sep:
                raise DataError(f"expected 'id<TAB>label', got {shorten(line)}", path=str(f), line=lineno)
            out[ident] = label
    return out

"""The data catalogue: every benchmark and recording tkgqa reads, where it comes from, and where it lives.

The catalogue is data (``catalogue.json`` beside this module); this module reads it into frozen objects and
answers "which entry is this name", "which folder under the data root holds it" and "is it here". Each pin is
``github:OWNER/REPO@COMMIT:PATH`` with the file's git blob id (sha1 of ``blob <size>\\0`` + content, what the
authors' own git tree records) and its size where known, so a downloaded file is checked against the authors'
repository without trusting the server it came from. The pins are those of ``../shared/data/UPSTREAM.tsv``.

The data root is :func:`tkgqa.home.data_root` (``$TKGQA_DATA``, else ``$TKGQA_HOME/data``); an entry's files
sit in ``<data root>/<folder>/<dest>``, laid out like the shared data folder this project's CI reads, so a
fetched copy and that folder are read by the same code.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from ...errors import ConfigError, DataError, NotFoundError
from ...home import DATA_ENV, data_root

CATALOGUE_FILE = "catalogue.json"
KINDS = ("dataset", "recording")
#: Where a ``github:`` pin's raw file is served from; a mirror has the same layout (OWNER/REPO/COMMIT/PATH).
GITHUB_RAW = "https://raw.githubusercontent.com"
#: The record of where an entry's files came from, one per folder (keyed by entry name).
SOURCE_RECORD = "SOURCE.json"


def safe_relative(path: str, what: str) -> PurePosixPath:
    """``path`` as a relative POSIX path: no ``..``, no absolute start, no empty part (ConfigError else)."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or any(part in ("", ".", "..") for part in p.parts) or "\\" in path:
        raise ConfigError(f"{what} {path!r} must be a relative path without '..'")
    return p


@dataclass(frozen=True)
class Pin:
    """One upstream file: ``github:OWNER/REPO@COMMIT:PATH``, its git blob id and size (``None``: not
    recorded, checked by the blob id alone)."""

    repo: str
    commit: str
    path: str
    blob: str
    size: int | None

    @classmethod
    def parse(cls, source: str, blob: str, size: int | None) -> Pin:
        prefix, _, rest = source.partition(":")
        repo_commit, _, path = rest.partition(":")
        repo, _, commit = repo_commit.partition("@")
        if prefix != "github" or repo.count("/") != 1 or len(commit) != 40 or not path:
            raise ConfigError(f"catalogue source {source!r} is not github:OWNER/REPO@COMMIT:PATH")
        if len(blob) != 40 or any(c not in "0123456789abcdef" for c in blob):
            raise ConfigError(f"catalogue blob id {blob!r} of {source!r} is not 40 hex digits")
        safe_relative(path, "upstream path")
        return cls(repo, commit, path, blob, size)

    @property
    def source(self) -> str:
        return f"github:{self.repo}@{self.commit}:{self.path}"

    def url(self, base: str = GITHUB_RAW) -> str:
        """The file under ``base`` (GitHub's raw host, a mirror) as ``BASE/OWNER/REPO/COMMIT/PATH``."""
        from urllib.parse import quote

        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{quote(self.path)}"


@dataclass(frozen=True)
class CatalogueFile:
    """A pinned file and where it goes (``dest``, relative to the entry's folder)."""

    dest: str
    pin: Pin


@dataclass(frozen=True)
class Conversion:
    """A conversion (the project's own code, :mod:`.convert`): ``inputs`` → ``outputs`` (entry-relative)."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class ManualSource:
    """Files the authors publish only where no program may fetch them (a drive): the user downloads ``what``
    from ``url`` and runs ``tkgqa data import``; ``layout`` is the folder inside the download that holds
    ``files``; ``verifiable`` says whether a checksum was published."""

    url: str
    what: str
    layout: str
    files: tuple[str, ...]
    verifiable: bool = False


@dataclass(frozen=True)
class Entry:
    """One catalogue entry: a dataset (``datasets``: the loader names that read its folder) or a recording."""

    name: str
    kind: str
    folder: str
    title: str
    holds: str
    paper: str
    licence: str
    files: tuple[CatalogueFile, ...]
    licence_short: str = ""
    datasets: tuple[str, ...] = ()
    convert: tuple[Conversion, ...] = ()
    manual: ManualSource | None = None
    replay: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def known_size(self) -> int:
        """Bytes of the files whose size is recorded (others are large files of unrecorded size)."""
        return sum(f.pin.size or 0 for f in self.files)

    @property
    def sizes_complete(self) -> bool:
        return all(f.pin.size is not None for f in self.files)

    def outputs(self) -> tuple[str, ...]:
        """Every file the entry leaves in its folder: the pinned files, the conversions' outputs, and the
        manual files."""
        out = [f.dest for f in self.files]
        out += [o for c in self.convert for o in c.outputs]
        out += list(self.manual.files if self.manual else ())
        return tuple(dict.fromkeys(out))

    @property
    def kg_file(self) -> str | None:
        """The entry's whole KG, relative to its folder: the file it leaves named ``full.txt`` (``None``:
        none; the questions of such a dataset carry their own facts)."""
        return next((rel for rel in self.outputs() if rel.rsplit("/", 1)[-1] == "full.txt"), None)

    def folder_in(self, root: Path | None = None) -> Path:
        return (data_root() if root is None else root) / self.folder

    def missing(self, root: Path | None = None) -> list[str]:
        """The entry's files not present under ``root`` (default: the data root)."""
        folder = self.folder_in(root)
        return [rel for rel in self.outputs() if not (folder / rel).is_file()]

    def sources(self) -> list[str]:
        """The upstream repositories at their commits (``OWNER/REPO@COMMIT``), once each."""
        return list(dict.fromkeys(f"{f.pin.repo}@{f.pin.commit}" for f in self.files))


@dataclass(frozen=True)
class Catalogue:
    entries: tuple[Entry, ...]
    about: str = ""
    _by_name: dict[str, Entry] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for e in self.entries:
            if e.name in self._by_name:
                raise ConfigError(f"catalogue entry {e.name!r} appears twice")
            self._by_name[e.name] = e

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def get(self, name: str) -> Entry:
        """The entry ``name`` (a catalogue name, or a dataset loader name such as ``crlt_qa``); NotFoundError
        with near matches otherwise."""
        key = name.strip().lower()
        found = self._by_name.get(key) or self.for_dataset(key)
        if found is not None:
            return found
        known = self.names() + [d for e in self.entries for d in e.datasets if d not in self._by_name]
        close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
        raise NotFoundError(
            f"no data named {name!r} in the catalogue (`tkgqa data list` shows them all)", suggestions=close
        )

    def find(self, name: str) -> Entry | None:
        """The entry named ``name`` (its catalogue name, not a loader name), ``None`` when there is none."""
        return self._by_name.get(name.strip().lower())

    def for_dataset(self, dataset: str) -> Entry | None:
        """The entry whose folder the loader ``dataset`` reads (``None``: no catalogued data for it)."""
        key = dataset.strip().lower()
        return next((e for e in self.entries if key in e.datasets), None)

    def for_replay(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.replay and e.name == name.strip().lower()), None)


def _entry(raw: dict[str, Any]) -> Entry:
    try:
        kind = raw["kind"]
        if kind not in KINDS:
            raise ConfigError(f"catalogue entry {raw.get('name')!r}: kind must be one of {KINDS}")
        folder = str(safe_relative(raw["folder"], "catalogue folder"))
        files = tuple(
            CatalogueFile(
                str(safe_relative(f["dest"], "catalogue dest")), Pin.parse(f["source"], f["blob"], f["size"])
            )
            for f in raw.get("files", ())
        )
        convert = tuple(
            Conversion(
                c["name"],
                tuple(str(safe_relative(p, "conversion input")) for p in c["inputs"]),
                tuple(str(safe_relative(p, "conversion output")) for p in c["outputs"]),
            )
            for c in raw.get("convert", ())
        )
        manual = raw.get("manual")
        return Entry(
            name=raw["name"],
            kind=kind,
            folder=folder,
            title=raw["title"],
            holds=raw["holds"],
            paper=raw["paper"],
            licence=raw["licence"],
            files=files,
            licence_short=raw.get("licence_short", ""),
            datasets=tuple(raw.get("datasets", ())),
            convert=convert,
            manual=None
            if manual is None
            else ManualSource(
                manual["url"],
                manual["what"],
                manual["layout"],
                tuple(str(safe_relative(p, "manual file")) for p in manual["files"]),
                bool(manual.get("verifiable", False)),
            ),
            replay=raw.get("replay"),
            notes=tuple(raw.get("notes", ())),
        )
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"catalogue entry {raw.get('name', '?')!r} is malformed ({exc!r})") from None


def parse_catalogue(data: Any) -> Catalogue:
    if not isinstance(data, dict) or data.get("catalogue") != 1 or not isinstance(data.get("entries"), list):
        raise ConfigError("not a tkgqa data catalogue (expected {'catalogue': 1, 'entries': [...]})")
    return Catalogue(tuple(_entry(e) for e in data["entries"]), str(data.get("about", "")))


def read_catalogue(path: str | Path) -> Catalogue:
    """A catalogue file of the same format (tests, institutional catalogues), read as a user's file."""
    from ...userfiles import parse_json, read_input

    try:
        data = parse_json(read_input(path, what=f"the data catalogue (${CATALOGUE_ENV})"))
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the catalogue ({exc})", path=str(path)) from None
    return parse_catalogue(data)


#: A catalogue file replacing the shipped one (same format): other pins for an institution's own mirror,
#: or a test's fixture catalogue.
CATALOGUE_ENV = "TKGQA_DATA_CATALOGUE"


def catalogue() -> Catalogue:
    """The catalogue: ``$TKGQA_DATA_CATALOGUE`` when set (read now), else the one shipped with tkgqa."""
    other = os.environ.get(CATALOGUE_ENV)
    return read_catalogue(other) if other else _shipped()


@lru_cache(maxsize=1)
def _shipped() -> Catalogue:
    text = resources.files(__package__).joinpath(CATALOGUE_FILE).read_text(encoding="utf-8")
    return parse_catalogue(json.loads(text))


def dataset_folder(dataset: str, *, otherwise: str = "pass --data-dir DIR") -> Path | None:
    """Where the loader ``dataset`` finds its data when no folder is given: ``<data root>/<folder>`` of its
    catalogue entry; ``None`` when the catalogue has no data for that loader (``jsonl``, ``demo``, plugins).
    NotFoundError, naming ``tkgqa data fetch NAME`` (and ``otherwise``, the caller's other way), when the
    folder is not there."""
    entry = catalogue().for_dataset(dataset)
    if entry is None:
        return None
    folder = entry.folder_in()
    if not folder.is_dir():
        raise NotFoundError(
            f"dataset {dataset!r} is not under the data root ({folder} does not exist): run "
            f"`tkgqa data fetch {entry.name}`, set {DATA_ENV} to a folder holding {entry.folder}/, "
            f"or {otherwise}"
        )
    return folder


def recording_path(name: str) -> Path | None:
    """The replay cassette of the recording ``name`` under the data root (``None``: not a recording name);
    NotFoundError naming ``tkgqa data fetch NAME`` when it is not there."""
    entry = catalogue().for_replay(name)
    if entry is None or entry.replay is None:
        return None
    return _fetched_file(entry, entry.replay, f"the recording {name!r}")


def whole_kg_path(name: str) -> Path | None:
    """The whole KG (:attr:`Entry.kg_file`) of the entry ``name`` (``icews14``, ``timequestions-kg``) under
    the data root (``None``: no such entry); NotFoundError naming ``tkgqa data fetch NAME`` when it is not
    there."""
    entry = catalogue().find(name)
    if entry is None or entry.kg_file is None:
        return None
    return _fetched_file(entry, entry.kg_file, f"the KG of {name!r}")


def _fetched_file(entry: Entry, rel: str, what: str) -> Path:
    path = entry.folder_in() / rel
    if not path.is_file():
        raise NotFoundError(
            f"{what} is not under the data root ({path} does not exist): run `tkgqa data fetch {entry.name}` "
            f"or set {DATA_ENV}"
        )
    return path

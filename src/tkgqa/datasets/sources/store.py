"""Fetching, importing and verifying catalogue entries under the data root, with ``SOURCE.json`` beside them.

A fetch stages everything under ``<data root>/.staging/<entry>/`` (downloads as ``*.part``, resumed on the
next try), checks each file's blob id and size, runs the entry's conversions, and only then moves the files
into ``<data root>/<folder>/``: a mismatch deletes the staged entry and leaves nothing behind. Files already
in place that verify are not downloaded again. ``SOURCE.json`` (one per folder, keyed by entry) records
where each file came from, the conversions run and the sha256 of what they wrote, which ``verify`` rechecks.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import DataError, NotFoundError
from ...home import data_root
from ...userfiles import open_input, write_text
from .catalogue import SOURCE_RECORD, CatalogueFile, Entry
from .convert import run_conversion
from .safety import is_archive, unpack_to_temp
from .transfer import (
    ChecksumError,
    TransferSettings,
    check_pinned,
    fetch_pinned,
    git_blob_id,
    sha256_of,
)

MIRROR_ENV = "TKGQA_DATA_MIRROR"
STAGING = ".staging"
#: ``progress(label, done_bytes, total_bytes_or_None)``.
FileProgress = Callable[[str, int, int | None], None]


@dataclass
class FetchOutcome:
    """What a fetch or import did: files downloaded/placed, files already present, conversions run, and what
    is still missing (the manual files of a drive-only source)."""

    entry: Entry
    folder: Path
    downloaded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    converted: list[str] = field(default_factory=list)
    missing_manual: list[str] = field(default_factory=list)


def read_sources(folder: Path) -> dict[str, Any]:
    path = folder / SOURCE_RECORD
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise DataError("unreadable; delete it and fetch again", path=str(path)) from None
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def write_source(folder: Path, name: str, record: dict[str, Any]) -> None:
    entries = read_sources(folder)
    entries[name] = record
    text = json.dumps({"tkgqa_source": 1, "entries": entries}, indent=1) + "\n"
    write_text(folder / SOURCE_RECORD, text, what=SOURCE_RECORD)  # whole, or the old file


def _verified(path: Path, f: CatalogueFile) -> bool:
    if not path.is_file():
        return False
    try:
        check_pinned(path, f.pin, f.dest)
    except ChecksumError:
        return False
    return True


def _file_records(entry: Entry) -> list[dict[str, Any]]:
    return [
        {"dest": f.dest, "source": f.pin.source, "blob": f.pin.blob, "size": f.pin.size} for f in entry.files
    ]


def _convert(
    entry: Entry, where: Callable[[str], Path], out_dir: Path
) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the entry's conversions reading each input where ``where`` finds it, writing under ``out_dir``."""
    records, written = [], []
    for conv in entry.convert:
        outputs = [out_dir / rel for rel in conv.outputs]
        details = run_conversion(conv.name, [where(rel) for rel in conv.inputs], outputs)
        records.append(
            {
                "name": conv.name,
                "inputs": list(conv.inputs),
                "outputs": {rel: sha256_of(p) for rel, p in zip(conv.outputs, outputs, strict=True)},
                "details": details,
            }
        )
        written += list(conv.outputs)
    return records, written


def _move_into(staged: Path, folder: Path, rels: list[str]) -> None:
    for rel in rels:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged / rel, target)


def fetch_entry(
    entry: Entry,
    *,
    root: Path | None = None,
    base: str | None = None,
    settings: TransferSettings = TransferSettings(),
    progress: FileProgress | None = None,
) -> FetchOutcome:
    """Download ``entry``'s pinned files from ``base`` (a mirror; default ``$TKGQA_DATA_MIRROR``, else
    GitHub), check them, run its conversions, and move everything into its folder. Idempotent: files in
    place that verify are kept and nothing is downloaded for them. ChecksumError (nothing left behind) or
    DownloadError (the partial download kept for a resume)."""
    from .catalogue import GITHUB_RAW

    root = data_root() if root is None else root
    base = base or os.environ.get(MIRROR_ENV) or GITHUB_RAW
    folder = entry.folder_in(root)
    staged = root / STAGING / entry.name
    outcome = FetchOutcome(entry, folder)
    try:
        for f in entry.files:
            if _verified(folder / f.dest, f):
                outcome.kept.append(f.dest)
                continue
            target = staged / f.dest
            if not _verified(target, f):
                target.parent.mkdir(parents=True, exist_ok=True)
                report = (lambda done, total, _d=f.dest: progress(_d, done, total)) if progress else None
                fetch_pinned(
                    f.pin, target, base=base, entry=entry.name, label=f"{entry.name}/{f.dest}",
                    settings=settings, progress=report,
                )  # fmt: skip
            outcome.downloaded.append(f.dest)
        conversions_due = outcome.downloaded or any(
            not (folder / o).is_file() for c in entry.convert for o in c.outputs
        )
        conv_records: list[dict[str, Any]] = []
        if conversions_due and entry.convert:
            where = lambda rel: staged / rel if (staged / rel).is_file() else folder / rel  # noqa: E731
            conv_records, outcome.converted = _convert(entry, where, staged)
    except ChecksumError:
        shutil.rmtree(staged, ignore_errors=True)
        _remove_empty(root / STAGING)
        raise
    except DataError:  # a conversion failed: the downloads were verified, keep them for the next try
        raise
    if outcome.downloaded or outcome.converted:
        folder.mkdir(parents=True, exist_ok=True)
        _move_into(staged, folder, outcome.downloaded + outcome.converted)
        previous = read_sources(folder).get(entry.name, {})
        record = {
            "how": "fetch",
            "from": base,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": _file_records(entry),
            "conversions": conv_records or previous.get("conversions", []),
            "manual": previous.get("manual", []),
        }
        write_source(folder, entry.name, record)
    shutil.rmtree(staged, ignore_errors=True)
    _remove_empty(root / STAGING)
    if entry.manual:
        outcome.missing_manual = [rel for rel in entry.manual.files if not (folder / rel).is_file()]
    return outcome


def _remove_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()


# --- import -----------------------------------------------------------------------------------------------
def _walk_files(folder: Path) -> Iterator[Path]:
    for dirpath, _dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                yield p


def import_path(entry: Entry, path: Path, *, root: Path | None = None) -> FetchOutcome:
    """Place files the user downloaded by hand: ``path`` is one file, a folder, or an archive (unpacked
    safely). A pinned file is recognised by its blob id wherever it sits; a drive-only source's files by
    their place under its ``layout`` folder (recorded with their sha256, not verifiable against the authors).
    Then the conversions whose inputs are all present run. NotFoundError when nothing matched."""
    root = data_root() if root is None else root
    path = path.expanduser()
    if not path.exists():
        raise NotFoundError(f"{str(path)!r} does not exist: give the file, folder or archive you downloaded")
    if not path.is_dir():
        with open_input(path, what="the file to import"):  # a regular file: no FIFO, device or socket
            pass
    folder = entry.folder_in(root)
    staged = root / STAGING / entry.name
    temp: Path | None = None
    try:
        if is_archive(path):
            temp = unpack_to_temp(path, root / STAGING)
            source = temp
        else:
            source = path
        candidates = [source] if source.is_file() else list(_walk_files(source))
        outcome = _place(entry, candidates, source, staged, folder)
        if not outcome.downloaded:
            raise NotFoundError(
                f"{str(path)!r} holds none of the files of {entry.name!r} (no blob id matches a pin"
                + (
                    f", no {entry.manual.layout}/ folder with {', '.join(entry.manual.files)}"
                    if entry.manual
                    else ""
                )
                + "); `tkgqa data list` shows what it needs"
            )
        ready = [
            c for c in entry.convert
            if all((staged / i).is_file() or (folder / i).is_file() for i in c.inputs)
        ]  # fmt: skip
        conv_records: list[dict[str, Any]] = []
        if ready:
            where = lambda rel: staged / rel if (staged / rel).is_file() else folder / rel  # noqa: E731
            sub = replace(entry, convert=tuple(ready))
            conv_records, outcome.converted = _convert(sub, where, staged)
        folder.mkdir(parents=True, exist_ok=True)
        _move_into(staged, folder, outcome.downloaded + outcome.converted)
        previous = read_sources(folder).get(entry.name, {})
        manual = [
            {"dest": rel, "sha256": sha256_of(folder / rel), "verified": False}
            for rel in (entry.manual.files if entry.manual else ())
            if rel in outcome.downloaded
        ]
        write_source(
            folder,
            entry.name,
            {
                "how": "import",
                "from": str(path),
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "files": _file_records(entry),
                "conversions": conv_records or previous.get("conversions", []),
                "manual": manual or previous.get("manual", []),
            },
        )
    finally:
        shutil.rmtree(staged, ignore_errors=True)
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
        _remove_empty(root / STAGING)
    if entry.manual:
        outcome.missing_manual = [rel for rel in entry.manual.files if not (folder / rel).is_file()]
    return outcome


def _place(entry: Entry, candidates: list[Path], source: Path, staged: Path, folder: Path) -> FetchOutcome:
    """Copy into ``staged`` every candidate that is one of ``entry``'s pinned files (by blob id) or, for a
    drive-only source, one of its files under its layout folder."""
    outcome = FetchOutcome(entry, folder)
    by_blob: dict[str, list[CatalogueFile]] = {}
    for f in entry.files:
        by_blob.setdefault(f.pin.blob, []).append(f)
    sizes = {f.pin.size for f in entry.files}
    for p in candidates:
        if None not in sizes and p.stat().st_size not in sizes:
            continue
        for f in by_blob.get(git_blob_id(p), ()):
            if f.dest not in outcome.downloaded:
                (staged / f.dest).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, staged / f.dest)
                outcome.downloaded.append(f.dest)
    if entry.manual and source.is_dir():
        layout = entry.manual.layout
        bases = [source, *sorted(d for d in source.rglob(layout) if d.is_dir())]
        for rel in entry.manual.files:
            found = next((b / rel for b in bases if (b / rel).is_file()), None)
            if found is not None and rel not in outcome.downloaded:
                (staged / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(found, staged / rel)
                outcome.downloaded.append(rel)
    return outcome


# --- verify and status --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One file's check: ``ok``, ``missing``, ``mismatch`` (with expected/actual) or ``unverifiable``."""

    dest: str
    status: str
    detail: str = ""


def verify_entry(entry: Entry, *, root: Path | None = None) -> list[Check]:
    """Every file of ``entry`` checked: pinned files against their blob id and size, conversion outputs and
    imported files against the sha256 ``SOURCE.json`` recorded when they were written."""
    folder = entry.folder_in(root)
    checks: list[Check] = []
    for f in entry.files:
        p = folder / f.dest
        if not p.is_file():
            checks.append(Check(f.dest, "missing"))
            continue
        try:
            check_pinned(p, f.pin, f.dest)
            checks.append(Check(f.dest, "ok", f"git blob {f.pin.blob}"))
        except ChecksumError as exc:
            checks.append(Check(f.dest, "mismatch", exc.message.removeprefix(f"{f.dest}: ")))
    record = read_sources(folder).get(entry.name, {})
    recorded: dict[str, str] = {}
    for conv in record.get("conversions", []):
        recorded.update(conv.get("outputs", {}))
    for m in record.get("manual", []):
        recorded[m.get("dest", "")] = m.get("sha256", "")
    derived = [o for c in entry.convert for o in c.outputs] + list(entry.manual.files if entry.manual else ())
    for rel in derived:
        p = folder / rel
        if not p.is_file():
            checks.append(Check(rel, "missing"))
        elif rel not in recorded:
            checks.append(
                Check(rel, "unverifiable", f"not written by tkgqa data (no {SOURCE_RECORD} record)")
            )
        else:
            actual = sha256_of(p)
            status = "ok" if actual == recorded[rel] else "mismatch"
            how = (
                "as imported (no published checksum)"
                if entry.manual and rel in entry.manual.files
                else "as converted"
            )
            detail = (
                f"sha256 {actual[:16]}… {how}"
                if status == "ok"
                else f"expected sha256 {recorded[rel]} ({SOURCE_RECORD}), got {actual}"
            )
            checks.append(Check(rel, status, detail))
    return checks


def presence(entry: Entry, root: Path | None = None) -> str:
    """``present``, ``partial`` (some files) or ``absent`` under ``root`` (default: the data root)."""
    missing = entry.missing(root)
    if not missing:
        return "present"
    return "absent" if len(missing) == len(entry.outputs()) else "partial"

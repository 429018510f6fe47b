"""Binary cache of loaded KGs: ``$TKGQA_HOME/kg_cache/<key>/``, the compact core memory-mapped.

The key is the sha256 of the source files' bytes, the loader options and :data:`CACHE_VERSION`, so an edited
file or another option set never reads a stale store. The entry is a folder of ``.npy`` files — the core of
:mod:`tkgqa.kg.index` (int32 columns and permutations, 62 bytes per fact) — and a manifest with the
vocabularies, labels and load report, written last (:mod:`tkgqa.kg.core_files`): opening maps the arrays
(nothing is read until a query touches it; processes such as Ray or service workers share the pages), so a
20M-fact store opens in about the time it takes to read its names. A corrupt, partial or unreadable entry is
rebuilt with a warning. ``TKGQA_HOME`` is read at call time (default ``~/.cache/tkgqa``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..home import tkgqa_home
from .builder import LoadReport
from .core_files import open_core, remove_stale_temporaries, save_core
from .index import COLUMNS
from .memory import TemporalKG

CACHE_VERSION = 2


def cache_dir() -> Path:
    return tkgqa_home() / "kg_cache"


def _file_digest(path: Path) -> str:
    """sha256 of the file's bytes; remembered beside the cache by (path, size, mtime, inode, ctime), so
    opening a large cached KG does not re-read its source (an edit changes the stat: hashed again)."""
    try:
        st = path.stat()
        stamp = [str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
    except OSError:
        stamp = None
    memo = cache_dir() / "digests" / (hashlib.sha256(json.dumps(stamp).encode()).hexdigest() + ".txt")
    if stamp is not None:
        try:
            found = memo.read_text(encoding="ascii").strip()
            if len(found) == 64:
                return found
        except (OSError, UnicodeDecodeError):
            pass
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    digest = h.hexdigest()
    if stamp is not None:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
            tmp.write_text(digest, encoding="ascii")
            os.replace(tmp, memo)
        except OSError:  # a read-only home: hash each time
            pass
    return digest


def cache_key(files: Iterable[str | os.PathLike[str]], options: Mapping[str, Any]) -> str:
    """sha256 over the cache format version, the options (as sorted JSON) and each file's bytes."""
    h = hashlib.sha256()
    h.update(f"tkgqa-kg-cache-v{CACHE_VERSION}\n".encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    for f in files:
        h.update(b"\n" + _file_digest(Path(f)).encode())
    return h.hexdigest()


def save_kg(kg: TemporalKG, path: str | os.PathLike[str]) -> Path:
    """Write ``kg`` (compacted) to the folder ``path`` atomically; returns the path."""
    entities, relations, _, core = kg.to_arrays()
    max_dur, ordered = kg.bounds
    meta = {
        "version": CACHE_VERSION,
        "name": kg.name,
        "display_underscores": kg.display_underscores,
        "n_facts": len(kg),
        "max_dur": max_dur,
        "ordered": ordered,
        "entities": entities,
        "relations": relations,
        "labels": dict(kg.labels),
        "report": asdict(kg.load_report) if kg.load_report is not None else None,
    }
    return save_core(path, core, meta)


def load_cached_kg(path: str | os.PathLike[str]) -> TemporalKG:
    """Open a store written by :func:`save_kg`, memory-mapped; :class:`DataError` if the entry is corrupt,
    partial or incompatible."""
    p = Path(path)
    arrays, meta = open_core(p)
    if meta.get("version") != CACHE_VERSION:
        raise DataError(f"cache format {meta.get('version')} != {CACHE_VERSION}", path=str(p))
    try:
        n = int(meta["n_facts"])
        entities, relations = list(meta["entities"]), list(meta["relations"])
        bounds = (int(meta["max_dur"]), bool(meta["ordered"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"inconsistent KG cache entry ({type(exc).__name__}: {exc})", path=str(p)) from None
    if len(arrays["col_s"]) != n:
        raise DataError("truncated KG cache entry (column lengths differ)", path=str(p))
    if len(arrays["s_off"]) > len(entities) + 1 or len(arrays["r_off"]) > len(relations) + 1:
        raise DataError("inconsistent KG cache entry (ids beyond the vocabulary)", path=str(p))
    columns = {c: arrays[f"col_{c}"] for c in COLUMNS}
    kg = TemporalKG.from_arrays(
        entities,
        relations,
        columns,
        labels=meta.get("labels") or {},
        name=meta["name"],
        index=arrays,
        bounds=bounds,
    )
    kg.display_underscores = bool(meta.get("display_underscores", True))
    report = meta.get("report")
    if report is not None:
        report["first_errors"] = tuple(report.get("first_errors", ()))
        kg.load_report = replace(LoadReport(**report), from_cache=True)
    return kg


def cached_build(key: str, build: Callable[[], TemporalKG]) -> TemporalKG:
    """The store cached under ``key``, else ``build()`` it and cache it; a corrupt entry is rebuilt."""
    path = cache_dir() / key
    if path.exists():
        try:
            return load_cached_kg(path)
        except DataError as exc:
            warnings.warn(f"rebuilding the KG cache entry: {exc}", RuntimeWarning, stacklevel=3)
    kg = build()
    try:
        remove_stale_temporaries(path)
        save_kg(kg, path)
    except OSError as exc:  # a read-only home must not stop the load
        warnings.warn(f"could not write the KG cache {path}: {exc}", RuntimeWarning, stacklevel=3)
    return kg


def clear_cache() -> int:
    """Delete every cached store (and entries of the older single-file format); returns how many."""
    removed = 0
    root = cache_dir()
    for f in root.glob("*.npz"):
        f.unlink(missing_ok=True)
        removed += 1
    for entry in root.glob("*"):
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed += not entry.name.startswith(".") and entry.name != "digests"
    return removed

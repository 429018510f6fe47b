"""Binary cache of loaded KGs: ``$TKGQA_HOME/kg_cache/<key>.npz``.

The key is the sha256 of the source files' bytes, the loader options and :data:`CACHE_VERSION`, so an edited
file or another option set never reads a stale store. The ``.npz`` (uncompressed) holds the encoded columns
(int32/int8), each index's sort order, the vocabularies, labels and the load report; loading skips every
sort, so a 461k-fact store opens in a fraction of a second. A corrupt or unreadable entry is rebuilt with a
warning. ``TKGQA_HOME`` is read at call time (default ``~/.cache/tkgqa``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import DataError
from ..home import tkgqa_home
from .builder import LoadReport
from .index import COLUMNS, INDEX_KINDS
from .memory import TemporalKG

CACHE_VERSION = 1
_NARROW = {
    "s": np.int32,
    "r": np.int32,
    "o": np.int32,
    "t0": np.int32,
    "t1": np.int32,
    "g0": np.int8,
    "g1": np.int8,
}


def cache_dir() -> Path:
    return tkgqa_home() / "kg_cache"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def cache_key(files: Iterable[str | os.PathLike[str]], options: Mapping[str, Any]) -> str:
    """sha256 over the cache format version, the options (as sorted JSON) and each file's bytes."""
    h = hashlib.sha256()
    h.update(f"tkgqa-kg-cache-v{CACHE_VERSION}\n".encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    for f in files:
        h.update(b"\n" + _file_digest(Path(f)).encode())
    return h.hexdigest()


def _blob(value: Any) -> npt.NDArray[np.uint8]:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def _unblob(array: npt.NDArray[Any]) -> Any:
    return json.loads(array.tobytes().decode("utf-8"))


def save_kg(kg: TemporalKG, path: str | os.PathLike[str]) -> Path:
    """Write ``kg`` (compacted) to ``path`` atomically; returns the path."""
    entities, relations, columns, index = kg.to_arrays()
    target = Path(path)
    meta = {
        "version": CACHE_VERSION,
        "name": kg.name,
        "display_underscores": kg.display_underscores,
        "n_facts": len(kg),
        "report": asdict(kg.load_report) if kg.load_report is not None else None,
    }
    arrays: dict[str, npt.NDArray[Any]] = {f"col_{c}": columns[c].astype(_NARROW[c]) for c in COLUMNS}
    arrays.update({f"order_{k}": index[k][1].astype(np.int32) for k in INDEX_KINDS})
    arrays["entities"] = _blob(entities)
    arrays["relations"] = _blob(relations)
    arrays["labels"] = _blob(dict(kg.labels))
    arrays["meta"] = _blob(meta)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def load_cached_kg(path: str | os.PathLike[str]) -> TemporalKG:
    """Read a store written by :func:`save_kg`; :class:`DataError` if the file is corrupt or incompatible."""
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as data:
            meta = _unblob(data["meta"])
            if meta.get("version") != CACHE_VERSION:
                raise DataError(f"cache format {meta.get('version')} != {CACHE_VERSION}", path=str(p))
            columns = {c: data[f"col_{c}"].astype(np.int64) for c in COLUMNS}
            orders = {k: data[f"order_{k}"].astype(np.int64) for k in INDEX_KINDS}
            entities, relations = _unblob(data["entities"]), _unblob(data["relations"])
            labels = _unblob(data["labels"])
    except DataError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise DataError(f"unreadable KG cache entry ({type(exc).__name__}: {exc})", path=str(p)) from None
    n = int(meta["n_facts"])
    if any(len(a) != n for a in (*columns.values(), *orders.values())):
        raise DataError("truncated KG cache entry (column lengths differ)", path=str(p))
    if n and (int(columns["s"].max()) >= len(entities) or int(columns["r"].max()) >= len(relations)):
        raise DataError("inconsistent KG cache entry (ids beyond the vocabulary)", path=str(p))
    kg = TemporalKG.from_arrays(entities, relations, columns, labels=labels, name=meta["name"], index=orders)
    kg.display_underscores = bool(meta.get("display_underscores", True))
    report = meta.get("report")
    if report is not None:
        report["first_errors"] = tuple(report.get("first_errors", ()))
        kg.load_report = replace(LoadReport(**report), from_cache=True)
    return kg


def cached_build(key: str, build: Callable[[], TemporalKG]) -> TemporalKG:
    """The store cached under ``key``, else ``build()`` it and cache it; a corrupt entry is rebuilt."""
    path = cache_dir() / f"{key}.npz"
    if path.exists():
        try:
            return load_cached_kg(path)
        except DataError as exc:
            warnings.warn(f"rebuilding the KG cache entry: {exc}", RuntimeWarning, stacklevel=3)
    kg = build()
    try:
        save_kg(kg, path)
    except OSError as exc:  # a read-only home must not stop the load
        warnings.warn(f"could not write the KG cache {path}: {exc}", RuntimeWarning, stacklevel=3)
    return kg


def clear_cache() -> int:
    """Delete every cached store; returns how many files were removed."""
    removed = 0
    for f in cache_dir().glob("*.npz"):
        f.unlink(missing_ok=True)
        removed += 1
    return removed

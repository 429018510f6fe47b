"""A compact core (:mod:`tkgqa.kg.index`) on disk: a folder of ``.npy`` files opened memory-mapped.

``save_core`` writes every array into a new temporary folder beside the target, then ``manifest.json``
**last** (after the arrays are flushed), then swaps the folder in by renames; ``open_core`` refuses a folder
without a readable manifest, of another format, or whose arrays disagree with it (a missing file, another
length). So a write interrupted anywhere (kill -9 included) leaves either the previous folder or none, never
one that opens: the caller rebuilds. Opening maps the files read-only (:func:`map_npy`): nothing is read
until a query touches it, and processes opening the same folder share its pages. The mappings are advised
``MADV_RANDOM``: a lookup touches a few pages here and there, and the kernel's default read-ahead (which
grows with ascending faults, up to the device's window: 8 MiB here) would otherwise read and map whole
arrays into the process for a few dozen lookups (measured: 72 gathers mapped all 19 MiB of a 5M-fact column).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from .index import CORE_ARRAYS, AnyArray

FORMAT = "tkgqa-core-1"
MANIFEST = "manifest.json"


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _drop_cached_pages(fd: int) -> None:
    """Let the kernel drop the (flushed) pages of a file just written: written pages sit in the page cache in
    large folios, and a mapping of such a file maps whole folios on each fault whatever the advice, so 72
    lookups in a 5M-fact column mapped all of it (19 MiB); read back on demand, a lookup maps the pages it
    touches."""
    if hasattr(os, "posix_fadvise"):
        with contextlib.suppress(OSError):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def save_core(
    folder: str | os.PathLike[str], arrays: Mapping[str, AnyArray], meta: Mapping[str, Any]
) -> Path:
    """Write ``arrays`` (the core, plus any extra arrays) and ``meta`` to ``folder`` atomically."""
    target = Path(folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        lengths = {}
        for name, array in arrays.items():
            with (tmp / f"{name}.npy").open("wb") as fh:
                np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
                fh.flush()
                os.fsync(fh.fileno())
                _drop_cached_pages(fh.fileno())
            lengths[name] = len(array)
        manifest = {"format": FORMAT, "lengths": lengths, **meta}
        with (tmp / MANIFEST).open("w", encoding="utf-8") as fh:  # last: its presence means complete
            json.dump(manifest, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(tmp)
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}-{id(tmp)}")
            os.replace(target, old)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of a complete core folder, or ``None`` (missing, partial or unreadable)."""
    try:
        with (Path(folder) / MANIFEST).open(encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    return manifest


def open_core(folder: str | os.PathLike[str]) -> tuple[dict[str, AnyArray], dict[str, Any]]:
    """``(arrays, manifest)`` of a folder written by :func:`save_core`, memory-mapped; :class:`DataError`
    if it is incomplete, of another format or inconsistent with its manifest."""
    p = Path(folder)
    manifest = read_manifest(p)
    if manifest is None:
        raise DataError("no complete core here (missing or unreadable manifest)", path=str(p))
    lengths = manifest.get("lengths", {})
    if not set(CORE_ARRAYS) <= set(lengths):
        raise DataError("incomplete core (arrays missing from the manifest)", path=str(p))
    arrays: dict[str, AnyArray] = {}
    try:
        for name, length in lengths.items():
            array = map_npy(p / f"{name}.npy")
            if len(array) != length:
                raise DataError(f"core array {name} has {len(array)} entries, not {length}", path=str(p))
            arrays[name] = array
    except (OSError, ValueError) as exc:
        raise DataError(f"unreadable core ({type(exc).__name__}: {exc})", path=str(p)) from None
    return arrays, manifest


def map_npy(path: Path) -> AnyArray:
    """The 1-D array of the ``.npy`` file at ``path``, memory-mapped read-only and advised ``MADV_RANDOM``
    (see the module docstring); ``ValueError`` for a file that is not such an array or is truncated."""
    with path.open("rb") as fh:
        version = np.lib.format.read_magic(fh)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read_header(fh)
        if len(shape) != 1 or dtype.hasobject:
            raise ValueError(f"{path.name} is not a 1-D array of numbers")
        offset, n = fh.tell(), int(shape[0])
        if n == 0:
            return np.zeros(0, dtype=dtype)
        buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mmap, "MADV_RANDOM"):  # Linux, macOS; elsewhere the default read-ahead
        buffer.madvise(mmap.MADV_RANDOM)
    array: AnyArray = np.frombuffer(buffer, dtype=dtype, count=n, offset=offset)  # ValueError if truncated
    return array


def is_mapped(array: AnyArray) -> bool:
    """Whether ``array`` reads a file mapping of :func:`map_npy` (directly or as a view of one)."""
    base: Any = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None) if isinstance(base, np.ndarray) else getattr(base, "obj", None)
    return False


def remove_stale_temporaries(target: str | os.PathLike[str], older_than_s: float = 600.0) -> int:
    """Remove the leftovers of interrupted :func:`save_core` calls for ``target`` (temporary and old
    folders beside it) untouched for ``older_than_s`` seconds (a younger one may be another process's
    write in progress). Returns how many were removed."""
    import time

    t = Path(target)
    removed = 0
    for pattern in (f".{t.name}.tmp-*", f".{t.name}.old-*"):
        for leftover in t.parent.glob(pattern):
            with contextlib.suppress(OSError):
                if time.time() - leftover.stat().st_mtime >= older_than_s:
                    shutil.rmtree(leftover, ignore_errors=True)
                    removed += 1
    return removed

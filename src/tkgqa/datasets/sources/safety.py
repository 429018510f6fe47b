"""Reading what others published without trusting it: archives unpacked safely (no absolute paths, no ``..``,
no links, a size cap) and pickles read through an unpickler that builds nothing but plain data."""

from __future__ import annotations

import io
import pickle
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ...errors import DataError

#: The most bytes an archive may unpack to (its members' declared sizes, summed).
MAX_UNPACKED = 32 << 30
MAX_MEMBERS = 200_000
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def is_archive(path: Path) -> bool:
    name = path.name.lower()
    return path.is_file() and any(name.endswith(s) for s in ARCHIVE_SUFFIXES)


def _member_path(name: str, archive: Path) -> PurePosixPath | None:
    """The member's relative path; DataError for an absolute path or ``..``; ``None`` for a folder entry."""
    clean = name.replace("\\", "/")
    p = PurePosixPath(clean)
    if clean.startswith("/") or (p.parts and p.parts[0].endswith(":")) or ".." in p.parts:
        raise DataError(f"refusing to unpack: member {name!r} points outside the folder", path=str(archive))
    parts = [x for x in p.parts if x not in ("", ".")]
    return PurePosixPath(*parts) if parts else None


def _check_totals(count: int, total: int, archive: Path, cap: int) -> None:
    if count > MAX_MEMBERS:
        raise DataError(f"refusing to unpack: more than {MAX_MEMBERS} members", path=str(archive))
    if total > cap:
        raise DataError(f"refusing to unpack: it would take {total} bytes (cap {cap})", path=str(archive))


#: One archive member: its name, its kind (``file``, ``dir``, ``link``, ``other``), its declared size and
#: how to open it.
Member = tuple[str, str, int, Callable[[], IO[bytes] | None]]


def unpack(archive: Path, into: Path, *, cap: int = MAX_UNPACKED) -> None:
    """Unpack a zip or tar archive into the folder ``into`` after checking every member: no absolute path, no
    ``..``, no symbolic or hard link, no device, at most ``cap`` bytes in all. Nothing is written when a
    check fails (DataError naming the member)."""
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                _write_members([_zip_member(zf, info) for info in zf.infolist()], archive, into, cap)
        else:
            with tarfile.open(archive) as tf:
                _write_members([_tar_member(tf, info) for info in tf.getmembers()], archive, into, cap)
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"cannot unpack ({exc})", path=str(archive)) from None


def _zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Member:
    mode = info.external_attr >> 16
    kind = "link" if stat.S_ISLNK(mode) else "dir" if info.is_dir() else "file"
    return info.filename, kind, info.file_size, lambda: zf.open(info)


def _tar_member(tf: tarfile.TarFile, info: tarfile.TarInfo) -> Member:
    kind = (
        "link"
        if info.issym() or info.islnk()
        else "dir"
        if info.isdir()
        else "file"
        if info.isfile()
        else "other"
    )
    return info.name, kind, info.size, lambda: tf.extractfile(info)


def _write_members(members: list[Member], archive: Path, into: Path, cap: int) -> None:
    plan: list[tuple[Member, PurePosixPath]] = []
    total = 0
    for member in members:
        name, kind, size, _open = member
        rel = _member_path(name, archive)
        if kind == "link":
            raise DataError(f"refusing to unpack: member {name!r} is a link", path=str(archive))
        if kind == "other":
            raise DataError(f"refusing to unpack: member {name!r} is not a file", path=str(archive))
        if rel is None or kind == "dir":
            continue
        total += size
        plan.append((member, rel))
    _check_totals(len(plan), total, archive, cap)
    for (name, _kind, size, open_member), rel in plan:
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        src = open_member()
        if src is None:
            continue
        with src, target.open("wb") as out:
            _copy_capped(src, out, size, name, archive)


def _copy_capped(src: IO[bytes], out: IO[bytes], declared: int, name: str, archive: Path) -> None:
    """Copy at most ``declared`` bytes (a member that inflates beyond its declared size is refused)."""
    written = 0
    while chunk := src.read(1 << 20):
        written += len(chunk)
        if written > declared:
            raise DataError(f"refusing to unpack: member {name!r} is larger than declared", path=str(archive))
        out.write(chunk)


def unpack_to_temp(archive: Path, parent: Path) -> Path:
    """Unpack ``archive`` into a new folder under ``parent`` (removed again when a check fails)."""
    parent.mkdir(parents=True, exist_ok=True)
    into = parent / f".unpack-{archive.name}"
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir()
    try:
        unpack(archive, into)
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return into


# --- pickles ---------------------------------------------------------------------------------------------
#: What a numpy array in a pickle needs, and nothing more.
NUMPY_GLOBALS = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }
)
#: Built-in containers a pickle may name (sets are pickled through their class).
BUILTIN_GLOBALS = frozenset(
    {
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("__builtin__", "set"),  # the same names in a Python 2 pickle
        ("__builtin__", "frozenset"),
        ("collections", "OrderedDict"),
    }
)


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BufferedIOBase, allowed: frozenset[tuple[str, str]], where: str) -> None:
        super().__init__(file)
        self.allowed = allowed
        self.where = where

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.allowed:
            return super().find_class(module, name)
        raise DataError(f"refusing to unpickle {module}.{name}: only plain data is read", path=self.where)


def read_pickle(path: Path, *, numpy: bool = False) -> Any:
    """A downloaded pickle read through an unpickler that builds only built-in data (dicts, lists, strings,
    numbers, sets) and, with ``numpy``, numpy arrays — never an arbitrary class or function."""
    allowed = BUILTIN_GLOBALS | (NUMPY_GLOBALS if numpy else frozenset())
    try:
        with path.open("rb") as fh:
            return _RestrictedUnpickler(fh, allowed, str(path)).load()  # type: ignore[arg-type]
    except DataError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError) as exc:
        raise DataError(f"not a readable pickle ({exc.__class__.__name__}: {exc})", path=str(path)) from None

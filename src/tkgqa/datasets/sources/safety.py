"""Reading what others published without trusting it: archives unpacked safely (no absolute paths, no ``..``,
no links, a size cap) and pickles read through an unpickler that builds nothing but plain data."""

from __future__ import annotations

import io
import pickle
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

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


def unpack(archive: Path, into: Path, *, cap: int = MAX_UNPACKED) -> None:
    """Unpack a zip or tar archive into the folder ``into`` after checking every member: no absolute path, no
    ``..``, no symbolic or hard link, no device, at most ``cap`` bytes in all. Nothing is written when a
    check fails (DataError naming the member)."""
    if archive.name.lower().endswith(".zip"):
        _unpack_zip(archive, into, cap)
    else:
        _unpack_tar(archive, into, cap)


def _unpack_zip(archive: Path, into: Path, cap: int) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            plan: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
            total = 0
            for info in zf.infolist():
                rel = _member_path(info.filename, archive)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise DataError(
                        f"refusing to unpack: member {info.filename!r} is a link", path=str(archive)
                    )
                if rel is None or info.is_dir():
                    continue
                total += info.file_size
                plan.append((info, rel))
            _check_totals(len(plan), total, archive, cap)
            for info, rel in plan:
                target = into / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, target.open("wb") as out:
                    _copy_capped(src, out, info.file_size, info.filename, archive)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DataError(f"cannot unpack ({exc})", path=str(archive)) from None


def _copy_capped(src: Any, out: Any, declared: int, name: str, archive: Path) -> None:
    """Copy at most ``declared`` bytes (a member that inflates beyond its declared size is refused)."""
    written = 0
    while chunk := src.read(1 << 20):
        written += len(chunk)
        if written > declared:
            raise DataError(f"refusing to unpack: member {name!r} is larger than declared", path=str(archive))
        out.write(chunk)


def _unpack_tar(archive: Path, into: Path, cap: int) -> None:
    try:
        with tarfile.open(archive) as tf:
            plan: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
            total = 0
            for info in tf.getmembers():
                rel = _member_path(info.name, archive)
                if info.issym() or info.islnk():
                    raise DataError(f"refusing to unpack: member {info.name!r} is a link", path=str(archive))
                if not (info.isfile() or info.isdir()):
                    raise DataError(
                        f"refusing to unpack: member {info.name!r} is not a file", path=str(archive)
                    )
                if rel is None or info.isdir():
                    continue
                total += info.size
                plan.append((info, rel))
            _check_totals(len(plan), total, archive, cap)
            for info, rel in plan:
                target = into / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(info)
                if src is None:
                    continue
                with src, target.open("wb") as out:
                    _copy_capped(src, out, info.size, info.name, archive)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"cannot unpack ({exc})", path=str(archive)) from None


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
BUILTIN_GLOBALS = frozenset({("builtins", "set"), ("builtins", "frozenset"), ("collections", "OrderedDict")})


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

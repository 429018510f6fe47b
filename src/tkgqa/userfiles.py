"""Files a user names — inputs, outputs, cassettes, run folders — opened one way (imports only ``errors``).

* **Inputs** are regular files (:func:`open_input`, :func:`read_input`): a FIFO, a device (``/dev/zero``),
  a socket or a folder is refused at once with a one-line :class:`~tkgqa.errors.ConfigError` (the path is
  checked before it is opened, then opened without blocking and checked again, so a FIFO swapped in between
  cannot hang the command). ``stream=True`` is for an input read line by line that may be a pipe (``-`` for
  stdin, ``<(cmd)``); devices and folders stay refused. Content read whole is capped (``limit`` bytes).
* **Lines** of a stream are read with a length cap (:func:`bounded_lines`): an over-long line is reported,
  never held whole in memory.
* **JSON from users** is parsed with a size and a nesting limit (:func:`parse_json`): ``[`` × 100000 is a
  "nested too deep" problem, never a ``RecursionError``.
* **Outputs** are checked before anything is touched (:func:`check_output`: the folder exists, the target
  is not a folder, not one of the inputs — same resolved path or same inode) and written to a temporary
  name in the same folder, then renamed over the target (:func:`atomic_output`, :func:`write_text`): a
  failure or an interrupt leaves the old file as it was.
* **Output folders** carry a marker saying which command wrote them (:func:`claim_folder`): a folder written
  by another command, or by nothing of ours, is refused unless ``force``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from .errors import ConfigError, DataError

#: A path as a caller gives it: text or any ``os.PathLike`` (a :class:`~pathlib.Path`).
PathLike = str | os.PathLike[str]
#: Default cap of an input read whole (a cassette, a JSON file): 512 MiB.
MAX_INPUT_BYTES = 512 * 1024 * 1024
#: Default cap of one line of a JSONL input read line by line: 16 MiB.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: How deep JSON read from users may nest (objects and arrays); far beyond any file tkgqa writes.
MAX_JSON_DEPTH = 200
#: The marker file of an output folder: which tkgqa command owns it.
OWNER_FILE = ".tkgqa-owner.json"
STDIO = "-"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _stat_input(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise ConfigError(f"cannot read {what} {str(path)!r}: it does not exist; check the path") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {str(path)!r} ({exc.strerror or exc})") from None


def _refuse(path: Path, what: str, mode: int, stream: bool) -> ConfigError:
    hint = "pass a regular file" + (" (or '-' for stdin)" if stream else "")
    return ConfigError(f"{what} {str(path)!r} is {_kind(mode)}, not a regular file; {hint}")


def open_input(path: str | Path, *, what: str = "the input", stream: bool = False) -> BinaryIO:
    """``path`` opened for reading (binary). Regular files only; with ``stream`` also ``-`` (stdin) and a
    pipe (read line by line). Never blocks on a FIFO nor reads a device; ConfigError in one line."""
    if stream and str(path) == STDIO:
        return sys.stdin.buffer
    p = Path(path).expanduser()
    mode = _stat_input(p, what).st_mode
    pipe_ok = stream and stat.S_ISFIFO(mode)
    if not stat.S_ISREG(mode) and not pipe_ok:
        raise _refuse(p, what, mode, stream)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) * (not pipe_ok)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {str(p)!r} ({exc.strerror or exc})") from None
    now = os.fstat(fd).st_mode
    if not stat.S_ISREG(now) and not (pipe_ok and stat.S_ISFIFO(now)):  # swapped since the check
        os.close(fd)
        raise _refuse(p, what, now, stream)
    if not pipe_ok and hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_input(path: str | Path, *, what: str = "the input", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The whole content of regular file ``path``, at most ``limit`` bytes (ConfigError beyond)."""
    with open_input(path, what=what) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(f"{what} {str(path)!r} is over {limit:,} bytes; pass a smaller file (or split it)")
    return data


def bounded_lines(fh: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | None]:
    """The lines of ``fh`` (bytes, newline kept); ``None`` for a line over ``limit`` bytes, whose rest is
    read and dropped in chunks (memory stays bounded)."""
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = fh.readline(1 << 20)
        yield None


def json_depth(value: Any) -> int:
    """How deeply ``value`` (parsed JSON) nests objects and arrays (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(raw: bytes | str, *, max_depth: int = MAX_JSON_DEPTH, limit: int = MAX_INPUT_BYTES) -> Any:
    """JSON text from a user (bytes must be UTF-8) → the value; ValueError with a short reason for text
    that is not UTF-8, not JSON, over ``limit`` bytes or nested deeper than ``max_depth``."""
    if len(raw) > limit:
        raise ValueError(f"over {limit:,} bytes")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    # A cheap bound first: fewer brackets than the limit cannot nest deeper than it.
    if text.count("[") + text.count("{") > max_depth:
        try:
            value = json.loads(text)
        except RecursionError:
            raise ValueError(f"nested deeper than {max_depth} levels") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
        if json_depth(value) > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels")
        return value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # a >4300-digit integer
        raise ValueError(str(exc)[:200]) from None


# --- outputs -----------------------------------------------------------------------------------------------
def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def is_stream_target(path: Path) -> bool:
    """Whether ``path`` is an existing FIFO or character device (``/dev/null``): written in place."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def check_output(
    path: str | Path, *, inputs: Iterable[str | Path | None] = (), what: str = "--output"
) -> Path:
    """``path`` as an output file, checked before anything is opened: its folder exists and is a folder,
    it is not a folder itself, and it is none of ``inputs`` (the same resolved path or the same inode).
    ConfigError in one line; nothing is created or truncated here."""
    p = Path(path).expanduser()
    folder = p.parent
    if not folder.exists():
        raise ConfigError(f"{what}: the folder {str(folder)!r} does not exist; create it first")
    if not folder.is_dir():
        raise ConfigError(f"{what}: {str(folder)!r} is not a folder")
    if p.is_dir():
        raise ConfigError(f"{what}: {str(p)!r} is a folder; give a file name inside it")
    for source in inputs:
        if source is not None and str(source) != STDIO and _same_file(p, Path(source).expanduser()):
            raise ConfigError(
                f"{what} {str(p)!r} is the input file {str(source)!r}: writing it would erase the input; "
                "give another output file"
            )
    return p


@contextlib.contextmanager
def atomic_output(path: str | Path, *, what: str = "--output", encoding: str = "utf-8") -> Iterator[IO[str]]:
    """A text file to write whose content replaces ``path`` only when the block finishes: it is written to
    a temporary name in the same folder, flushed, then renamed over ``path``; an exception (or an
    interrupt) removes the temporary file and leaves ``path`` as it was. A FIFO or character device
    (``/dev/null``) is written in place. Call :func:`check_output` first."""
    p = Path(path).expanduser()
    if is_stream_target(p):
        with p.open("w", encoding=encoding) as fh:
            yield fh
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise ConfigError(f"{what}: cannot write in {str(p.parent)!r} ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise DataError(
                f"cannot write ({exc.strerror or exc}); the old file is unchanged", path=str(p)
            ) from None
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | Path, text: str, *, what: str = "--output") -> None:
    """Replace ``path`` with ``text`` through :func:`atomic_output`."""
    with atomic_output(path, what=what) as fh:
        fh.write(text)


# --- output folders ----------------------------------------------------------------------------------------
def folder_owner(folder: Path) -> str | None:
    """The command named by ``folder``'s :data:`OWNER_FILE` (``None`` when it has none, or an unreadable
    one: ``"?"``)."""
    marker = folder / OWNER_FILE
    if not marker.is_file():
        return None
    try:
        data = parse_json(read_input(marker, what="the folder marker", limit=64 * 1024))
    except (ValueError, ConfigError):
        return "?"
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else "?"


def claim_folder(
    folder: str | Path,
    command: str,
    *,
    force: bool = False,
    legacy: Callable[[Path], bool] | None = None,
    option: str = "--output",
) -> Path:
    """``folder`` created if needed and marked as written by ``command`` (e.g. ``"tkgqa eval"``).

    An existing folder is taken when it is empty, marked by ``command``, or (no marker) recognised by
    ``legacy`` as written by ``command`` before folders were marked; a folder marked by another command,
    or holding files of nothing of ours, is refused (ConfigError) unless ``force``."""
    out = Path(folder).expanduser()
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{option} {str(out)!r} is a file, not a folder; pass a folder")
    owner = folder_owner(out) if out.is_dir() else None
    if owner is not None and owner != command and not force:
        raise ConfigError(
            f"{option} {str(out)!r} was written by `{owner}`, not `{command}`; pass another folder, "
            "or --force to write into it anyway"
        )
    foreign = owner is None and out.is_dir() and not force and any(out.iterdir())
    if foreign and (legacy is None or not legacy(out)):
        raise ConfigError(
            f"{option} {str(out)!r} already holds files that `{command}` did not write; pass a new or "
            "empty folder, or --force to write into it anyway"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        if owner != command:
            write_text(out / OWNER_FILE, json.dumps({"command": command}) + "\n", what=option)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder {str(out)!r} ({exc.strerror or exc})") from None
    return out

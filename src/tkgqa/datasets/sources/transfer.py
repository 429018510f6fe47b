"""Downloading one pinned file: resume (HTTP Range), timeouts, retries with back-off, progress, and the check
of its git blob id and size before it is moved into place. Standard library only (``urllib``)."""

from __future__ import annotations

import hashlib
import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import DataError, TKGQAError
from .catalogue import Pin

CHUNK = 1 << 20
#: ``progress(done_bytes, total_bytes_or_None)`` while a file downloads.
Progress = Callable[[int, int | None], None]


class DownloadError(TKGQAError):
    """A file could not be downloaded (network, HTTP status): the message names the URL and the ways out."""


class ChecksumError(DataError):
    """A downloaded or present file is not the pinned one (its blob id or size differs)."""


def git_blob_id(path: Path) -> str:
    """The git blob id of the file at ``path``: sha1 of ``blob <size>\\0`` + its bytes (streamed)."""
    size = path.stat().st_size
    h = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_pinned(path: Path, pin: Pin, shown: str) -> None:
    """ChecksumError naming ``shown``, the expected and the actual value: ``path`` is not ``pin``'s file."""
    size = path.stat().st_size
    if pin.size is not None and size != pin.size:
        raise ChecksumError(f"{shown}: expected {pin.size} bytes ({pin.source}), got {size}")
    actual = git_blob_id(path)
    if actual != pin.blob:
        raise ChecksumError(f"{shown}: expected git blob {pin.blob} ({pin.source}), got {actual}")


@dataclass(frozen=True)
class TransferSettings:
    """``timeout`` seconds per connection attempt and read; ``retries`` further attempts after a failure,
    waiting ``backoff`` × 2^k seconds before attempt k+1."""

    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0


def offline_message(url: str, reason: object, entry: str) -> str:
    return (
        f"cannot download {url} ({reason}); check the network, or pass --mirror BASE (or set "
        f"TKGQA_DATA_MIRROR) to a mirror laid out as BASE/OWNER/REPO/COMMIT/PATH, or download the file "
        f"yourself and run `tkgqa data import {entry} PATH`"
    )


def _open(url: str, start: int, timeout: float) -> http.client.HTTPResponse:
    headers = {"User-Agent": "tkgqa-data"}
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=headers)
    response = urllib.request.urlopen(request, timeout=timeout)
    assert isinstance(response, http.client.HTTPResponse)
    return response


def _total(response: http.client.HTTPResponse, start: int) -> int | None:
    if response.status == 206:
        crange = response.headers.get("Content-Range", "")
        total = crange.rpartition("/")[2]
        return int(total) if total.isdigit() else None
    length = response.headers.get("Content-Length")
    return int(length) if length and length.isdigit() else None


def download(
    url: str,
    part: Path,
    *,
    entry: str,
    settings: TransferSettings = TransferSettings(),
    progress: Progress | None = None,
) -> Path:
    """Download ``url`` into ``part``, resuming from the bytes already there (HTTP Range); a cut connection
    is retried (with the bytes received kept) up to ``settings.retries`` times with back-off. HTTP 4xx is
    not retried. At the end: DownloadError (one line naming the URL, ``--mirror``, ``tkgqa data import``)."""
    part.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    while True:
        start = part.stat().st_size if part.exists() else 0
        try:
            response = _open(url, start, settings.timeout)
            with response:
                if start and response.status != 206:  # the server ignored Range: start over
                    start = 0
                total = _total(response, start)
                with part.open("ab" if start else "wb") as out:
                    done = start
                    if progress:
                        progress(done, total)
                    while chunk := response.read(CHUNK):
                        out.write(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
                if total is not None and done < total:
                    raise http.client.IncompleteRead(b"", total - done)
            return part
        except urllib.error.HTTPError as exc:
            if (
                exc.code == 416 and start
            ):  # nothing left to send: what we hold is the whole file (checked next)
                return part
            if 400 <= exc.code < 500 or attempt >= settings.retries:
                raise DownloadError(offline_message(url, f"HTTP {exc.code} {exc.reason}", entry)) from None
        except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            if attempt >= settings.retries:
                reason = getattr(exc, "reason", None) or exc.__class__.__name__
                raise DownloadError(offline_message(url, reason, entry)) from None
        time.sleep(settings.backoff * (2**attempt))
        attempt += 1


def fetch_pinned(
    pin: Pin,
    dest: Path,
    *,
    base: str,
    entry: str,
    label: str | None = None,
    settings: TransferSettings = TransferSettings(),
    progress: Progress | None = None,
) -> None:
    """``pin``'s file at ``dest``: downloaded to ``dest.part`` (resumed when a part is there), its size and
    blob id checked, then renamed into place. On a mismatch the part is deleted and ChecksumError (naming
    ``label``, the expected and the actual value) raised."""
    part = dest.with_name(dest.name + ".part")
    download(pin.url(base), part, entry=entry, settings=settings, progress=progress)
    try:
        check_pinned(part, pin, label or dest.name)
    except ChecksumError:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, dest)

"""Slow work in progress, process-wide: the places that load a model (the MiniLM and model2vec embedders, a
distillation, a llama.cpp LLM) wrap the load in :func:`model_loading`, and a local LLM's calls in
:func:`slow_call`, each with an estimate when one is known. So a server can say "loading MiniLM…" while a
first question waits for it (``/api/status``, the ``loading`` event of ``/api/ask/stream``, MCP progress)
instead of only "answering…", and the CLI announces each one on stderr as it starts (with its estimate) and
says how long it took (:func:`add_listener`). No dependency: any layer may import it.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger("tkgqa.loading")

Kind = Literal["model", "call"]


@dataclass(frozen=True)
class Loading:
    """One piece of slow work in progress: what (``"MiniLM (sentence-transformers)"``), since when
    (``time.monotonic()``), the estimate given when it started (``"about 6 min on 2 CPU cores"``) and its
    kind (``model``: a load; ``call``: one call to a local model)."""

    what: str
    since: float
    estimate: str | None = None
    kind: Kind = "model"

    def to_dict(self, now: float | None = None) -> dict[str, object]:
        elapsed = (time.monotonic() if now is None else now) - self.since
        out: dict[str, object] = {"what": self.what, "elapsed_ms": round(max(0.0, elapsed) * 1000)}
        if self.estimate:
            out["estimate"] = self.estimate
        return out


#: A listener gets ``("start", work, None)`` when slow work begins, ``("end", work, seconds)`` when it ends.
Listener = Callable[[str, Loading, float | None], None]

_lock = threading.Lock()
_active: dict[int, Loading] = {}
_ids = itertools.count()
_listeners: list[Listener] = []


def add_listener(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` at the start and end of each piece of slow work; returns its remover."""
    with _lock:
        _listeners.append(listener)

    def remove() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return remove


def _notify(event: str, work: Loading, seconds: float | None) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event, work, seconds)
        except Exception:  # a listener (a closed terminal) never breaks the work it watches
            log.debug("a loading listener failed", exc_info=True)


@contextmanager
def _working(what: str, estimate: str | None, kind: Kind) -> Iterator[None]:
    key = next(_ids)
    work = Loading(what, time.monotonic(), estimate, kind)
    with _lock:
        _active[key] = work
    log.info("%s %s", "loading" if kind == "model" else "calling", what)
    _notify("start", work, None)
    try:
        yield
    finally:
        with _lock:
            _active.pop(key, None)
        seconds = time.monotonic() - work.since
        log.info("%s %s in %.1f s", "loaded" if kind == "model" else "called", what, seconds)
        _notify("end", work, seconds)


@contextmanager
def model_loading(what: str, estimate: str | None = None) -> Iterator[None]:
    """Within the block, :func:`loading_now` lists ``what`` as loading (the block loads a model, or builds
    one: a distillation); ``estimate`` says how long it usually takes."""
    with _working(what, estimate, "model"):
        yield


@contextmanager
def slow_call(what: str, estimate: str | None = None) -> Iterator[None]:
    """The block is one call to a slow local model (announced to listeners; not a load)."""
    with _working(what, estimate, "call"):
        yield


def loading_now() -> list[dict[str, object]]:
    """The model loads in progress, oldest first: ``[{"what", "elapsed_ms"[, "estimate"]}]`` (empty when
    none)."""
    now = time.monotonic()
    with _lock:
        loads = sorted((x for x in _active.values() if x.kind == "model"), key=lambda x: x.since)
    return [x.to_dict(now) for x in loads]

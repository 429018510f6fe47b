"""Models being loaded right now, process-wide: the places that load a model (the MiniLM and model2vec
embedders, a llama.cpp LLM) wrap the load in :func:`model_loading`, so a server can say "loading MiniLM…"
while a first question waits for it (``/api/status`` and the ``loading`` event of ``/api/ask/stream``)
instead of only "answering…". No dependency: any layer may import it.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

log = logging.getLogger("tkgqa.loading")


@dataclass(frozen=True)
class Loading:
    """One model load in progress: what is loading (``"MiniLM (sentence-transformers)"``) and since when
    (``time.monotonic()``)."""

    what: str
    since: float

    def to_dict(self, now: float | None = None) -> dict[str, object]:
        elapsed = (time.monotonic() if now is None else now) - self.since
        return {"what": self.what, "elapsed_ms": round(max(0.0, elapsed) * 1000)}


_lock = threading.Lock()
_active: dict[int, Loading] = {}
_ids = itertools.count()


@contextmanager
def model_loading(what: str) -> Iterator[None]:
    """Within the block, :func:`loading_now` lists ``what`` as loading (the block loads a model)."""
    key = next(_ids)
    with _lock:
        _active[key] = Loading(what, time.monotonic())
    log.info("loading %s", what)
    try:
        yield
    finally:
        with _lock:
            done = _active.pop(key)
        log.info("loaded %s in %.1f s", what, time.monotonic() - done.since)


def loading_now() -> list[dict[str, object]]:
    """The loads in progress, oldest first: ``[{"what", "elapsed_ms"}]`` (empty when none)."""
    now = time.monotonic()
    with _lock:
        loads = sorted(_active.values(), key=lambda x: x.since)
    return [x.to_dict(now) for x in loads]

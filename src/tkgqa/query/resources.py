"""One per-KG resource cache for every method: mention indexes, linkers, lexicons, BM25 indexes …

``PerKG(build)`` builds a resource the first time a store is seen and hands the same object back for that
store afterwards. Stores are told apart by identity (never by equality: two stores with the same name are
different KGs), held weakly when the store allows it so a cache never keeps a KG alive, and a resource is
rebuilt when its store has grown (``len(kg)`` changed: facts were appended since it was built). At most
``size`` stores are remembered (least recently used dropped).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..kg.base import KGStore

T = TypeVar("T")


@dataclass
class _Entry(Generic[T]):
    ref: Callable[[], Any]
    size: int
    value: T


class PerKG(Generic[T]):
    """A bounded cache of one kind of resource per KG store (see the module docstring)."""

    def __init__(self, build: Callable[[KGStore], T], *, size: int = 4) -> None:
        if size < 1:
            raise ValueError(f"PerKG size must be >= 1, got {size}")
        self.build = build
        self.size = size
        self._entries: OrderedDict[int, _Entry[T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kg: KGStore) -> T:
        """The resource for ``kg``, built (or rebuilt after appends) when needed."""
        key, n = id(kg), len(kg)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.ref() is kg and entry.size == n:
                self._entries.move_to_end(key)
                return entry.value
        value = self.build(kg)  # outside the lock: building may take seconds
        with self._lock:
            self._entries[key] = _Entry(_reference(kg), n, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def __contains__(self, kg: KGStore) -> bool:
        entry = self._entries.get(id(kg))
        return entry is not None and entry.ref() is kg and entry.size == len(kg)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _reference(kg: KGStore) -> Callable[[], Any]:
    try:
        return weakref.ref(kg)
    except TypeError:  # a store without __weakref__: hold it (bounded by ``size``)
        return lambda: kg

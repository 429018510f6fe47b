"""The offline symbolic temporal reasoner (method ``"symbolic"``), in :mod:`.method`; registered by
:mod:`.plugin`. The reasoning itself is the shared query layer's (:class:`tkgqa.query.Reasoner`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..package import lazy_exports

if TYPE_CHECKING:  # the public names, imported on first use (lazy_exports)
    from .method import SymbolicConfig, SymbolicReasoner, pretty

__all__ = ["SymbolicConfig", "SymbolicReasoner", "pretty"]

__getattr__, __dir__ = lazy_exports(__name__)

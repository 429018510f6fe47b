"""The offline symbolic temporal reasoner (method ``"symbolic"``), in :mod:`.method`; registered by
:mod:`.plugin`. The reasoning itself is the shared query layer's (:class:`tkgqa.query.Reasoner`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .method import SymbolicConfig, SymbolicReasoner, pretty

__all__ = ["SymbolicConfig", "SymbolicReasoner", "pretty"]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())

"""``hybrid``: the offline symbolic reasoner first, an LLM method only when it abstains (:mod:`.method`);
registered by :mod:`.plugin`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .method import HybridConfig, HybridMethod, parse_hybrid_spec

__all__ = ["HybridConfig", "HybridMethod", "parse_hybrid_spec"]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())

"""``hybrid``: the offline symbolic reasoner first, an LLM method only when it abstains (:mod:`.method`);
registered by :mod:`.plugin`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..package import lazy_exports

if TYPE_CHECKING:  # the public names, imported on first use (lazy_exports)
    from .method import HybridConfig, HybridMethod, merge_usage, parse_hybrid_spec

__all__ = ["HybridConfig", "HybridMethod", "merge_usage", "parse_hybrid_spec"]

__getattr__, __dir__ = lazy_exports(__name__)

"""``hybrid``: the offline symbolic reasoner first, an LLM method only when it abstains (:mod:`.method`);
registered by :mod:`.plugin`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_package below)
    from .method import HybridConfig, HybridMethod, parse_hybrid_spec

__all__, __getattr__ = lazy_package(__name__, __file__, globals())

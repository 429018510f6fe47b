"""The LLM baselines of the ARI paper (Appendix A.1), all taking ``llm=SPEC`` and returning ``Answer``:

* ``llm_only`` — the question alone (the paper's "ChatGPT" row);
* ``kg_rag`` — at most 20 facts retrieved around the question's linked entities and times in the prompt;

``cot_kb`` and ``react_kb`` (ARI's agent without methodologies) live with ARI's agent, in
:mod:`tkgqa.methods.ari.kb_baselines`: methods never import each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .llm_only import LLMOnly, LLMOnlyConfig
    from .rag import KGRAG, KGRAGConfig

__all__ = ["KGRAG", "KGRAGConfig", "LLMOnly", "LLMOnlyConfig"]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())

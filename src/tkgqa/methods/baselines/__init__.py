"""The LLM baselines of the ARI paper (Appendix A.1), all taking ``llm=SPEC`` and returning ``Answer``:

* ``llm_only`` — the question alone (the paper's "ChatGPT" row);
* ``kg_rag`` — at most 20 facts retrieved around the question's linked entities and times in the prompt;
* ``cot_kb`` — few-shot examples with step-by-step reasoning; the model writes its KB actions itself
  (grounded to the nearest executable action) and sees their results;
* ``react_kb`` — ARI's agent (same candidate actions, same filter) without methodologies, ReAct format.
"""

from .agents import CoTKB, ReActKB
from .llm_only import LLMOnly, LLMOnlyConfig
from .rag import KGRAG, KGRAGConfig

__all__ = ["KGRAG", "CoTKB", "KGRAGConfig", "LLMOnly", "LLMOnlyConfig", "ReActKB"]

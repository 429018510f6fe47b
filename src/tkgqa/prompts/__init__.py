"""What every method's prompts share: the shape of a prompt (:mod:`tkgqa.prompts.base`: ``PromptSpec``,
``Prompt``, ``Bound``) and the one way to ask an LLM with one (:mod:`tkgqa.prompts.ask`: call, parse, re-ask).
The prompts themselves are their method's, in its package (``tkgqa/methods/<name>/prompts.py``)."""

from .ask import Asker, Parsed, Refusal, Refused, ask, run_prompt
from .base import Bound, Context, Prompt, PromptSpec

__all__ = [
    "Asker",
    "Bound",
    "Context",
    "Parsed",
    "Prompt",
    "PromptSpec",
    "Refusal",
    "Refused",
    "ask",
    "run_prompt",
]

"""Prompt templates shared by the methods; see :mod:`tkgqa.prompts.base` for the convention and
:mod:`tkgqa.prompts.ask` for the one way to ask an LLM with a prompt."""

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

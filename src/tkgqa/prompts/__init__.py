"""Prompt templates shared by the methods; see :mod:`tkgqa.prompts.base` for the convention."""

from .base import Context, Prompt, PromptSpec, run_prompt

__all__ = ["Context", "Prompt", "PromptSpec", "run_prompt"]

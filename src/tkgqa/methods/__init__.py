"""QA methods; all return :class:`Answer`."""

from .base import METHODS, Answer, Method, MethodConfig, resolve_method

__all__ = ["METHODS", "Answer", "Method", "MethodConfig", "resolve_method"]

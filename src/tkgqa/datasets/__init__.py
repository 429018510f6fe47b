"""Benchmark datasets and the ``Question`` model."""

from .base import Question

__all__ = ["Question"]

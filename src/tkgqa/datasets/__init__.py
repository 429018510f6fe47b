"""Benchmark datasets, the ``Question`` model, loaders (by name) and question sampling."""

from .base import Question
from .core import DATASETS, Dataset, load_dataset
from .loaders import BUILTIN_DATASETS  # registers the built-in loaders (lazily imported)
from .sampling import SAMPLE_MODES, sample_questions, select_questions

__all__ = [
    "BUILTIN_DATASETS",
    "DATASETS",
    "SAMPLE_MODES",
    "Dataset",
    "Question",
    "load_dataset",
    "sample_questions",
    "select_questions",
]

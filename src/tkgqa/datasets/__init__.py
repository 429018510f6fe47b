"""Benchmark datasets, the ``Question`` model, loaders (by name) and question sampling."""

from .base import Question
from .core import DATASETS, Dataset, load_dataset
from .sampling import SAMPLE_MODES, sample_questions, select_questions

__all__ = [
    "DATASETS",
    "SAMPLE_MODES",
    "Dataset",
    "Question",
    "load_dataset",
    "sample_questions",
    "select_questions",
]

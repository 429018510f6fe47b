"""Imports the built-in dataset loaders so they register in :data:`~tkgqa.datasets.core.DATASETS`."""

from __future__ import annotations

from . import clqa, cronquestions, jsonl, multitq, timequestions

__all__ = ["clqa", "cronquestions", "jsonl", "multitq", "timequestions"]

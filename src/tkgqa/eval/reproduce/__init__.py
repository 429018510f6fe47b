"""Reproduce the papers' tables: the published numbers (each method package's ``paper.json``, typed in once
with table and row references) beside ours, each cell run through the ``tkgqa eval`` runner (``tkgqa
reproduce PAPER``)."""

from __future__ import annotations

from .data import DATA, default_data_root, missing_data
from .estimate import ESTIMATE_METHOD, Estimate, dry_run
from .orchestrate import REPRODUCE_JSON, REPRODUCE_MD, ReproduceResult, RunSummary, reproduce
from .render import cell_texts, render_estimates, render_markdown
from .run import Cell, RunKey
from .spec import Column, Metric, Paper, PaperRow, Scale, Table, load_paper, paper_names, select_tables
from .stats import bootstrap_interval, mean_interval, wilson_interval

__all__ = [
    "DATA",
    "ESTIMATE_METHOD",
    "REPRODUCE_JSON",
    "REPRODUCE_MD",
    "Cell",
    "Column",
    "Estimate",
    "Metric",
    "Paper",
    "PaperRow",
    "ReproduceResult",
    "RunKey",
    "RunSummary",
    "Scale",
    "Table",
    "bootstrap_interval",
    "cell_texts",
    "default_data_root",
    "dry_run",
    "load_paper",
    "mean_interval",
    "missing_data",
    "paper_names",
    "render_estimates",
    "render_markdown",
    "reproduce",
    "select_tables",
    "wilson_interval",
]

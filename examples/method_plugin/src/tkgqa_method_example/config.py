"""Settings of ``example_timeline``.

Every setting is typed (unknown or mistyped ones are errors, with the valid ones listed). A setting that
differs between the two presets is declared ``None`` by default and filled from :data:`PRESETS`: ``paper``
(the published method's configuration; the default) or ``ours`` (the project's variant). Each preset
setting says in words what it means on each side, so ``report.json``'s ``deviations`` reads as prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from tkgqa.methods.base import Preset, PresetConfig
from tkgqa.methods.client import client_option


class Order(StrEnum):
    """Which fact of the question's entity gives the answer."""

    EARLIEST = "earliest"
    LATEST = "latest"


#: The value each preset gives every preset-dependent setting.
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {"order": Order.EARLIEST},
    Preset.OURS: {"order": Order.LATEST},
}
#: What each preset-dependent setting means on each side (written into ``deviations``).
PAPER_SIDE = {"order": "the entity's earliest fact answers"}
OURS_SIDE = {"order": "the entity's latest fact answers"}


class TimelineConfig(PresetConfig):
    """``--method "example_timeline:preset=ours,order=earliest"`` or ``--method-option KEY=VALUE``."""

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = OURS_SIDE

    preset: Preset = Preset.PAPER
    order: Order | None = None  # None: the preset's value
    # A client of `tkgqa serve` may set this one in a request's "options" (bounded: clients are untrusted).
    max_evidence: int = client_option(3, ge=0, le=50, description="facts of the entity returned as evidence")
    # Not marked: only the server's --method spec (or Python) sets it; a client that sends it gets a 403.
    min_label_chars: int = Field(default=3, ge=1, description="shorter entity labels are not looked for")

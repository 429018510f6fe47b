"""The evaluation tests each start with an empty ``$TKGQA_HOME`` (shared fixtures: ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: object) -> None:
    """Autouse wrapper around the shared ``isolated_home`` fixture."""

"""The plugin tests: each module names the distribution it needs (``DIST``) and the folder ``make
install-test`` installs it from (``SOURCE``); without it the module is skipped, saying how to install it."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest


@pytest.fixture(scope="module", autouse=True)
def _distribution_installed(request: pytest.FixtureRequest) -> None:
    dist, source = request.module.DIST, request.module.SOURCE
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        pytest.skip(
            f"the distribution {dist!r} is not installed: run `make install-test` (it installs {source} into "
            ".test-plugins/, which only the tests use)"
        )


@pytest.fixture(autouse=True)
def _home(isolated_home: Path) -> None:
    """Each test starts with an empty ``$TKGQA_HOME``."""

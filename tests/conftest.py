"""Shared fixtures: an isolated ``$TKGQA_HOME`` (whole session), the shared benchmark data, the demo KG."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_PLUGINS = REPO_ROOT / ".test-plugins"
if TEST_PLUGINS.is_dir() and str(TEST_PLUGINS) not in sys.path:
    # the example plugin distribution (`make install-test` puts it there, never into the user's environment);
    # on the path before any registry looks for entry points, and for the subprocesses the tests start
    sys.path.insert(0, str(TEST_PLUGINS))
    _path = [str(TEST_PLUGINS), os.environ.get("PYTHONPATH")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in _path if p)


def _pin_xdist_worker() -> None:
    """Under pytest-xdist (``make test`` runs a worker per core), each worker and what it starts run on a
    share of the CPUs of their own. torch, llama.cpp (``tkgqa.machine.usable_cpus``) and the KG's sort
    threads size themselves by the CPUs a process may use, so two workers never put two busy threads on
    one core: llama.cpp's and torch's threads slow down manyfold when they share one."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker.startswith("gw") or not count or not hasattr(os, "sched_setaffinity"):
        return
    cpus, n, i = sorted(os.sched_getaffinity(0)), int(count), int(worker.removeprefix("gw"))
    share = len(cpus) // n
    if share >= 1 and i < n:
        os.sched_setaffinity(0, cpus[i * share : (i + 1) * share])


_pin_xdist_worker()  # before anything imports torch: its thread pool is sized once

from llm_stalls import dribbling_llm, stalled_endpoint, stalled_llm  # noqa: E402, F401  (shared fixtures)
from tkgqa.kg import TemporalKG  # noqa: E402

try:  # tests assert behaviour, never speed: no hypothesis deadline or "too slow" check on a busy machine
    from hypothesis import HealthCheck, settings

    settings.register_profile("tkgqa", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("tkgqa")
except ImportError:  # a core-only install without the dev extra
    pass

DATA_ENV = "TKGQA_DATA"
SHARED_DATA_ENV = "TKGQA_SHARED_DATA"


@pytest.fixture(scope="session", autouse=True)
def _isolated_tkgqa_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test writes caches under a temporary ``$TKGQA_HOME``, never into the user's home."""
    home = tmp_path_factory.mktemp("tkgqa_home")
    previous = os.environ.get("TKGQA_HOME")
    os.environ["TKGQA_HOME"] = str(home)
    yield home
    if previous is None:
        os.environ.pop("TKGQA_HOME", None)
    else:
        os.environ["TKGQA_HOME"] = previous


@pytest.fixture(scope="session", autouse=True)
def _ari_hashing_embedder() -> Iterator[None]:
    """ARI's automatic embedder choice is MiniLM when installed (slow on CPU); tests use the hashing
    embedder unless ``$TKGQA_ARI_EMBEDDER`` is set (tests of the choice itself clear it)."""
    previous = os.environ.get("TKGQA_ARI_EMBEDDER")
    os.environ.setdefault("TKGQA_ARI_EMBEDDER", "hashing")
    yield
    if previous is None:
        os.environ.pop("TKGQA_ARI_EMBEDDER", None)


def shared_data_path() -> Path:
    """The data root the tests read: ``$TKGQA_DATA`` (or its older name ``$TKGQA_SHARED_DATA``), else
    ``<repo>/../shared/data`` (``make test`` and ``.ci/run`` set ``TKGQA_DATA`` to that folder)."""
    env = os.environ.get(DATA_ENV) or os.environ.get(SHARED_DATA_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only benchmark data folder; skips the test when it is absent."""
    path = shared_data_path()
    if not path.is_dir():
        pytest.skip(f"shared benchmark data not found at {path} (set {DATA_ENV})")
    return path


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``$TKGQA_HOME`` of this test's own (caches and run logs start empty)."""
    home = tmp_path / "tkgqa_home"
    monkeypatch.setenv("TKGQA_HOME", str(home))
    return home


@pytest.fixture
def demo_kg() -> TemporalKG:
    """A fresh copy of the bundled demo KG (tests may append to it)."""
    from tkgqa.kg.loaders import load_demo_kg

    return load_demo_kg()


R3_PROMPTS_MISSING = "tkgqa data fetch r3-prompts"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A test that builds R3's paper preset needs the authors' prompt files (the preset stops without them,
    naming ``tkgqa data fetch r3-prompts``): when the data root lacks them, such a test is reported as
    skipped with that reason, as every test needing the shared data is."""
    outcome = yield
    report = outcome.get_result()
    exc = call.excinfo.value if call.excinfo is not None else None
    if report.failed and exc is not None and R3_PROMPTS_MISSING in str(exc):
        from tkgqa.home import data_root
        from tkgqa.methods.r3.demos import AUTHORS_SUBDIR

        if not (data_root() / AUTHORS_SUBDIR).is_dir():  # absent indeed: never hides a failure otherwise
            reason = (
                f"needs R3's prompt files (`{R3_PROMPTS_MISSING}`; {data_root() / AUTHORS_SUBDIR} is absent)"
            )
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")

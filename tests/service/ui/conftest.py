"""Browser tests of the web UI: Playwright (Python) driving the system Chromium (Debian's ``chromium``;
``playwright install`` cannot download browsers here). Skipped, with the reason, when Playwright or Chromium
is missing. Each test's page is screenshotted into ``$TKGQA_UI_ARTIFACTS`` (default ``ui-screenshots`` under
pytest's base temporary folder) when it fails."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web UI needs FastAPI: install tkgqa[service]")
pytest.importorskip("uvicorn", reason="the web UI needs uvicorn: install tkgqa[service]")
pytest.importorskip("playwright.sync_api", reason="browser tests need playwright: install tkgqa[dev]")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/service: its LLM stub

from playwright import sync_api
from stubs import llm_stub, make_run
from ui_shots import DEFAULT_FOLDER, PRESET, artifacts

from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.server import serve_in_thread

WIDTHS = (1400, 390)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session", autouse=True)
def screenshot_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Screenshots go under pytest's base temporary folder (``<basetemp>/ui-screenshots``) unless
    ``$TKGQA_UI_ARTIFACTS`` names another."""
    DEFAULT_FOLDER[:] = [tmp_path_factory.getbasetemp() / "ui-screenshots"]
    return artifacts()


@pytest.fixture(scope="module", autouse=True)
def cheap_presets() -> Iterator[None]:
    """The servers offer :data:`ui_shots.PRESET` (hashing embedder) instead of the MiniLM preset; patched per
    module of this folder only (never leaking into other tests of the session)."""
    import tkgqa.service.info_routes
    import tkgqa.service.policy

    with pytest.MonkeyPatch.context() as mp:
        for module in (tkgqa.service.info_routes, tkgqa.service.policy):
            mp.setattr(module, "METHOD_PRESETS", (PRESET,))
        yield


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per module of UI tests, closed after it: Playwright's sync API runs an event loop in the
    main thread while it is open, so a session-wide browser broke every later test that calls
    ``asyncio.run`` (the MCP tests, when run after these). ``package`` scope would not end with this folder,
    which is not a package."""
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium on PATH: apt-get install chromium (the CI script does)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    """The demo KG served on a free loopback port; ``fake`` is the server's LLM (tests only)."""
    with serve_in_thread(create_app(llm="fake")) as url:
        yield url


@pytest.fixture(scope="module")
def runs_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo KG with a runs folder holding one run (see ``make_run``)."""
    root = tmp_path_factory.mktemp("runs")
    make_run(root)
    with serve_in_thread(create_app(settings=ServiceSettings(runs_dir=str(root)))) as url:
        yield url


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    with llm_stub() as url:
        yield url


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    """A server whose LLM is ``openai:gpt-4o-mini``; each test points ``OPENAI_BASE_URL`` at the stub."""
    with serve_in_thread(create_app(llm="openai:gpt-4o-mini")) as url:
        yield url


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, stub_url: str) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")

    def point(mode: str) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub_url}/{mode}/v1")

    return point


class PageErrors:
    """Console errors and uncaught exceptions of a page."""

    def __init__(self, page: Any) -> None:
        self.console: list[str] = []
        self.uncaught: list[str] = []
        page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.uncaught.append(f"{e}\n{getattr(e, 'stack', '') or ''}"))


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def width(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    width = request.getfixturevalue("width") if "width" in request.fixturenames else 1400
    context = browser.new_context(viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.errors = PageErrors(pg)
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in request.node.name)
        pg.screenshot(path=str(artifacts() / f"failed-{name}.png"), full_page=True)
    context.close()

"""The runs browser reads nothing outside its folder and the server answers only to its own host names
(issue #23, items 3 and 10): symlinks are followed to their real paths and refused when they leave the
runs folder (``report.md → /proc/self/environ``, ``breakdown.png → any file``), a dangling or looping one
never makes ``GET /api/runs`` a 500; a ``Host`` header outside the allow-list is a 400 (DNS rebinding)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient
from stubs import make_run

from tkgqa.service import create_app
from tkgqa.service.guard import allowed_hosts, host_name
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.runs import confined

SECRET = "OPENAI_API_KEY=sk-this-must-never-be-served"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """``runs/`` with one good run, and ``outside/`` with a secret text, a PNG, a JSON report and rows."""
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    runs.mkdir()
    outside.mkdir()
    make_run(runs, "good")
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + SECRET.encode())
    (outside / "report.json").write_text(json.dumps({"n": 1, "method": {"method": SECRET}}), encoding="utf-8")
    row = {"qid": "9", "question": SECRET, "predictions": [SECRET], "gold": [SECRET], "strict_hit": True}
    (outside / "results.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    return runs, outside


def client_for(runs: Path) -> TestClient:
    return TestClient(create_app(settings=ServiceSettings(runs_dir=str(runs))))


def test_files_linked_out_of_the_runs_folder_are_never_served(layout: tuple[Path, Path]) -> None:
    runs, outside = layout
    leaky = make_run(runs, "leaky")
    for name, target in (
        ("report.md", outside / "secret.txt"),
        ("breakdown.png", outside / "secret.png"),
        ("results.jsonl", outside / "results.jsonl"),
    ):
        (leaky / name).unlink()
        (leaky / name).symlink_to(target)
    with client_for(runs) as c:
        report = c.get("/api/runs/leaky")
        assert report.status_code == 200 and SECRET not in report.text
        assert report.json()["report_md"] == "" and report.json()["has_chart"] is False
        assert report.json()["counts"]["all"] == 0
        chart = c.get("/api/runs/leaky/chart")
        assert chart.status_code == 404 and SECRET not in chart.text
        rows = c.get("/api/runs/leaky/results")
        assert rows.status_code == 200 and rows.json()["total"] == 0 and SECRET not in rows.text


def test_a_report_linked_to_the_process_environment_is_not_served(layout: tuple[Path, Path]) -> None:
    runs, _ = layout
    if not Path("/proc/self/environ").exists():
        pytest.skip("no /proc/self/environ on this system")
    env = make_run(runs, "env")
    (env / "report.md").unlink()
    (env / "report.md").symlink_to("/proc/self/environ")
    os.environ["TKGQA_CONFINEMENT_CANARY"] = SECRET
    try:
        with client_for(runs) as c:
            res = c.get("/api/runs/env")
    finally:
        del os.environ["TKGQA_CONFINEMENT_CANARY"]
    assert res.status_code == 200 and res.json()["report_md"] == "" and SECRET not in res.text


def test_run_folders_and_reports_linked_out_are_no_runs(layout: tuple[Path, Path]) -> None:
    runs, outside = layout
    (runs / "elsewhere").symlink_to(outside, target_is_directory=True)  # a folder leading out
    linked = runs / "linked_report"
    linked.mkdir()
    (linked / "report.json").symlink_to(outside / "report.json")  # its report leads out
    with client_for(runs) as c:
        listing = c.get("/api/runs")
        assert listing.status_code == 200 and [r["name"] for r in listing.json()["runs"]] == ["good"]
        assert SECRET not in listing.text
        for name in ("elsewhere", "linked_report"):
            assert c.get(f"/api/runs/{name}").status_code == 404
            assert c.get(f"/api/runs/{name}/chart").status_code == 404


def test_dangling_and_looping_symlinks_never_break_the_listing(layout: tuple[Path, Path]) -> None:
    runs, _ = layout
    (runs / "ghost").symlink_to(runs / "no-such-run", target_is_directory=True)
    (runs / "loop").symlink_to(runs / "loop")
    half = make_run(runs, "half")
    (half / "report.md").unlink()
    (half / "report.md").symlink_to(runs / "gone.md")  # dangling file inside a run
    with client_for(runs) as c:
        listing = c.get("/api/runs")
        assert listing.status_code == 200, listing.text
        assert sorted(r["name"] for r in listing.json()["runs"]) == ["good", "half"]
        for name in ("ghost", "loop"):
            assert c.get(f"/api/runs/{name}").status_code == 404
        assert c.get("/api/runs/half").json()["report_md"] == ""


def test_links_that_stay_inside_the_runs_folder_are_followed(layout: tuple[Path, Path]) -> None:
    runs, _ = layout
    (runs / "latest").symlink_to(runs / "good", target_is_directory=True)
    shared = make_run(runs, "shared")
    (shared / "report.md").unlink()
    (shared / "report.md").symlink_to(Path("..") / "good" / "report.md")
    with client_for(runs) as c:
        assert c.get("/api/runs/latest").json()["report_md"].startswith("# symbolic")
        assert c.get("/api/runs/shared").json()["report_md"].startswith("# symbolic")
    assert confined(runs, runs / "good" / "report.md") == (runs / "good" / "report.md").resolve()
    assert confined(runs, runs / "good") is None  # a folder is no file


# --- Host header ------------------------------------------------------------------------------------------
def test_host_names_are_compared_without_port_brackets_case_or_trailing_dot() -> None:
    assert host_name("[::1]:8000") == "::1"
    assert host_name("LocalHost.:80") == "localhost"
    assert host_name("127.0.0.1") == "127.0.0.1"
    assert host_name("::1") == "::1"
    assert allowed_hosts("127.0.0.1") == ("127.0.0.1", "localhost", "::1")
    assert allowed_hosts("0.0.0.0", ["Example.org"]) == ("127.0.0.1", "localhost", "::1", "example.org")
    assert "10.0.0.5" in allowed_hosts("10.0.0.5")
    assert host_name("[0:0:0:0:0:0:0:1]") == "::1"
    for bad in ("localhost:8000@evil.example", "local host", "localhost:99999999", "[zz]", "a/b"):
        assert host_name(bad) == "", bad


def hosts_client(*extra: str, bound: str = "127.0.0.1") -> TestClient:
    settings = ServiceSettings(allowed_hosts=allowed_hosts(bound, list(extra)))
    return TestClient(create_app(settings=settings), base_url="http://127.0.0.1:8000")


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST.", "[::1]:8000", "127.0.0.1"]
)
def test_loopback_host_names_are_answered(host: str) -> None:
    with hosts_client() as c:
        for path in ("/health", "/api/kg", "/"):
            assert c.get(path, headers={"Host": host}).status_code == 200, (host, path)


REFUSED_HOSTS = ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "0.0.0.0", "lo:1@evil.ex"]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_other_host_names_are_refused_with_400(host: str) -> None:
    with hosts_client() as c:
        for method, path, body in (("GET", "/health", None), ("POST", "/api/ask", {"question": "x"})):
            res = c.request(method, path, json=body, headers={"Host": host})
            assert res.status_code == 400, (host, path)
            assert res.json()["type"] == "BadHost" and "--allow-host" in res.json()["error"]


def test_allow_host_adds_a_name_and_star_allows_any() -> None:
    with hosts_client("tkgqa.lan") as c:
        assert c.get("/health", headers={"Host": "tkgqa.lan:8000"}).status_code == 200
        assert c.get("/health", headers={"Host": "other.lan"}).status_code == 400
    with hosts_client("*") as c:
        assert c.get("/health", headers={"Host": "anything.example"}).status_code == 200


def test_tkgqa_serve_always_checks_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from tkgqa.cli import main
    from tkgqa.service import server

    seen: dict[str, Any] = {}

    class NoServer:
        def run(self) -> None:
            pass

    def fake_make_server(app: Any, host: str, port: int, **_: Any) -> NoServer:
        seen["hosts"] = app.state.tkgqa.settings.allowed_hosts
        return NoServer()

    monkeypatch.setattr(server, "make_server", fake_make_server)
    for args, hosts in (
        (["--port", "8123"], ("127.0.0.1", "localhost", "::1")),
        (["--host", "::1", "--allow-host", "tkgqa.lan", "--allow-host", "LAN2."],
         ("127.0.0.1", "localhost", "::1", "tkgqa.lan", "lan2")),
    ):  # fmt: skip
        with pytest.raises(SystemExit) as done:
            main(["serve", *args])
        assert done.value.code == 0 and seen.pop("hosts") == hosts

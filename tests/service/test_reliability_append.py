"""Reliability round 3 (issue #23), appends through the service: the lines are read by the TSV loader's own
code (an empty end is ongoing, invisible characters and U+2028 are refused, names are NFC); a KG held in
memory refuses appends unless ``--ephemeral-append`` (and then says so); ``serve --kg missing.duckdb
--allow-append`` refuses unless ``--create``; another program's DuckDB file is refused unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.errors import ConfigError, DataError, NotFoundError
from tkgqa.kg import load_kg
from tkgqa.service import create_app
from tkgqa.service.live import parse_fact_lines
from tkgqa.service.policy import ServiceSettings

EPHEMERAL = ServiceSettings(allow_append=True, ephemeral_append=True)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(llm="fake", settings=EPHEMERAL)) as c:
        yield c


def test_an_empty_end_field_means_ongoing_as_in_the_loader(tmp_path: Path) -> None:
    line = "X\tr\tY\t2015\t"
    (appended,) = parse_fact_lines(line)
    path = tmp_path / "kg.tsv"
    path.write_text(line + "\n", encoding="utf-8")
    (loaded,) = list(load_kg(path, cache=False))
    assert appended == loaded and appended.end is None
    (event,) = parse_fact_lines("X\tr\tY\t2015")
    assert event.end == event.start


@pytest.mark.parametrize(
    "lines",
    ["Barack\u200bObama\tr\tY\t2015", "A\u2028B\tr\tY\t2015", "A\tr\u200e\tY\t2015", "A\tr\tY\x07\t2015"],
)
def test_invisible_and_control_characters_are_refused(lines: str) -> None:
    with pytest.raises(DataError, match="request:1:"):
        parse_fact_lines(lines)


def test_u2028_does_not_split_a_line_into_two_facts() -> None:
    with pytest.raises(DataError) as caught:
        parse_fact_lines("A\tr\tB\t2015\u2028C\tr\tD\t2016")
    assert "request:1:" in str(caught.value) and "request:2:" not in str(caught.value)  # one line, refused


def test_names_are_nfc_so_one_entity_has_one_spelling() -> None:
    facts = parse_fact_lines("Jose\u0301\tr\tY\t2015\nJos\u00e9\tr\tZ\t2016")
    assert {f.subject for f in facts} == {"Jos\u00e9"}


def test_appends_to_a_kg_held_in_memory_are_refused_unless_ephemeral() -> None:
    with TestClient(create_app(settings=ServiceSettings(allow_append=True))) as c:
        res = c.post("/api/kg/facts", json={"lines": "A\tr\tB\t2031"})
        assert res.status_code == 403 and "--ephemeral-append" in res.json()["error"]
    with TestClient(create_app(settings=EPHEMERAL)) as c:
        body = c.post("/api/kg/facts", json={"lines": "A\tr\tB\t2031"}).json()
        assert body["added"] == 1 and body["persisted"] is False and "restart" in body["note"]


def test_serve_flags_refuse_a_lossy_or_mistyped_append_setup(tmp_path: Path) -> None:
    from tkgqa.cli.serve_cmd import check_append_flags

    with pytest.raises(ConfigError, match="--ephemeral-append"):
        check_append_flags("kg.tsv", True, False, False)
    check_append_flags("kg.tsv", True, True, False)
    check_append_flags("store.duckdb", True, False, False)
    check_append_flags("store.DDB", True, False, True)  # a store by the format registry's suffixes
    with pytest.raises(ConfigError, match="--create"):
        check_append_flags("kg.tsv", False, False, True)


def test_a_missing_store_is_refused_unless_created(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="needs the [store] extra")
    typo = tmp_path / "typo.ddb"  # either suffix of the duckdb format is a persistent store
    with pytest.raises(NotFoundError, match="--create"):
        create_app(kg=str(typo), settings=ServiceSettings(allow_append=True))
    assert not typo.exists()
    app = create_app(kg=str(typo), settings=ServiceSettings(allow_append=True, create_store=True))
    with TestClient(app) as c:
        body = c.post("/api/kg/facts", json={"lines": "A\tr\tB\t2031"}).json()
        assert body == {"added": 1, "facts": 1, "persisted": True, "note": None}
    app.state.tkgqa.kg.close()


def test_another_programs_duckdb_file_is_refused_unchanged(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb", reason="needs the [store] extra")
    path = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (id INTEGER, item VARCHAR)")
    con.execute("INSERT INTO orders VALUES (1, 'tea')")
    con.close()
    before = path.read_bytes()
    with pytest.raises(DataError, match="not a tkgqa DuckDB store"):
        create_app(kg=str(path), settings=ServiceSettings(allow_append=True))
    assert path.read_bytes() == before
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"orders"}


_FIELD = st.text(max_size=12) | st.sampled_from(
    [
        "2015",
        "2015-03-21",
        "",
        "\u200b",
        "\u2028",
        "\x00",
        "\ufeff",
        "e\u0301",
        "None",
        "x" * 250,
        "2015-02-30",
    ]
)


@settings(
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.lists(_FIELD, min_size=0, max_size=6), min_size=1, max_size=5),
       sep=st.sampled_from(["\n", "\r\n", "\u2028", "\n\n"]))  # fmt: skip
def test_fuzz_the_append_endpoint(client: TestClient, rows: list[list[str]], sep: str) -> None:
    lines = sep.join("\t".join(row) for row in rows)
    res = client.post("/api/kg/facts", json={"lines": lines})
    assert res.status_code < 500, res.text
    if res.status_code == 200:
        body: dict[str, Any] = res.json()
        assert body["added"] >= 0 and body["persisted"] is False
    else:
        assert {"error", "type"} <= set(res.json())

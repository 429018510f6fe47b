"""The vectorised reader of plain fact files (:mod:`tkgqa.kg.plain_reader`) builds exactly the KG of the
per-line path (:func:`~tkgqa.kg.builder.parse_delimited`): same names, ids, columns, load report and
warnings, on the demo KG, the shared MultiTQ KG and generated files with bad lines mixed in (where it must
hand the file to the per-line path, which reports the bad lines)."""

from __future__ import annotations

import os
import sys
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.errors import DataError
from tkgqa.kg import plain_reader
from tkgqa.kg.builder import FactBuilder, load_warnings, parse_delimited
from tkgqa.kg.formats import data_lines
from tkgqa.kg.loaders import load_kg
from tkgqa.kg.memory import TemporalKG
from tkgqa.kg.plain_reader import read_plain_delimited

pytest.importorskip("pyarrow", reason="the vectorised reader needs pyarrow (the store extra)")

WIDTHS = {"quadruples": (4,), "tsv": (4, 5), "wikidata": (5,)}
MULTITQ = Path(os.environ.get("TKGQA_SHARED_DATA", "../shared/data")) / "multitq/kg/full_partial.txt"
DEMO = resources.files("tkgqa.data").joinpath("demo_kg.tsv").read_text(encoding="utf-8")
FUZZ = settings(
    max_examples=int(os.environ.get("TKGQA_FUZZ_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],  # any_size: constant
)


def slow(path: Path, fmt: str, strict: bool = False) -> TemporalKG:
    b = FactBuilder(str(path), fmt, strict)
    parse_delimited(b, data_lines(path), WIDTHS[fmt])
    return b.build(path.stem)


@pytest.fixture(autouse=True)
def any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loaders try the vectorised reader on files of any size (not only large ones)."""
    monkeypatch.setattr(plain_reader, "MIN_BYTES", 0)


def fast(path: Path, fmt: str, strict: bool = False) -> tuple[TemporalKG, bool]:
    """The loader's KG (fast path when it takes the file) and whether the fast path took it."""
    taken = read_plain_delimited(FactBuilder(str(path), fmt, strict), path, WIDTHS[fmt], min_bytes=0)
    return load_kg(path, format=fmt, strict=strict, cache=False), taken


def assert_same(a: TemporalKG, b: TemporalKG) -> None:
    ents_a, rels_a, cols_a, _ = a.to_arrays()
    ents_b, rels_b, cols_b, _ = b.to_arrays()
    assert list(ents_a) == list(ents_b)
    assert list(rels_a) == list(rels_b)
    assert sorted(cols_a) == sorted(cols_b)
    for key in cols_a:
        assert np.array_equal(cols_a[key], cols_b[key]), key
    assert a.load_report == b.load_report
    assert load_warnings(a) == load_warnings(b)
    assert dict(a.labels) == dict(b.labels)
    assert list(a) == list(b)


def both(path: Path, fmt: str, strict: bool = False) -> bool:
    """Build ``path`` both ways; assert the same outcome (KG or error message); whether fast took it."""
    try:
        expected: TemporalKG | str = slow(path, fmt, strict)
    except DataError as exc:
        expected = str(exc)
    try:
        got, taken = fast(path, fmt, strict)
    except DataError as exc:
        assert str(exc) == expected
        return False
    assert isinstance(expected, TemporalKG), expected
    assert_same(got, expected)
    return taken


def test_demo_kg_as_shipped_and_without_comments(tmp_path: Path) -> None:
    shipped = tmp_path / "demo.tsv"
    shipped.write_text(DEMO, encoding="utf-8")
    assert not both(shipped, "tsv")  # comment lines: the per-line path reads it
    rows = [x.split("\t") for x in DEMO.splitlines() if x and not x.startswith("#")]
    quintuples = ["\t".join(x) for x in rows if len(x) == 5]
    events = ["\t".join(x[:4]) for x in rows if len(x) == 5 and x[3] and x[3] == x[4]]
    assert len(quintuples) > 100 and len(events) > 20
    for fmt, lines in (
        ("tsv", quintuples),
        ("wikidata", quintuples),
        ("tsv", events),
        ("quadruples", events),
    ):
        plain = tmp_path / f"demo_{fmt}_{len(lines)}.tsv"
        plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert both(plain, fmt)


@pytest.mark.skipif(not MULTITQ.exists(), reason=f"shared MultiTQ KG not found at {MULTITQ}")
def test_multitq_kg() -> None:
    assert both(MULTITQ, "quadruples")


def test_small_files_and_no_pyarrow_go_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "q.txt"
    path.write_text("A\tR\tB\t2014-11-10\n", encoding="utf-8")
    assert read_plain_delimited(FactBuilder(str(path), "quadruples", False), path, (4,), min_bytes=0)
    assert not read_plain_delimited(FactBuilder(str(path), "quadruples", False), path, (4,), min_bytes=100)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert not read_plain_delimited(FactBuilder(str(path), "quadruples", False), path, (4,), min_bytes=0)
    assert len(load_kg(path, format="quadruples", cache=False)) == 1


# --- generated files -----------------------------------------------------------------------------
NAMES = st.sampled_from(["A", "B", "Barack_Obama", "Crimea", "Zo\u00eb", "Zoe\u0308", "\u4e2d\u56fd", "x y"])
DATES = st.sampled_from(["2014-11-10", "2014-11", "2014", "1999-01-31", "2015-03-21", "0001", "2916"])
ENDS = st.sampled_from(["", "2020", "2016-05", "2916", "-", "unknown"])
BAD_LINES = st.sampled_from(
    [
        "",
        "   ",
        "# a comment\tx\ty\tz",
        "A\tR\tB",
        "A\tR\tB\t2014\t2015\t2016",
        "A\tR\t\t2014",
        "\tR\tB\t2014",
        "A\tR\tB\tnot a date",
        "A\tR\tB\t",
        "A\tR\tB\t2015\t2014",
        'A\t"R"\tB\t2014',
        '"A\tR"\tB\t2014',
        "A\u200b\tR\tB\t2014",
        "A\tR\x01\tB\t2014",
        "\ufeffA\tR\tB\t2014",
        "A\tR\tB\t2014-02-30",
        "  \t \t \t ",
    ]
)


@st.composite
def good_line(draw: st.DrawFn, width: int) -> str:
    s, r, o = draw(NAMES), draw(st.sampled_from(["R", "Meet", "Visit", "r\u00e9"])), draw(NAMES)
    if width == 4:
        return f"{s}\t{r}\t{o}\t{draw(DATES.filter(lambda d: d not in ('0001', '2916')))}"
    start, end = draw(st.sampled_from(["2014", "2014-11-10", "", "0001"])), draw(ENDS)
    return f"{s}\t{r}\t{o}\t{start}\t{end}"


@st.composite
def kg_file(draw: st.DrawFn) -> tuple[bytes, str]:
    fmt = draw(st.sampled_from(sorted(WIDTHS)))
    width = draw(st.sampled_from(WIDTHS[fmt]))
    lines = draw(st.lists(good_line(width), min_size=1, max_size=30))
    lines += draw(st.lists(st.sampled_from(lines), max_size=5))  # duplicates
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(BAD_LINES))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    return text.encode("utf-8"), fmt


@FUZZ
@given(case=kg_file(), strict=st.booleans())
def test_generated_files_build_the_same_kg(case: tuple[bytes, str], strict: bool) -> None:
    data, fmt = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kg.txt"
        path.write_bytes(data)
        both(path, fmt, strict)


@FUZZ
@given(lines=st.lists(good_line(4), min_size=1, max_size=40), trailing=st.booleans())
def test_plain_files_take_the_fast_path(lines: list[str], trailing: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kg.txt"
        path.write_text("\n".join(lines) + ("\n" if trailing else ""), encoding="utf-8")
        nfc = all(x == __import__("unicodedata").normalize("NFC", x) for x in lines)
        assert both(path, "quadruples") == nfc  # a name not in NFC goes the per-line way


@FUZZ
@given(
    facts=st.lists(st.tuples(*[st.integers(0, 3)] * 5), max_size=60),
    big=st.sampled_from([0, 1 << 40, -(10**9)]),
)
def test_duplicates_found_are_the_repeats_of_earlier_facts(facts: list[tuple[int, ...]], big: int) -> None:
    """The dedup of :meth:`FactBuilder.build` against a set of the facts seen (``big`` spreads a column so
    that the keys cannot be packed)."""
    from tkgqa.kg.builder import _first_occurrences

    rows = [(s * (big or 1), r, o, t0 + min(big, 0), t1) for s, r, o, t0, t1 in facts]
    seen: set[tuple[int, ...]] = set()
    expected = [not (row in seen or seen.add(row)) for row in rows]  # type: ignore[func-returns-value]
    columns = [np.array([row[i] for row in rows], dtype=np.int64) for i in range(5)]
    keep = _first_occurrences(columns)
    assert (keep.tolist() if keep is not None else [True] * len(rows)) == expected


@FUZZ
@given(
    facts=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 5), st.integers(-3, 3)), max_size=80
    ),
    far=st.sampled_from([0, 10**9, -(10**9)]),
)
def test_core_permutations_are_the_stable_sorts(facts: list[tuple[int, int, int, int]], far: int) -> None:
    """:func:`~tkgqa.kg.index.build_core`'s packed sorts give the permutations of stable argsorts."""
    from tkgqa.kg import index

    cols = {c: np.array([f[i] for f in facts], dtype=np.int64) for i, c in enumerate(("s", "r", "o", "t0"))}
    cols["t0"] = cols["t0"] + np.where(cols["t0"] < 0, far, 0)  # open starts far from the rest
    cols["t1"], cols["g0"], cols["g1"] = cols["t0"] + 1, np.full(len(facts), 3), np.full(len(facts), 3)
    got = index.build_core(cols, 6, 4)
    order = np.argsort(cols["t0"], kind="stable")
    for side in ("s", "o"):
        key = cols[side]
        assert got[f"{side}_ids"].tolist() == order[np.argsort(key[order], kind="stable")].tolist()
        pair = (key << index.R_BITS) | cols["r"]
        assert got[f"{side}r_ids"].tolist() == order[np.argsort(pair[order], kind="stable")].tolist()
    assert got["r_ids"].tolist() == order[np.argsort(cols["r"][order], kind="stable")].tolist()
    assert got["t_ids"].tolist() == order.tolist()

"""The country table is data shipped in the package (``tkgqa/data/countries.txt``) with a small loader."""

from __future__ import annotations

from importlib import resources

import pytest

from tkgqa.errors import DataError
from tkgqa.query.text.countries import COUNTRIES, COUNTRIES_RESOURCE, load_countries, parse_countries


def test_bundled_table_loads() -> None:
    assert resources.files("tkgqa.data").joinpath(COUNTRIES_RESOURCE).is_file()
    assert load_countries() == COUNTRIES
    by_name = {names[0]: demonyms for names, demonyms in COUNTRIES}
    assert "Danish" in by_name["Denmark"]
    assert all(names and all(names) for names, _ in COUNTRIES)
    assert len(by_name) == len(COUNTRIES)  # one line per country


def test_parse_skips_comments_and_blank_lines() -> None:
    text = "# a comment\n\nUnited Kingdom|UK|Britain: British|Briton\nWales: Welsh\nAntarctica\n"
    assert parse_countries(text) == [
        (("United Kingdom", "UK", "Britain"), ("British", "Briton")),
        (("Wales",), ("Welsh",)),
        (("Antarctica",), ()),
    ]


def test_parse_refuses_a_line_without_a_name() -> None:
    with pytest.raises(DataError, match="line 2"):
        parse_countries("Wales: Welsh\n : Nobody\n")

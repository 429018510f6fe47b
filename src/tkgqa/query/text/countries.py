"""Countries and territories: names, common alternative names and demonyms (general knowledge).

The table is data, shipped in the package as ``tkgqa/data/countries.txt``: one line per country,
``name|alternative name|… : demonym|demonym…``. The mention detector matches any of the names against a KG's
entity labels (and against the qualifier of ``Role_(Country)`` entities), and uses the demonyms for
adjectival mentions ("the Danish ministry" → ``…_(Denmark)``).
"""

from __future__ import annotations

from importlib import resources

from ...errors import DataError

COUNTRIES_RESOURCE = "countries.txt"

Country = tuple[tuple[str, ...], tuple[str, ...]]  # (names, demonyms)


def parse_countries(text: str) -> list[Country]:
    """``[(names, demonyms)]`` from the table's text (``#`` lines and blank lines skipped)."""
    rows: list[Country] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        names_part, _, dem_part = line.partition(": ")
        names = tuple(n.strip() for n in names_part.split("|") if n.strip())
        if not names:
            raise DataError(f"{COUNTRIES_RESOURCE} line {number}: no country name before ': ' in {line!r}")
        demonyms = tuple(d.strip() for d in dem_part.split("|") if d.strip())
        rows.append((names, demonyms))
    return rows


def load_countries() -> list[Country]:
    """The bundled table (``tkgqa/data/countries.txt``)."""
    text = resources.files("tkgqa.data").joinpath(COUNTRIES_RESOURCE).read_text(encoding="utf-8")
    return parse_countries(text)


COUNTRIES: list[Country] = load_countries()
"""``[(names, demonyms)]``: the first name is the common English name."""

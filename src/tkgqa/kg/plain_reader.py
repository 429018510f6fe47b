r"""A vectorised reader for plain tab-separated fact files (``s\tr\to\tT`` or ``s\tr\to\tstart\tend``): the
fast path of the ``quadruples``, ``tsv`` and ``wikidata`` loaders, giving exactly the KG of the per-line
path (:func:`~tkgqa.kg.builder.parse_delimited`): same facts, same entity and relation ids (first
appearance, subject before object on a line), same times, same duplicates dropped.

It takes a file only when it can prove that every line is a plain, valid fact, and otherwise returns
``False`` without touching the builder, so the caller reads the whole file the per-line way (which then
reports the bad lines with their wording and line numbers). "Plain": the file has at least
:data:`MIN_BYTES` (smaller ones gain nothing), pyarrow is installed (the ``store``
extra); the bytes are UTF-8 without a byte-order mark, ``\r``, blank or ``#`` comment lines; every line has
the same number of tab-separated columns, one the format allows; every distinct name passes
:func:`~tkgqa.kg.validate.name_problem` and is already in NFC form; every distinct time text parses the way
:meth:`~tkgqa.kg.builder.FactBuilder.bound` parses it (it is parsed by that very method, once per distinct
text), a point event has a date and no fact starts after it ends. The columns are split by ``pyarrow.csv``
(quoting off) and factorised with ``dictionary_encode`` (first-appearance order), then remapped to the
per-line path's id order with numpy.
"""

from __future__ import annotations

import unicodedata
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import DataError
from ..time import NEG_INF, POS_INF
from .builder import FactBuilder
from .formats import check_file
from .validate import name_problem

#: Files smaller than this are read line by line: as fast there (MultiTQ's 15 MB: 0.6 s either way), and no
#: pyarrow import (~130 MiB resident) for a small KG.
MIN_BYTES = 32 << 20
_BOM = b"\xef\xbb\xbf"
_BLOCK_BYTES = 1 << 24

I64 = npt.NDArray[np.int64]


def read_plain_delimited(
    b: FactBuilder, path: Path, widths: tuple[int, ...], min_bytes: int | None = None
) -> bool:
    """Fill the empty builder ``b`` from the plain file ``path`` of ``widths`` columns and return ``True``;
    ``False`` (``b`` untouched but for its memo of parsed times) when the file is not plain (module
    docstring), pyarrow is missing, or the file is under ``min_bytes`` (default :data:`MIN_BYTES`)."""
    check_file(path)  # the per-line path's own check (no read of a FIFO or a folder)
    try:
        if path.stat().st_size < (MIN_BYTES if min_bytes is None else min_bytes):
            return False
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except (ImportError, OSError):
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False  # the per-line path reports it
    if not _plain_bytes(data):
        return False
    width = data[: data.find(b"\n")].count(b"\t") + 1 if b"\n" in data else data.count(b"\t") + 1
    if width not in widths or width not in (4, 5):
        return False
    names = [f"c{i}" for i in range(width)]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_BYTES, use_threads=True),
            parse_options=pacsv.ParseOptions(
                delimiter="\t",
                quote_char=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, "string"), strings_can_be_null=False, null_values=[]
            ),
        )
    except Exception:  # wrong column count on some line, invalid UTF-8, a line too long...: not plain
        return False
    del data
    try:
        encoded = _encode(b, table, width)
    except (pa.ArrowException, OverflowError, MemoryError):  # e.g. a column over 2 GiB: not plain
        return False
    if encoded is None:
        return False
    ent, rel, columns = encoded
    b.ent = {name: i for i, name in enumerate(ent)}
    b.rel = {name: i for i, name in enumerate(rel)}
    b.encoded = columns
    b.n_lines = table.num_rows
    return True


def _plain_bytes(data: bytes) -> bool:
    """No byte-order mark, ``\r``, blank line or ``#`` comment line (each one the per-line path treats)."""
    if not data or data.startswith((_BOM, b"#", b"\n")):
        return False
    return b"\r" not in data and b"\n\n" not in data and b"\n#" not in data


def _codes(column: Any) -> tuple[list[str], I64]:
    """The distinct values of a string column in first-appearance order, and each row's index into them."""
    import pyarrow.compute as pc

    chunks = pc.dictionary_encode(column).chunks
    dictionary = chunks[-1].dictionary if chunks else None
    if dictionary is None or not all(c.dictionary.equals(dictionary) for c in chunks):
        # (pyarrow gives every chunk the whole dictionary; should it not, encode one combined chunk)
        whole = pc.dictionary_encode(column.combine_chunks())
        dictionary, chunks = whole.dictionary, [whole]
    values: list[str] = dictionary.to_pylist()
    indices = [c.indices.to_numpy(zero_copy_only=False) for c in chunks]
    return values, np.concatenate(indices).astype(np.int64, copy=False)


def _first_rows(codes: I64, n_values: int) -> I64:
    """The row where each value first appears (``codes`` number values in first-appearance order)."""
    seen = np.maximum.accumulate(codes)
    new = np.empty(len(codes), dtype=bool)
    new[:1] = True
    np.greater(codes[1:], seen[:-1], out=new[1:])  # a code above every earlier one is a first appearance
    first = np.flatnonzero(new)
    assert len(first) == n_values
    return first


def _names_ok(names: list[str]) -> bool:
    """Every name passes the rule and is in NFC already (so the per-line path interns it unchanged)."""
    return all(
        name_problem(n) is None and (n.isascii() or unicodedata.is_normalized("NFC", n)) for n in names
    )


def _entity_ids(s: tuple[list[str], I64], o: tuple[list[str], I64]) -> tuple[list[str], I64, I64]:
    """Entity names in the per-line path's order (first appearance, a line's subject before its object)
    and the subject and object columns as ids into them."""
    (s_names, s_codes), (o_names, o_codes) = s, o
    index: dict[str, int] = {}
    for name in s_names:
        index.setdefault(name, len(index))
    for name in o_names:
        index.setdefault(name, len(index))
    s_u = np.fromiter((index[n] for n in s_names), np.int64, len(s_names))
    o_u = np.fromiter((index[n] for n in o_names), np.int64, len(o_names))
    first = np.full(len(index), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, s_u, 2 * _first_rows(s_codes, len(s_names)))
    np.minimum.at(first, o_u, 2 * _first_rows(o_codes, len(o_names)) + 1)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    names = list(index)
    return [names[i] for i in order], rank[s_u][s_codes], rank[o_u][o_codes]


def _bounds(b: FactBuilder, texts: list[str]) -> tuple[list[int], list[int], list[int], list[bool]] | None:
    """First day, last day, granularity and "open" of each time text (:meth:`FactBuilder.bound`);
    ``None`` when one does not parse."""
    first, last, gran, open_ = [], [], [], []
    for text in texts:
        try:
            found = b.bound(text)
        except (DataError, ValueError, TypeError, OverflowError):
            return None
        first.append(found[0] if found else NEG_INF)
        last.append(found[1] if found else POS_INF)
        gran.append(found[2] if found else 0)
        open_.append(found is None)
    return first, last, gran, open_


def _encode(b: FactBuilder, table: Any, width: int) -> tuple[list[str], list[str], dict[str, I64]] | None:
    """Entity names, relation names and the seven encoded columns, or ``None`` when a name or time is not
    one the per-line path would take unchanged."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="tkgqa-read") as pool:  # Arrow frees the GIL
        codes = list(pool.map(lambda i: _codes(table.column(i)), range(width)))
    s, r, o, t_start = codes[:4]
    if not (_names_ok(s[0]) and _names_ok(r[0]) and _names_ok(o[0])):
        return None
    ent, s_ids, o_ids = _entity_ids(s, o)
    b0 = _bounds(b, t_start[0])
    if b0 is None:
        return None
    first0, last0, gran0, open0 = (np.asarray(v) for v in b0)
    if width == 4:  # a point event: end = start, and it needs a date
        if open0.any():
            return None
        t0 = first0[t_start[1]]
        t1 = last0[t_start[1]]
        g0 = g1 = gran0[t_start[1]]
    else:
        t_end = codes[4]
        b1 = _bounds(b, t_end[0])
        if b1 is None:
            return None
        _, last1, gran1, _ = (np.asarray(v) for v in b1)
        t0, g0 = first0[t_start[1]], gran0[t_start[1]]
        t1, g1 = last1[t_end[1]], gran1[t_end[1]]
    if bool((t0 > t1).any()):
        return None
    columns = {"s": s_ids, "r": r[1], "o": o_ids, "t0": t0, "t1": t1, "g0": g0, "g1": g1}
    return ent, r[0], {k: np.ascontiguousarray(v, dtype=np.int64) for k, v in columns.items()}

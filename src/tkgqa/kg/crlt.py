r"""The CR-LT-KGQA files as a KG format (``format="crlt"``): their ``KG Triples`` strings become facts.

The dataset (R3's question-answering and claim-verification sets) stores each entry's gold triples as one
string of numbered items: ``1- (Horsens, population, 59,449), 2- (Ikast, population, 15,979)``, with
qualifiers in braces (``(…, candidate, Barack Obama {votes received, 69498516})``, ``{start time: 1936, end
time: 1945}``, ``{represents People Power Party}``) or, in a few items, in parentheses (``president of
Pakistan(start time, 20 December 1971)``). :func:`parse_kg_triples` reads one such string:

* **items** are split on their ``N-`` markers and balanced parentheses; an item missing its closing
  parenthesis is closed at the next ``N-`` marker or at the end (a *repair*, reported), an unnumbered item is
  kept (reported); text outside any item and items without three parts are *errors* (reported, skipped).
* **parts**: head, relation, tail split on commas — a comma between digits (``59,449``) is a thousands
  separator, Wikidata labels that contain commas (``dissolved, abolished or demolished date``) are known
  (:data:`COMMA_RELATIONS`), and everything after the relation is the tail (``…, description, association
  football club in Milan, Italy``).
* **times**: ``start time`` / ``end time`` / ``point in time`` qualifiers give the fact its interval (one fact
  per spell when an item lists several: ``Prime Minister of Nepal`` four times); a date tail (``22 June
  1984``, ``July 1944``, ``12. century``; a bare number only under a time-valued relation such as ``date of
  birth`` or ``inception``) becomes a *typed literal*: the object is named by its ISO form (``1984-06-22``,
  labelled ``22 June 1984``) and the fact is a point event at that time, so the time algebra
  (:func:`tkgqa.time.holds`, the KG operators) applies to it. ``12. century`` spans 1101–1200.
* **other qualifiers** are kept in the relation name: ``candidate {votes received: 69498516}``
  (:func:`split_relation` recovers the base relation and the qualifiers). Subjects and objects stay plain
  entity names, so neighbourhoods and linking work on them.

Problems are reported with the entry id (``S7 item 1: missing ')' …``); the loader puts them in
``kg.load_report.first_errors``. The KG of a file is the union of its entries' triples — an *oracle
subgraph* setting (there is no Wikidata offline), easier than R3's live neighbourhoods.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, NotFoundError
from ..jsonfile import read_json
from ..time import MONTH_NAMES, MONTHS, NEG_INF, POS_INF, TimePoint
from .builder import STRICT_HINT, FactBuilder, LoadReport
from .fact import Fact
from .formats import read_labels
from .memory import TemporalKG

#: Wikidata property labels that contain a comma (lower case), longest first.
COMMA_RELATIONS: tuple[str, ...] = (
    "dissolved, abolished or demolished date",
    "languages spoken, written or signed",
    "has seal, badge, or sigil",
    "dissolved, abolished or demolished",
)
#: Qualifier keys recognised without a separator (``{represents People Power Party}``) and in parentheses.
QUALIFIER_KEYS: tuple[str, ...] = (
    "start time", "end time", "point in time", "votes received", "represents", "replaces", "replaced by",
    "of", "series ordinal", "applies to part", "electoral district", "parliamentary group", "elected in",
    "parliamentary term", "member of political party", "subject has role", "object has role",
    "statement is subject of",
)  # fmt: skip
TIME_QUALIFIERS = frozenset({"start time", "end time", "point in time"})
#: A relation whose bare-number tail is a year (``(Azadegan League, inception, 1991)``).
_TIME_RELATION = re.compile(
    r"\b(date|time|inception|dissolved|abolished|demolished|work period|founded|birth|death|year|century)\b",
    re.IGNORECASE,
)
_MONTH = "(" + "|".join(name.lower() for name in MONTH_NAMES) + ")"  # full month names
_DMY = re.compile(rf"^(\d{{1,2}})\s+{_MONTH}\s+(-?\d{{3,4}})$", re.IGNORECASE)
_MDY = re.compile(rf"^{_MONTH}\s+(\d{{1,2}}),?\s+(-?\d{{3,4}})$", re.IGNORECASE)
_MY = re.compile(rf"^{_MONTH},?\s+(-?\d{{3,4}})$", re.IGNORECASE)
_ISO = re.compile(r"^(-?\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?$")
_YEAR = re.compile(r"^-?\d{1,4}$")
_CENTURY = re.compile(r"^(\d{1,2})(?:\.|st|nd|rd|th)?\s+century$", re.IGNORECASE)
_MARKER = re.compile(r"(\d+)\s*-\s*(?=\()")
_INNER_MARKER = re.compile(r",\s*\d+\s*-\s*\(")
_SPLIT = re.compile(r"(?<!\d),|,(?!\d)")  # a comma not between two digits
_PAREN_QUALIFIER = re.compile(
    r"\(\s*(" + "|".join(re.escape(k) for k in sorted(QUALIFIER_KEYS, key=len, reverse=True)) + r")\s*[,:]"
    r"\s*([^()]*)\)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")


# --- literals -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TimeLiteral:
    """A date written in a tail or qualifier: its span (``start``..``end``) and its ISO-ish name."""

    text: str
    start: TimePoint
    end: TimePoint

    @property
    def name(self) -> str:
        """The literal's entity name: the ISO form of a point, the text of a span (``12. century``)."""
        return self.start.iso() if self.start == self.end else self.text


def parse_time_literal(text: str, *, year_ok: bool = True) -> TimeLiteral | None:
    """``text`` as a date (``22 June 1984``, ``June 22, 1984``, ``July 1944``, ``1923/06/25``, ``12.
    century``; a bare number only when ``year_ok``), else ``None``."""
    s = _SPACES.sub(" ", text.strip())
    try:
        if m := _DMY.match(s):
            p = TimePoint(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
        elif m := _MDY.match(s):
            p = TimePoint(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)))
        elif m := _MY.match(s):
            p = TimePoint(int(m.group(2)), MONTHS[m.group(1).lower()])
        elif (m := _ISO.match(s)) and (m.group(2) or year_ok):
            month, day = m.group(2), m.group(3)
            p = TimePoint(int(m.group(1)), int(month) if month else None, int(day) if day else None)
        elif year_ok and _YEAR.match(s):
            p = TimePoint(int(s))
        elif m := _CENTURY.match(s):
            n = int(m.group(1))
            if n < 1:
                return None
            return TimeLiteral(s, TimePoint(100 * (n - 1) + 1), TimePoint(100 * n))
        else:
            return None
    except DataError:  # day or month out of range: not a date
        return None
    return TimeLiteral(s, p, p)


# --- parsed items -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Qualifier:
    key: str
    value: str

    def __str__(self) -> str:
        return f"{self.key}: {self.value}"


@dataclass(frozen=True, slots=True)
class TripleProblem:
    """Something wrong in an entry's ``KG Triples``; ``repaired`` when the item was still read."""

    entry_id: str
    item: int | None
    message: str
    raw: str = ""
    repaired: bool = True

    def __str__(self) -> str:
        where = f"{self.entry_id} item {self.item}" if self.item is not None else self.entry_id
        shown = self.raw if len(self.raw) <= 80 else self.raw[:77] + "…"
        return f"{where}: {self.message}" + (f" in {shown!r}" if shown else "")


@dataclass(frozen=True)
class TripleItem:
    """One ``(head, relation, tail {qualifiers})`` item and the facts it becomes."""

    number: int | None
    head: str
    relation: str
    tail: str
    qualifiers: tuple[Qualifier, ...] = ()
    raw: str = ""

    @property
    def extra_qualifiers(self) -> tuple[Qualifier, ...]:
        """The qualifiers that are not times (kept in the relation name)."""
        return tuple(q for q in self.qualifiers if q.key.lower() not in TIME_QUALIFIERS)

    @property
    def relation_name(self) -> str:
        """The relation with the non-time qualifiers: ``candidate {votes received: 69498516}``."""
        extra = self.extra_qualifiers
        return self.relation + (" {" + "; ".join(map(str, extra)) + "}" if extra else "")

    def tail_literal(self) -> TimeLiteral | None:
        return parse_time_literal(self.tail, year_ok=bool(_TIME_RELATION.search(self.relation)))

    def spells(self) -> list[tuple[TimePoint | None, TimePoint | None]]:
        """The fact intervals: from the time qualifiers (one per spell), else the date tail, else none."""
        spells: list[tuple[TimePoint | None, TimePoint | None]] = []
        start: TimePoint | None = None
        open_spell = False
        for q in self.qualifiers:
            key = q.key.lower()
            if key not in TIME_QUALIFIERS:
                continue
            lit = parse_time_literal(q.value)
            if lit is None:
                continue
            if key == "point in time":
                spells.append((lit.start, lit.end))
            elif key == "start time":
                if open_spell:
                    spells.append((start, None))
                start, open_spell = lit.start, True
            else:  # end time
                spells.append((start if open_spell else None, lit.end))
                start, open_spell = None, False
        if open_spell:
            spells.append((start, None))
        if spells:
            return spells
        lit = self.tail_literal()
        return [(lit.start, lit.end)] if lit is not None else [(None, None)]

    def facts(self) -> list[Fact]:
        lit = self.tail_literal()
        obj = lit.name if lit is not None else self.tail
        return [Fact(self.head, self.relation_name, obj, s, e) for s, e in self.spells()]

    def labels(self) -> dict[str, str]:
        """Display labels of literal names (``1984-06-22`` → ``22 June 1984``)."""
        lit = self.tail_literal()
        return {lit.name: lit.text} if lit is not None and lit.name != lit.text else {}

    def __str__(self) -> str:
        extra = "".join(f" {{{q}}}" for q in self.qualifiers)
        return f"({self.head}, {self.relation}, {self.tail}{extra})"


@dataclass(frozen=True)
class EntryTriples:
    """The parsed ``KG Triples`` of one entry."""

    entry_id: str
    items: tuple[TripleItem, ...]
    problems: tuple[TripleProblem, ...] = field(default=())

    def facts(self) -> list[Fact]:
        return [f for item in self.items for f in item.facts()]


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _split_items(text: str, entry_id: str) -> tuple[list[tuple[int | None, str]], list[TripleProblem]]:
    """``(number, inner text)`` of each parenthesised item; problems for repairs and stray text."""
    items: list[tuple[int | None, str]] = []
    problems: list[TripleProblem] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch in ",;":
            i += 1
            continue
        number: int | None = None
        m = _MARKER.match(text, i)
        if m:
            number = int(m.group(1))
            i = m.end()
        elif ch != "(":
            nxt = text.find("(", i)
            end = n if nxt < 0 else nxt
            stray = text[i:end].strip()
            if stray:
                problems.append(TripleProblem(entry_id, None, "text outside any item", stray, repaired=False))
            i = end
            continue
        depth, braces, j = 1, 0, i + 1
        closed = False
        while j < n:
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    closed = True
                    break
            elif c == "{":
                braces += 1
            elif c == "}":
                braces = max(0, braces - 1)
            elif c == "," and depth == 1 and braces == 0 and _INNER_MARKER.match(text, j):
                break
            j += 1
        body = text[i + 1 : j]
        label = number if number is not None else len(items) + 1
        if not closed:
            where = "at the next numbered item" if j < n else "at the end"
            problems.append(TripleProblem(entry_id, label, f"missing ')' (closed {where})", _clean(body)))
        if number is None:
            problems.append(TripleProblem(entry_id, label, "item without a number (read in order)", ""))
        items.append((number, body))
        i = j + 1 if closed else j
    return items, problems


def _qualifiers(group: str) -> list[Qualifier] | None:
    """``key, value`` / ``key: value, key: value`` / ``key value`` (a known key) → qualifiers."""
    s = _clean(group)
    if not s:
        return []
    if re.search(r"^[^,:]+:", s):
        out = []
        for part in re.split(r",\s*(?=[^,:]+:)", s):
            key, _, value = part.partition(":")
            out.append(Qualifier(_clean(key), _clean(value).rstrip(",")))
        return out
    if "," in s:
        key, _, value = s.partition(",")
        return [Qualifier(_clean(key), _clean(value))]
    low = s.lower()
    for key in sorted(QUALIFIER_KEYS, key=len, reverse=True):
        if low.startswith(key + " "):
            return [Qualifier(key, _clean(s[len(key) :]))]
    return None


def _parse_item(
    number: int | None, body: str, entry_id: str, problems: list[TripleProblem]
) -> TripleItem | None:
    label = number
    qualifiers: list[Qualifier] = []
    rest_parts: list[str] = []
    depth, start = 0, 0
    for k, c in enumerate(body):  # brace groups at any position
        if c == "{":
            if depth == 0:
                rest_parts.append(body[start:k])
                start = k + 1
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found = _qualifiers(body[start:k])
                if found is None:
                    problems.append(TripleProblem(entry_id, label, "qualifier without a key", body[start:k]))
                    found = [Qualifier("qualifier", _clean(body[start:k]))]
                qualifiers.extend(found)
                start = k + 1
    if depth:
        problems.append(TripleProblem(entry_id, label, "unclosed '{'", _clean(body[start:])))
        found = _qualifiers(body[start:]) or [Qualifier("qualifier", _clean(body[start:]))]
        qualifiers.extend(found)
    else:
        rest_parts.append(body[start:])
    rest = " ".join(rest_parts)

    def paren(m: re.Match[str]) -> str:
        qualifiers.append(Qualifier(m.group(1).lower(), _clean(m.group(2))))
        return " "

    rest = _PAREN_QUALIFIER.sub(paren, rest)
    if re.search(r"[\[\]]", rest):
        problems.append(TripleProblem(entry_id, label, "stray bracket removed", _clean(body)))
        rest = re.sub(r"[\[\]]", " ", rest)
    parts = [_clean(p) for p in _SPLIT.split(rest)]
    while parts and not parts[-1]:
        parts.pop()
    if len(parts) < 3 or not parts[0] or not parts[1] or not all(parts[2:]):
        problems.append(
            TripleProblem(
                entry_id, label, "not a (head, relation, tail) triple", _clean(body), repaired=False
            )
        )
        return None
    head, tail_parts = parts[0], parts[1:]
    relation = tail_parts[0]
    for known in COMMA_RELATIONS:
        width = known.count(",") + 1
        if ", ".join(tail_parts[:width]).lower() == known and len(tail_parts) > width:
            relation, tail_parts = ", ".join(tail_parts[:width]), tail_parts[width - 1 :]
            break
    tail = ", ".join(tail_parts[1:])
    if len(relation) > 1 and relation[0].isupper() and relation[1].islower():
        relation = relation[0].lower() + relation[1:]  # "Date of death" → "date of death"
    return TripleItem(number, head, relation, tail, tuple(qualifiers), _clean(body))


def parse_kg_triples(text: str, entry_id: str = "?") -> EntryTriples:
    """Parse one entry's ``KG Triples`` string (see the module docstring); never raises on bad items."""
    raw_items, problems = _split_items(text or "", entry_id)
    items: list[TripleItem] = []
    for number, body in raw_items:
        item = _parse_item(number if number is not None else len(items) + 1, body, entry_id, problems)
        if item is not None:
            items.append(item)
    return EntryTriples(entry_id, tuple(items), tuple(problems))


def split_relation(name: str) -> tuple[str, tuple[Qualifier, ...]]:
    """``candidate {votes received: 69498516}`` → ``("candidate", (Qualifier(...),))``."""
    m = re.match(r"^(.*?)\s*\{(.*)\}$", name)
    if not m:
        return name, ()
    found = _qualifiers(m.group(2).replace(";", ","))
    return m.group(1), tuple(found or ())


# --- the file ---------------------------------------------------------------------------------------
def read_entries(path: str | Path) -> list[dict[str, Any]]:
    """The JSON list of a CR-LT-KGQA file; DataError naming the file (and line) when it is not one."""
    p = Path(path)
    try:
        data = read_json(p)
    except FileNotFoundError:
        raise NotFoundError(f"CR-LT-KGQA file {str(p)!r} does not exist") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise DataError(
            "expected a JSON list of entries (objects with 'id', 'query', 'KG Triples')", path=str(p)
        )
    for i, entry in enumerate(data):
        if "KG Triples" not in entry:
            raise DataError(f"entry #{i} ({entry.get('id', '?')}) has no 'KG Triples' field", path=str(p))
    return data


def parse_entries(entries: Iterable[Mapping[str, Any]]) -> list[EntryTriples]:
    return [
        parse_kg_triples(str(e.get("KG Triples") or ""), str(e.get("id", f"#{i}")))
        for i, e in enumerate(entries)
    ]


def is_crlt(head: Sequence[str]) -> bool:
    """Detection from the first data lines: a JSON list whose entries carry ``"KG Triples"``."""
    text = "\n".join(head)
    return text.lstrip().startswith("[") and any(
        k in text for k in ('"KG Triples"', '"KG Entities"', '"Inference Rule"')
    )


def load_crlt(
    path: str | Path, *, strict: bool = False, name: str | None = None, labels: Any = None
) -> TemporalKG:
    """The union of a CR-LT-KGQA file's ``KG Triples`` as a ``TemporalKG`` (format ``crlt``).

    Repairs (an item missing its ``)``) are reported in ``kg.load_report.first_errors`` and the item kept;
    an item that is not a triple is skipped and counted, the entry named in the report (the default), or
    raises :class:`DataError` naming the entry (``strict``, the CLI's ``--strict``)."""
    p = Path(path)
    b = FactBuilder(str(p), "crlt", strict)
    skipped: list[str] = []
    repaired: list[str] = []
    for entry in parse_entries(read_entries(p)):
        for problem in entry.problems:
            if not problem.repaired:
                if strict:
                    raise DataError(f"{problem} ({STRICT_HINT})", path=str(p))
                b.n_skipped += 1
            (repaired if problem.repaired else skipped).append(str(problem))
        for item in entry.items:
            b.n_lines += 1
            b.labels.update(item.labels())
            for fact in item.facts():
                b.append(fact.subject, fact.relation, fact.object, *_encode(fact.start, fact.end))
    kg = b.build(name or p.stem, read_labels(labels), skipped=skipped)
    report = kg.load_report
    assert report is not None
    kg.load_report = LoadReport(
        report.path,
        "crlt",
        report.n_lines,
        report.n_facts,
        b.n_skipped,
        report.n_duplicates,
        (*skipped, *b.errors, *repaired),
    )
    return kg


def _encode(start: TimePoint | None, end: TimePoint | None) -> tuple[int, int, int, int]:
    t0, g0 = (start.first_day, int(start.granularity)) if start is not None else (NEG_INF, 0)
    t1, g1 = (end.last_day, int(end.granularity)) if end is not None else (POS_INF, 0)
    return t0, t1, g0, g1

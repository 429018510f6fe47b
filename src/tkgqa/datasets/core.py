"""``Dataset``, the dataset loader registry and the helpers every loader shares.

``load_dataset(name, data_dir, questions=None, split="test", **options)`` finds a dataset's question file (and
KG) in ``data_dir`` — laid out as the official releases ship them — or reads the question file given as
``questions`` (any subset of a dataset's questions in the same format works). Options shared by the loaders:
``kg=`` (a KG file overriding the one found in ``data_dir``) and ``context=`` (``"retrieved"``: per-question
facts shipped with the data become ``Question.context``; ``"kg"``: none; ``None``: ``"retrieved"`` when no KG
file is found but retrieved facts are).
"""

from __future__ import annotations

import functools
import inspect
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from ..errors import ConfigError, DataError, NotFoundError
from ..jsonfile import read_json
from ..registry import Registry
from ..userfiles import PathLike, parse_json
from .base import Question

CONTEXT_MODES = ("retrieved", "kg")


@dataclass(frozen=True)
class Dataset:
    """Questions of one benchmark (or user file), the KG file they are asked over and what the loader saw.

    ``warnings``: optional inputs the loader did not find although they change results (a label file, the
    retrieved facts of some questions…), one sentence each saying what is missing, what it changes and how
    to provide it; ``tkgqa eval`` prints them, records them in ``report.json`` and fails on them with
    ``--strict``. ``notices``: facts about the data that change how its numbers read but are not missing
    inputs (e.g. a partial KG); printed on stderr and at the top of ``report.md``, never an error."""

    name: str
    questions: list[Question]
    kg_path: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        counts = Counter(q.qid for q in self.questions)
        dupes = [qid for qid, n in counts.items() if n > 1]
        if dupes:
            raise DataError(f"dataset {self.name!r} has duplicate question ids: {dupes[:5]}")

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    @property
    def has_context(self) -> bool:
        """True when the questions carry per-question facts (answer over those, not a shared KG)."""
        return any(q.context is not None for q in self.questions)

    def with_questions(self, questions: Sequence[Question], **meta: Any) -> Dataset:
        """The same dataset restricted to ``questions`` (meta updated with ``meta``)."""
        return replace(self, questions=list(questions), meta={**self.meta, **meta})

    def summary(self) -> dict[str, Any]:
        """Counts per qtype / answer type / type label (for reports and the CLI)."""
        return {
            "name": self.name,
            "n": len(self.questions),
            "kg_path": str(self.kg_path) if self.kg_path else None,
            "qtype": dict(Counter(q.qtype or "?" for q in self.questions)),
            "answer_type": dict(Counter(q.answer_type or "?" for q in self.questions)),
            "types": dict(Counter(t for q in self.questions for t in q.types)),
            "with_context": sum(q.context is not None for q in self.questions),
            "warnings": list(self.warnings),
            "notices": list(self.notices),
        }


DatasetLoader = Callable[..., Dataset]
DATASETS: Registry[Dataset] = Registry("dataset")


#: The split a benchmark's results are reported on: nothing a method learns from (a memory, a retriever) may
#: come from it.
TEST_SPLIT = "test"


def refuse_test_split(split: str | None, what: str) -> None:
    """ConfigError when ``split`` is the test split: ``what`` (e.g. "build a memory") would leak it into the
    evaluation. ``None``: the data comes from no split (generated from the KG, or a file)."""
    if split is not None and split.strip().lower() == TEST_SPLIT:
        raise ConfigError(f"refusing to {what} from the test split: it would leak into the evaluation")


def load_dataset(
    name: str,
    data_dir: PathLike | None = None,
    questions: PathLike | None = None,
    split: str = "test",
    **options: Any,
) -> Dataset:
    """Load dataset ``name`` (``multitq``, ``timequestions``, ``cronquestions``, ``clqa``, ``jsonl``,
    ``demo``, or a plugin's; ``DATASETS.names()`` lists them).

    ``data_dir`` is the dataset folder as released (or, for ``jsonl``/``clqa``, the question file itself);
    without it (and without ``questions``) a catalogued dataset is read from its folder under the data root
    (``$TKGQA_DATA/<folder>``, default ``$TKGQA_HOME/data/<folder>``, filled by ``tkgqa data fetch NAME``;
    NotFoundError naming that command when absent). ``questions`` overrides the question file found there;
    ``options`` go to the loader (``kg=``, ``context=``, and loader-specific ones documented on each
    loader). The bundled ``demo`` needs neither."""
    if data_dir is None and questions is None and name.strip().lower() != "demo":
        from .sources.catalogue import dataset_folder

        DATASETS.factory(name)  # an unknown name: the registry's error, with near matches
        data_dir = dataset_folder(name)
        if data_dir is None:
            raise ConfigError(
                f"load_dataset({name!r}): pass data_dir (the dataset folder) or questions (a file)"
            )
    return DATASETS.resolve(name, data_dir=data_dir, questions=questions, split=split, **options)


# --- shared helpers for the loaders ------------------------------------------------------------------
def as_path(value: PathLike | None) -> Path | None:
    return None if value is None else Path(value).expanduser()


def check_context(context: str | None) -> str | None:
    if context is not None and context not in CONTEXT_MODES:
        raise ConfigError(f"unknown context mode {context!r}; use one of {CONTEXT_MODES} (or None for auto)")
    return context


def reject_options(dataset: str, options: dict[str, Any]) -> None:
    if options:
        raise ConfigError(f"dataset {dataset!r} does not take option(s) {sorted(options)}")


@dataclass(frozen=True)
class DatasetRequest:
    """What every loader is asked for (see :func:`load_dataset`): ``data_dir`` as passed (``root`` is it as a
    path), the ``questions`` file overriding the one found there, the ``split``, the ``kg`` file overriding
    the dataset's and the ``context`` mode (unchecked: a loader that uses it calls :func:`check_context`)."""

    data_dir: PathLike | None = None
    questions: PathLike | None = None
    split: str = "test"
    kg: PathLike | None = None
    context: str | None = None

    @property
    def root(self) -> Path | None:
        """``data_dir`` as a path (``~`` expanded), ``None`` when not given."""
        return as_path(self.data_dir)


RequestLoader = Callable[..., Dataset]


def dataset_loader(name: str, *, register: bool = True) -> Callable[[RequestLoader], DatasetLoader]:
    """Decorator turning ``def load_x(request: DatasetRequest, *, option=default…) -> Dataset`` into the
    loader :func:`load_dataset` calls, ``load_x(data_dir=None, questions=None, split="test", *, kg=None,
    context=None, **options)``, registered in :data:`DATASETS` as ``name`` (unless ``register=False``). The
    keyword-only parameters after ``request`` are the loader's own options; any other option is a
    :class:`ConfigError` naming the dataset. The docstring is the loader's (listings show it)."""

    def wrap(fn: RequestLoader) -> DatasetLoader:
        own = {
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }

        def load(
            data_dir: PathLike | None = None,
            questions: PathLike | None = None,
            split: str = "test",
            *,
            kg: PathLike | None = None,
            context: str | None = None,
            **options: Any,
        ) -> Dataset:
            reject_options(name, {k: v for k, v in options.items() if k not in own})
            return fn(DatasetRequest(data_dir, questions, split, kg, context), **options)

        functools.update_wrapper(load, fn)
        vars(load).pop("__wrapped__", None)  # inspect.signature shows the public signature, not the request's
        if register:
            DATASETS.add(name, load)
        return load

    return wrap


def find_file(what: str, data_dir: Path | None, explicit: PathLike | None, candidates: Sequence[str]) -> Path:
    """``explicit`` if given (must exist), else the first of ``candidates`` (relative to ``data_dir``,
    globs allowed) that exists; a file ``data_dir`` is itself the answer. NotFoundError lists the tries."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise NotFoundError(f"{what} file {str(path)!r} does not exist")
        return path
    if data_dir is None:
        raise ConfigError(f"no {what} file: pass the dataset folder or the file itself")
    if data_dir.is_file():
        return data_dir
    if not data_dir.is_dir():
        raise NotFoundError(f"dataset folder {str(data_dir)!r} does not exist")
    for pattern in candidates:
        if any(ch in pattern for ch in "*?["):
            matches = sorted(p for p in data_dir.glob(pattern) if p.is_file())
            if matches:
                return matches[0]
        elif (data_dir / pattern).is_file():
            return data_dir / pattern
    raise NotFoundError(
        f"no {what} file in {str(data_dir)!r} (looked for {', '.join(candidates)}); pass it explicitly"
    )


def find_optional(data_dir: Path | None, candidates: Sequence[str]) -> Path | None:
    """The first existing file among ``candidates`` under ``data_dir`` (a folder), or ``None``."""
    if data_dir is None or not data_dir.is_dir():
        return None
    for rel in candidates:
        if (data_dir / rel).is_file():
            return (data_dir / rel).resolve()
    return None


def resolve_kg(kg: PathLike | None, data_dir: Path | None, candidates: Sequence[str]) -> Path | None:
    """The KG file: ``kg`` if given (must exist), else the first candidate found in ``data_dir``."""
    if kg is not None:
        path = Path(kg).expanduser()
        if not path.exists():
            raise NotFoundError(f"KG file {str(path)!r} does not exist")
        return path
    return find_optional(data_dir, candidates)


RowParser = TypeVar("RowParser", bound=Callable[..., Question])


def row_parser(fn: RowParser) -> RowParser:
    """Wrap a ``(row, path, i, ...) → Question`` converter of a benchmark record: a field of the wrong type
    (a list where a string belongs, an object where a list belongs, …) becomes a DataError naming the record
    instead of a TypeError/ValidationError from deep inside the converter."""

    @functools.wraps(fn)
    def wrapper(row: Any, path: Path, i: int, *args: Any, **kwargs: Any) -> Question:
        try:
            return fn(row, path, i, *args, **kwargs)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise DataError(f"question #{i}: invalid {where}: {first['msg']}", path=str(path)) from None
        except (TypeError, KeyError, IndexError, AttributeError, ValueError) as exc:
            raise DataError(
                f"question #{i} has a field of the wrong type ({type(exc).__name__}: {str(exc)[:150]}); "
                "check the file is in this dataset's format",
                path=str(path),
            ) from None

    return cast(RowParser, wrapper)


def parse_questions(
    records: Sequence[Any], parse: Callable[..., Question], path: Path, *args: Any
) -> tuple[list[Question], tuple[str, ...]]:
    """Each record through ``parse`` (a :func:`row_parser` converter). A malformed record is left out and
    named in the returned warning (``Dataset.warnings``: ``tkgqa eval`` lists it in ``report.json``, and
    ``--strict`` stops at it), so one flaw in a published file does not stop a run; when no record parses,
    the first error is raised (the file is not in this format)."""
    questions: list[Question] = []
    problems: list[DataError] = []
    for i, row in enumerate(records):
        try:
            questions.append(parse(row, path, i, *args))
        except DataError as exc:
            problems.append(exc)
    if problems and not questions:
        raise problems[0]
    if not problems:
        return questions, ()
    shown = "; ".join(p.message for p in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return questions, (
        f"{path}: {len(problems)} malformed question(s) left out: {shown}{more} "
        "(--strict makes this an error)",
    )


def read_records(path: Path, *, allow_pickle: bool = False) -> list[dict[str, Any]]:
    """A list of question dicts from a JSON list / ``{"questions": [...]}`` / JSONL / (opt-in) pickle file.

    Pickle is the official CronQuestions format; it is only read when ``allow_pickle``, and then through an
    unpickler that builds plain data only (built-in containers, numpy arrays; never another class or
    function: :func:`.sources.safety.read_pickle`)."""
    if path.suffix in {".pickle", ".pkl"}:
        if not allow_pickle:
            raise ConfigError(f"{path}: refusing to unpickle (pass allow_pickle=True for a file you trust)")
        from .sources.safety import read_pickle

        data = read_pickle(path, numpy=True)
    elif path.suffix in {".jsonl", ".ndjson"}:
        data = []
        for lineno, row in iter_jsonl(path):
            if not isinstance(row, dict):
                raise DataError("expected a JSON object per line", path=str(path), line=lineno)
            data.append(row)
    else:
        data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("questions"), list):
        data = data["questions"]
    if isinstance(data, dict):  # {id: question}
        data = [{"_key": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
    if not isinstance(data, list):
        raise DataError(f"expected a list of questions, got {type(data).__name__}", path=str(path))
    for i, row in enumerate(data):
        if not isinstance(row, dict):
            raise DataError(f"question #{i} is a {type(row).__name__}, expected an object", path=str(path))
    return data


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of the non-blank lines of a JSONL file; DataError on bad JSON."""
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield lineno, parse_json(line)
                except ValueError as exc:  # not JSON, a >4300-digit integer, or nesting too deep
                    raise DataError(f"invalid JSON: {str(exc)[:200]}", path=str(path), line=lineno) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None


def str_list(value: Any, what: str, path: Path, line: int | None = None) -> list[str]:
    """A list of strings from a list/set/tuple of str/int/float (or a single one); DataError otherwise."""
    if value is None:
        return []
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list | tuple | set | frozenset):
        raise DataError(f"{what} must be a list, got {type(value).__name__}", path=str(path), line=line)
    out = []
    for item in sorted(value, key=str) if isinstance(value, set | frozenset) else value:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise DataError(f"{what} items must be strings, got {item!r}", path=str(path), line=line)
        out.append(str(item))
    return out

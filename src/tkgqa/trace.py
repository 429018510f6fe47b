"""An answer's trace as values (issue #30): each step a frozen dataclass, written as JSON only at the
boundaries (a ``results.jsonl`` row, the API, the MCP server) and read back from there by :func:`read_trace`.

A leaf module (it imports nothing of tkgqa): the query layer's executor, every method and the rows of
:mod:`tkgqa.outcomes` use it.

A step class is a ``@dataclass(frozen=True, eq=False)`` subclass of :class:`TraceStep`. Its JSON form
(:meth:`TraceStep.to_dict`) is the class's :attr:`~TraceStep.tag` pair first (``{"step": "answer"}``), then
every field under its name — or the key given by :func:`step_field` — in declaration order; a field made
with ``step_field(omit_default=True)`` is left out while it holds its default. A step whose JSON form is
not that shape overrides :meth:`~TraceStep.to_dict` and :meth:`~TraceStep.from_dict`.

A step is also a read-only mapping over its JSON form (``step["answers"]``, ``"program" in step``), so code
that reads a row's steps and code that reads an answer's read the same keys; two steps are equal when their
JSON forms are. Library code reads the typed fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Self, TypeVar

S = TypeVar("S", bound="TraceStep")

#: Every step class defined (in definition order): what :func:`read_trace` tries on a JSON step.
_KINDS: list[type[TraceStep]] = []


def step_field(
    *,
    key: str | None = None,
    omit_default: bool = False,
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
) -> Any:
    """A step's field written under ``key`` (its name by default); ``omit_default``: left out of the JSON
    form while it equals its default."""
    metadata = {"key": key, "omit_default": omit_default}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def plain(value: Any) -> Any:
    """``value`` as fresh JSON-ready data: steps and mappings as dicts, sequences (not strings) as lists."""
    if isinstance(value, TraceStep):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class TraceStep(Mapping[str, Any]):
    """One step of an answer's trace (see the module docstring)."""

    #: the ``(key, value)`` pair the JSON form starts with (``("step", "answer")``); ``None``: none
    tag: ClassVar[tuple[str, str] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _KINDS.append(cls)

    # --- the JSON form -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The step's JSON form: fresh, JSON-ready data."""
        out: dict[str, Any] = {} if self.tag is None else {self.tag[0]: self.tag[1]}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("omit_default") and _is_default(f, value):
                continue
            out[f.metadata.get("key") or f.name] = plain(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self | None:
        """The step whose JSON form ``data`` is, ``None`` when it is not one of this class (its tag, its
        keys or its values differ: the step read back must write ``data`` again)."""
        if not dataclasses.is_dataclass(cls):
            return None
        if cls.tag is not None and data.get(cls.tag[0]) != cls.tag[1]:
            return None
        values: dict[str, Any] = {}
        known = {cls.tag[0]} if cls.tag is not None else set()
        for f in dataclasses.fields(cls):
            key = f.metadata.get("key") or f.name
            known.add(key)
            if key in data:
                values[f.name] = data[key]
            elif not f.metadata.get("omit_default"):
                return None
        if set(data) - known:
            return None
        try:
            step = cls(**values)
        except (TypeError, ValueError):
            return None
        return step if writes_back(step, data) else None

    @property
    def unwrapped(self) -> TraceStep:
        """The step itself; a step that wraps another (a hybrid's part, tagged with its stage) gives the
        step it wraps, so readers find a method's steps wherever they were put."""
        return self

    def shown_lines(self) -> list[str]:
        """Lines that say this step to a person under the answer (``tkgqa ask``); none by default (R3's
        explanation gives its axiom, steps and verdict)."""
        return []

    # --- a read-only mapping over the JSON form ------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.to_dict() == plain(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))  # type: ignore[arg-type]
        return f"{type(self).__name__}({shown})"


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    if f.default is not dataclasses.MISSING:
        return bool(value == f.default)
    if f.default_factory is not dataclasses.MISSING:
        return bool(value == f.default_factory())
    return False


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class RecordedStep(TraceStep):
    """A step known only by its JSON form: one read back that no step class writes, or one a third-party
    method gave as a dict."""

    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {key: plain(value) for key, value in self.data.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(dict(data))


def as_step(item: TraceStep | Mapping[str, Any]) -> TraceStep:
    """``item`` as a step: a step as is, a JSON step (a plugin's dict) as a :class:`RecordedStep`."""
    if isinstance(item, TraceStep):
        return item
    if isinstance(item, Mapping):
        return RecordedStep(dict(item))
    raise TypeError(f"a trace step is a TraceStep or a dict, not {type(item).__name__}")


def writes_back(step: TraceStep, data: Mapping[str, Any]) -> bool:
    """Whether ``step``'s JSON form is ``data`` exactly: the same values and the same key order at every
    level (a row written back must keep its bytes; ``==`` on dicts ignores the order)."""
    return _ordered(step.to_dict()) == _ordered(data)


def _ordered(value: Any) -> Any:
    """``value`` with every mapping as a list of its (key, value) pairs, so comparing sees the key order."""
    if isinstance(value, TraceStep):
        value = value.to_dict()
    if isinstance(value, Mapping):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_ordered(v) for v in value]
    return value


def read_step(data: Mapping[str, Any]) -> TraceStep:
    """The step whose JSON form ``data`` is: the first step class (of those imported) that writes it back
    unchanged, else a :class:`RecordedStep`."""
    for kind in _KINDS:
        if kind is RecordedStep:
            continue
        step = kind.from_dict(data)
        if step is not None and writes_back(step, data):
            return step
    return RecordedStep(dict(data))


def read_trace(items: Iterable[Any]) -> list[TraceStep]:
    """A trace read back from JSON (a row's ``trace``): each dict as its step (:func:`read_step`); steps
    stay; anything else is left out."""
    out: list[TraceStep] = []
    for item in items:
        if isinstance(item, TraceStep):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(read_step(item))
    return out


def steps_of(trace: Iterable[TraceStep], kind: type[S]) -> list[S]:
    """The steps of ``trace`` of class ``kind``, wrapped ones included (:attr:`TraceStep.unwrapped`)."""
    return [inner for inner in (s.unwrapped for s in trace) if isinstance(inner, kind)]


def trace_json(steps: Sequence[TraceStep | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The JSON form of a trace (what a row, the API and the MCP server write)."""
    return [as_step(s).to_dict() for s in steps]

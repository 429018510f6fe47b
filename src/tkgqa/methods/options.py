"""The options written after a method's name and given to its config: parsing (``"a=1,b=x"``, repeatable
``KEY=VALUE`` pairs), merging and validating them, and the errors that name the option as the user wrote it.
Re-exported by :mod:`tkgqa.methods.base`."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError

C = TypeVar("C", bound=BaseModel)


def parse_options(
    spec: str | None,
    *,
    method: str,
    flags: Mapping[str, tuple[str, Any]] | None = None,
    positional: str | None = None,
) -> dict[str, Any]:
    """The options written after a method's name: ``"a=1,b=x"`` → ``{"a": "1", "b": "x"}`` (values are
    validated by the method's config). A bare word is looked up in ``flags`` (``"no_rerank"`` →
    ``("rerank", False)``), else taken as the value of ``positional`` (``"ari:oracle"`` → policy), else an
    error. Keys are lower-cased with ``-`` read as ``_``; ``+`` separates options like ``,``."""
    out: dict[str, Any] = {}
    flags = flags or {}
    for part in (spec or "").replace("+", ",").split(","):
        token = part.strip()
        if not token:
            continue
        key, sep, value = token.partition("=")
        if sep:
            if not key.strip():
                raise ConfigError(f"bad {method} option {part!r}: use key=value pairs separated by commas")
            out[key.strip().lower().replace("-", "_")] = value.strip()
            continue
        flag = flags.get(token.lower().replace("-", "_").replace("/", "_"))
        if flag is not None:
            out[flag[0]] = flag[1]
        elif positional is not None and positional not in out:
            out[positional] = token
        else:
            known = f"flags {', '.join(flags)} or " if flags else ""
            raise ConfigError(f"unknown {method} option {part!r}: use {known}key=value pairs")
    return out


def merge_config(cls: type[C], base: C | None, overrides: Mapping[str, Any], *, method: str = "") -> C:
    """``base`` (or the defaults) with ``overrides`` applied and validated; ConfigError naming the option,
    the value and the form it takes (:func:`option_problem`), never the config class."""
    data = {**(base.model_dump() if base is not None else {}), **overrides}
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        problems = [option_problem(cls, e, method) for e in exc.errors(include_url=False)[:3]]
        raise ConfigError("; ".join(problems)) from None


#: How many option names an "unknown option" error lists at most (the closest ones first).
SHOWN_OPTIONS = 10


def value_form(cls: type[BaseModel], name: str) -> str:
    """How option ``name`` of ``cls`` is written on the command line: ``top_k=INTEGER (default 10)``,
    ``policy=llm|symbolic|oracle``…"""
    import types
    import typing

    info = cls.model_fields.get(name)
    if info is None:
        return f"{name}=VALUE"
    kind = info.annotation
    if typing.get_origin(kind) in (typing.Union, types.UnionType):  # Optional[X]: the form of X
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    choices: list[str] = []
    if typing.get_origin(kind) is typing.Literal:
        choices = [str(v) for v in typing.get_args(kind)]
    elif isinstance(kind, type) and issubclass(kind, StrEnum):
        choices = [str(v) for v in kind]
    forms = {bool: "true|false", int: "INTEGER", float: "NUMBER", str: "TEXT"}
    shown = "|".join(choices) if choices else forms.get(kind, "VALUE") if isinstance(kind, type) else "VALUE"
    default = info.default
    plain = isinstance(default, bool | int | float | str) and not isinstance(default, types.NoneType)
    text = str(default).lower() if isinstance(default, bool) else str(default)
    return f"{name}={shown}" + (f" (default {text})" if plain and text else "")


def option_problem(cls: type[BaseModel], error: Any, method: str) -> str:
    """One pydantic error of a method config as the user wrote it: the option, the value, what is wrong
    and the allowed form; an unknown option gets the closest names (at most :data:`SHOWN_OPTIONS`)."""
    name = ".".join(str(x) for x in error["loc"]) or "?"
    top = str(error["loc"][0]) if error["loc"] else name
    whose = f"the {method} method" if method else "this method"
    fields = list(cls.model_fields)
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(top, fields, n=3, cutoff=0.5)
        if close:
            return f"unknown option {top!r} for {whose}; did you mean {' or '.join(close)}?"
        more = f", … ({len(fields)} in all)" if len(fields) > SHOWN_OPTIONS else ""
        listed = ", ".join(fields[:SHOWN_OPTIONS]) + more
        return f"unknown option {top!r} for {whose}; its options: {listed}"
    value = error.get("input")
    shown = repr(value) if isinstance(value, str | int | float | bool) else "the value given"
    if isinstance(value, str) and len(value) > 60:
        shown = repr(value[:60] + "…")
    msg = str(error["msg"])
    msg = msg[:1].lower() + msg[1:]
    return f"option {name}={shown} of {whose}: {msg}; write {value_form(cls, top)}"


OptionsT = TypeVar("OptionsT")


def options_from(cls: type[OptionsT], config: BaseModel, /, **renamed: Any) -> OptionsT:
    """An option object (a dataclass of a lower layer: ``ParserOptions``, ``FilterSettings``…) built from the
    config's settings of the same names; ``renamed`` gives the ones named otherwise (or derived). A field
    the config lacks keeps its default."""
    names = [f.name for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    own = {n: getattr(config, n) for n in names if n in type(config).model_fields and n not in renamed}
    return cls(**own, **renamed)


def parse_option_pairs(pairs: Iterable[str], *, option: str = "--method-option") -> dict[str, Any]:
    """``KEY=VALUE`` pairs (repeatable CLI options) as a dict for :func:`resolve_method`.

    Keys are lower-cased with ``-`` read as ``_``; a dotted key nests (``fallback_options.policy=llm`` →
    ``{"fallback_options": {"policy": "llm"}}``); a value starting with ``{`` or ``[`` is parsed as JSON;
    other values stay strings (the method's config converts ``"10"``/``"true"``)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        path = [k.strip().lower().replace("-", "_") for k in key.split(".")]
        if not sep or not all(k.isidentifier() for k in path):
            raise ConfigError(f"bad {option} {pair!r}: use KEY=VALUE (KEY a name, dotted to nest: a.b=1)")
        value: Any = raw.strip()
        if value and value[0] in "{[":
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"bad {option} {pair!r}: the value is not valid JSON ({exc.msg})") from None
            except (ValueError, RecursionError) as exc:  # a >4300-digit integer, or nesting too deep
                raise ConfigError(
                    f"bad {option} {pair[:80]!r}: the value cannot be read ({exc})"[:300]
                ) from None
        node = out
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"bad {option} {pair!r}: {part!r} is already set to a value")
            node = child
        node[path[-1]] = value
    return out


def merge_options(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated with ``override``, nested dicts merged key by key (override wins)."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            out[key] = merge_options(current, value)
        else:
            out[key] = value
    return out

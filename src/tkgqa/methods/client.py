"""The settings of a method that a client of ``tkgqa serve`` may set in a request's ``options``.

A method marks them on its config fields with :func:`client_option` (no list elsewhere): the server accepts
exactly those, for built-in and plugin methods alike (``tkgqa serve --allow-option`` replaces them), and
every other setting comes only from the server's ``--method`` spec or from Python. What a client sends is
untrusted, so a marked number carries bounds (``ge``/``le``) and a setting that names a file, model, LLM or
method is never marked (the service refuses such names even when marked)::

    class MyConfig(MethodConfig):
        max_evidence: int = client_option(50, ge=0, le=10_000, description="facts returned as evidence")
        embedder: str = "minilm"  # not marked: only the operator picks a model
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args, get_type_hints

from pydantic import Field
from pydantic.fields import FieldInfo

from .base import METHODS, MethodConfig

#: The key :func:`client_option` puts in a field's ``json_schema_extra``.
CLIENT_OPTION = "client_option"


def client_option(default: Any, **field: Any) -> Any:
    """A config field a network client may set; ``field`` goes to :func:`pydantic.Field` (``ge``, ``le``,
    ``description``…)."""
    extra = dict(field.pop("json_schema_extra", None) or {})
    return Field(default, json_schema_extra={**extra, CLIENT_OPTION: True}, **field)


def is_client_option(info: FieldInfo) -> bool:
    """Whether a config field is marked with :func:`client_option`."""
    extra = info.json_schema_extra
    return isinstance(extra, dict) and extra.get(CLIENT_OPTION) is True


@cache
def client_options(config: type[MethodConfig]) -> tuple[str, ...]:
    """The settings of ``config`` a network client may set (marked with :func:`client_option`), in field
    order."""
    return tuple(name for name, info in config.model_fields.items() if is_client_option(info))


@cache
def config_class_of(factory: object) -> type[MethodConfig] | None:
    """The config class of a registered method: its ``config_class``, else the type of its constructor's
    ``config`` parameter; ``None`` for a factory with neither."""
    declared = getattr(factory, "config_class", None)
    if isinstance(declared, type) and issubclass(declared, MethodConfig) and declared is not MethodConfig:
        return declared
    target = getattr(factory, "__init__", None) if isinstance(factory, type) else factory
    try:
        hint = get_type_hints(target).get("config")
    except Exception:  # an annotation that cannot be resolved: no config class to read
        return None
    for candidate in (hint, *get_args(hint)):
        if isinstance(candidate, type) and issubclass(candidate, MethodConfig):
            return candidate
    return None


def method_client_options(name: str) -> tuple[str, ...]:
    """The settings a network client may set for the registered method ``name`` (none for a method whose
    config class cannot be found). Imports the method's module."""
    config = config_class_of(METHODS.factory(name))
    return client_options(config) if config is not None else ()

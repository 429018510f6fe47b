"""The settings a network client may set are marked on the config fields (``tkgqa.methods.client``): the
marks give every built-in method the options the service's former allow-list gave it, and every marked
setting is safe to take from a request (bounded numbers, no file, model, LLM or method)."""

from __future__ import annotations

import pytest
from pydantic import Field

from tkgqa.errors import ConfigError
from tkgqa.methods.base import METHODS, MethodConfig
from tkgqa.methods.client import client_option, client_options, config_class_of, method_client_options
from tkgqa.service.policy import forbidden_option

#: ``tkgqa.service.policy.DEFAULT_ALLOWED_OPTIONS`` before the marks replaced it: one list for every method.
FORMER_ALLOW_LIST = frozenset(
    {
        "policy",
        "relax",
        "any_relation",
        "set_order",
        "before_reference",
        "after_reference",
        "exclude_question_entities",
        "relation_candidates",
        "max_evidence",
        "top_k",
        "max_tokens",
        "seed",
        "path_policy",
        "choice_mode",
    }
)
BUILTIN = [
    "symbolic", "ari", "llm_only", "kg_rag", "react_kb", "cot_kb", "timer4", "cik", "hybrid", "lpkg", "r3",
    "kaping", "cot0", "cot2",
]  # fmt: skip


def _config(name: str) -> type[MethodConfig]:
    try:
        factory = METHODS.factory(name)
    except ConfigError as exc:  # an optional extra is missing (core-only install)
        pytest.skip(str(exc))
    config = config_class_of(factory)
    assert config is not None, f"{name}: no config class found"
    return config


@pytest.mark.parametrize("name", BUILTIN)
def test_marks_give_each_builtin_method_the_former_allowed_options(name: str) -> None:
    config = _config(name)
    assert set(method_client_options(name)) == FORMER_ALLOW_LIST & set(config.model_fields)


def test_every_formerly_allowed_option_is_marked_somewhere() -> None:
    marked = {option for name in BUILTIN for option in client_options(_config(name))}
    assert marked == FORMER_ALLOW_LIST


@pytest.mark.parametrize("name", BUILTIN)
def test_marked_settings_are_safe_to_take_from_a_request(name: str) -> None:
    config = _config(name)
    for option in client_options(config):
        assert not forbidden_option(option), f"{name}.{option} names a file, model, LLM or method"
        info = config.model_fields[option]
        if info.annotation in (int, float):
            bounds = {type(m).__name__ for m in info.metadata}
            assert {"Ge", "Le"} <= bounds, f"{name}.{option}: a number a client sets needs ge= and le="


def test_the_marker_keeps_the_field_as_it_was() -> None:
    class Demo(MethodConfig):
        size: int = client_option(3, ge=1, le=9, description="a size", json_schema_extra={"unit": "facts"})
        name: str = "x"

    assert client_options(Demo) == ("size",)
    assert Demo().size == 3 and Demo(size=9).size == 9
    with pytest.raises(ValueError, match="less than or equal to 9"):
        Demo(size=10)
    schema = Demo.model_json_schema()["properties"]["size"]
    assert schema["description"] == "a size" and schema["unit"] == "facts"

    class Other(MethodConfig):
        size: int = Field(default=3)

    assert client_options(Other) == ()


class _Demo(MethodConfig):
    pass


class _Declared:
    config_class = _Demo


class _Annotated:
    def __init__(self, config: _Demo | None = None, **overrides: object) -> None: ...


def test_the_config_class_is_found_from_the_class_or_the_constructor() -> None:
    def plain(**options: object) -> None: ...

    assert config_class_of(_Declared) is _Demo and config_class_of(_Annotated) is _Demo
    assert config_class_of(plain) is None

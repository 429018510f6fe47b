"""What the CLI (``tkgqa ask``, ``tkgqa eval``, ``tkgqa lpkg``) and the HTTP service share: opening a KG,
resolving a method (with its LLM) and serializing an :class:`~tkgqa.methods.base.Answer` to JSON. It sits
below both, so the CLI never imports the service's internals.

Nothing here imports FastAPI, so the CLI uses it without the ``[service]`` extra.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..credentials import redact
from ..errors import ConfigError, NotFoundError
from ..kg.base import KGStore
from ..kg.builder import load_warnings
from ..kg.memory import TemporalKG
from ..llm.helpers import USAGE_KEYS
from ..methods.base import Answer, Method, resolve_method
from ..query.program.steps import ParseStep
from ..sanitize import clean_json
from ..trace import TraceStep, steps_of

ScalarOption = str | int | float | bool
#: A method option's value: a scalar, or a dict of scalars for nested options (``fallback_options={...}``).
OptionValue = ScalarOption | dict[str, ScalarOption]


def open_kg(
    path: str | None, *, format: str = "auto", strict: bool = False, cache: bool = True
) -> TemporalKG:
    """The KG a user names, wherever they name one (``--kg``, ``tkgqa kg …``, ``tkgqa.ask(kg=…)``, a server):
    ``None`` or ``"demo"`` → the bundled demo KG; a catalogued dataset's name that is not a file here
    (``multitq``) → that dataset's KG file under the data root (as its loader finds it); otherwise the file
    at ``path``. ``format``, ``strict`` and ``cache`` are :func:`~tkgqa.kg.loaders.load_kg`'s."""
    from ..kg.formats import get_format
    from ..kg.loaders import load_demo_kg, load_kg

    if format != "auto":
        get_format(format)  # an unknown name is an error whatever the KG (the demo KG reads no file)
    if path is None or path == "demo":
        return load_demo_kg()
    if not Path(path).expanduser().exists():
        path = _catalogued_kg(path) or path
    return load_kg(path, format=format, strict=strict, cache=cache)


def _catalogued_kg(name: str) -> str | None:
    """The KG file of the catalogued data ``name`` under the data root: a dataset loader's KG (``multitq``)
    or an entry's whole KG (``icews14``, ``timequestions-kg``); ``None`` when ``name`` is neither."""
    from ..datasets import load_dataset
    from ..datasets.sources.catalogue import catalogue, dataset_folder, whole_kg_path

    books = catalogue()
    loader_entry = books.for_dataset(name)
    if loader_entry is not None:
        dataset_folder(name, otherwise="name a KG file")  # not fetched: said with the fetch command
        kg_file = load_dataset(name).kg_path
        if kg_file is not None:
            return str(kg_file)
        whole = next((e for e in books.entries if e.folder == loader_entry.folder and e.kg_file), None)
        fetch = f" (`tkgqa data fetch {whole.name}` fetches it)" if whole is not None else ""
        raise NotFoundError(f"dataset {name!r} has no whole KG under the data root{fetch}; or name a KG file")
    whole_kg = whole_kg_path(name)
    return None if whole_kg is None else str(whole_kg)


def method_options(
    llm: str | None = None, policy: str | None = None, options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Keyword arguments for :func:`~tkgqa.methods.base.resolve_method`: ``options`` plus ``llm``/``policy``
    when given (those two win over the same keys in ``options``). Nested options are dicts, never escaped
    strings: ``{"fallback": "ari", "fallback_options": {"policy": "llm"}}`` for ``hybrid``."""
    opts: dict[str, Any] = dict(options or {})
    for key in opts:
        if not key.isidentifier():
            raise ConfigError(f"bad method option name {key!r}; use identifiers such as 'policy'")
    if llm:
        opts["llm"] = llm
    if policy:
        opts["policy"] = policy
    return opts


def build_method(
    spec: str,
    *,
    llm: str | None = None,
    policy: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Method:
    """The method for ``spec`` (``"symbolic"``, ``"ari:policy=symbolic"``, ``"timer4"``…) configured with
    an LLM spec (``"fake"``, ``"openai:gpt-4o-mini"``, ``"llamacpp:smollm2"``) and extra options (a dict,
    nested for nested settings; they win over the options written in ``spec``)."""
    if not spec or not spec.strip():
        raise ConfigError("no method given; use e.g. 'symbolic' or 'ari:policy=symbolic'")
    if policy:
        _check_policy_alias(spec.strip())
    return resolve_method(spec.strip(), **method_options(llm, policy, options))


def _check_policy_alias(spec: str) -> None:
    """``--policy X`` is a short form of ``--method-option policy=X``, kept for the methods with a
    ``policy`` setting (ari, react_kb, cot_kb, hybrid); for any other method it is an error."""
    from ..methods.base import METHODS

    name = spec.partition(":")[0].strip()
    factory = METHODS.spec_factory(spec)
    fields = (
        factory.config_class.model_fields if isinstance(factory, type) and issubclass(factory, Method) else {}
    )
    if fields and "policy" not in fields:
        raise ConfigError(
            f"--policy is an option of ari (and react_kb, cot_kb, hybrid); the {name} method has no "
            "policy: drop --policy (for ARI write --method ari:policy=X or --method-option policy=X)"
        )


@functools.lru_cache(maxsize=256)
def takes_llm(spec: str) -> bool:
    """Whether the method of ``spec`` takes an ``llm`` (a default LLM is passed only to those): the spec's
    form of :meth:`Method.takes_llm <tkgqa.methods.base.Method.takes_llm>` (the API's ``uses_llm`` field); an
    unknown method raises the registry's ConfigError. Whether it *calls* one: :func:`needs_llm`."""
    from ..methods.base import METHODS

    factory = METHODS.spec_factory(spec)
    if isinstance(factory, type) and issubclass(factory, Method):
        return factory.takes_llm()  # every built-in method's constructor has `llm`; its config says
    try:
        return "llm" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return True


#: Option values with which a method that takes an LLM answers without one (ARI's, and hybrid's fallback's,
#: ``policy=symbolic``; ``oracle`` reads the gold answers). The one place that says so.
LLM_FREE_OPTIONS: dict[str, frozenset[str]] = {"policy": frozenset({"symbolic", "oracle"})}


def needs_llm(spec: str, options: Mapping[str, Any] | None = None) -> bool:
    """Whether answering with ``spec`` (plus request ``options``) calls an LLM: the method takes one
    (:func:`takes_llm`) and no option of :data:`LLM_FREE_OPTIONS` switches it off (``ari:policy=symbolic``
    needs none, ``ari`` does)."""
    if not takes_llm(spec):
        return False
    written: dict[str, str] = {}
    for token in spec.partition(":")[2].replace("+", ",").split(","):
        key, sep, value = token.partition("=")
        written[key.strip().lower() if sep else "policy"] = value.strip() if sep else key.strip()
    given = {**written, **{k: str(v) for k, v in (options or {}).items()}}
    return not any(str(given.get(key, "")).lower() in values for key, values in LLM_FREE_OPTIONS.items())


def _parsed_no_entity(trace: Sequence[TraceStep]) -> bool:
    """Whether the trace's symbolic parse found no KG entity in the question."""
    parse = next((s.parse for s in steps_of(trace, ParseStep) if isinstance(s.parse, Mapping)), None)
    return parse is not None and not parse.get("entities")


def answer_payload(
    answer: Answer,
    latency_ms: float | None = None,
    *,
    kg: KGStore | None = None,
    question: str = "",
    method: str = "",
    llm: str | None = None,
    as_of: str | None = None,
    suggest: Callable[[str, int], Sequence[Any]] | None = None,
) -> dict[str, Any]:
    """The JSON object of ``tkgqa ask --json`` and ``POST /api/ask``
    (:class:`tkgqa.service.models.AnswerOut`): the ``question``, ``method``, ``llm`` and ``kg`` it
    answers, ``answers``, ``evidence`` (facts as
    ``{subject, relation, object, start, end}`` plus their labels), ``grounded``, ``trace``, ``program``
    (the symbolic program as a tree with per-step fact counts), ``missing``, ``usage``, ``abstained``,
    ``reason``, ``raw_output``, ``latency_ms`` and ``warnings`` (what loading the KG skipped); JSON-safe
    (odd trace values become strings, lone surrogates U+FFFD) with secrets masked."""
    from .views import decision_facts, entity_suggestions, evidence_cover, labelled_fact, program_tree

    data = answer.to_dict()
    usage = {key: data["usage"].get(key, 0) for key in USAGE_KEYS} | data["usage"]
    usage["cost_usd"] = float(usage.get("cost_usd") or 0.0)
    program = program_tree(answer.trace, kg.label if kg is not None else None)
    empty = answer.abstained or not answer.answers
    evidence = [labelled_fact(f, kg) for f in answer.evidence]
    data.update(
        question=question,
        method=method,
        llm=llm,
        kg=getattr(kg, "name", None) if kg is not None else None,
        as_of=as_of,
        evidence=evidence,
        evidence_cover=evidence_cover(answer.answers, evidence),
        decision=decision_facts(answer.trace, kg),
        suggestions=(
            entity_suggestions(question, suggest)
            if suggest is not None and answer.abstained and _parsed_no_entity(answer.trace)
            else None
        ),
        usage=usage,
        grounded=bool(answer.evidence),
        program=program,
        missing=program["missing"] if program and empty else None,
        latency_ms=round(latency_ms, 1) if latency_ms is not None else None,
        warnings=load_warnings(kg),  # what the KG's load skipped: said in every answer over it
    )
    safe = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return dict(redact(clean_json(safe)))

"""One registration per method package — the path every method takes, built-in or third-party.

A method package (``tkgqa/methods/ari/``, or a distribution of its own like ``examples/method_plugin``)
declares what it adds to tkgqa in one :class:`MethodPackage`, in a tiny module that holds strings only
(``plugin.py``)::

    PLUGIN = MethodPackage(
        name="ari",
        methods={"ari": "tkgqa.methods.ari.method:ARIMethod", "react_kb": "…kb_baselines:ReActKB"},
        commands="tkgqa.methods.ari.commands:ari_app",      # a typer.Typer: ``tkgqa ari …``
        parse_tasks="tkgqa.methods.ari.parse_tasks:TASKS",  # ``tkgqa llm parse --task ari.action``
        paper="tkgqa.methods.ari:paper.json",               # the paper's tables: ``tkgqa reproduce ari``
    )

Nothing a descriptor names is imported when it is read: the methods become lazy references of
:data:`tkgqa.methods.METHODS` (listed at once, imported on first resolve), the commands module is imported
when the ``tkgqa`` command line is built, the parse tasks when ``tkgqa llm parse`` runs, the paper table (a
data file of the package, ``"package:file"``) when ``tkgqa reproduce`` reads it (:func:`read_paper`), an
analysis when ``tkgqa analyze coverage`` runs it (:func:`load_analysis`), what a method is given in a paper
row as the paper gave it when ``tkgqa reproduce`` plans or runs that method's cells
(:func:`load_paper_inputs`).

Where descriptors come from:

* tkgqa's own packages: :data:`tkgqa.methods._builtin.BUILTIN_PACKAGES` (``"module:attr"`` of each
  ``PLUGIN``), registered when :mod:`tkgqa.methods` is imported;
* a third-party distribution: an entry point of the group :data:`PACKAGE_GROUP` pointing at its descriptor
  (``[project.entry-points."tkgqa.method_packages"] my_pkg = "my_pkg.plugin:PLUGIN"``), read when the
  method registry is first queried. Its import runs guarded (a failing plugin is a warning naming its
  distribution, never a crash of ``tkgqa``), and it may not take a name built into tkgqa. The older form —
  an entry point of ``tkgqa.methods`` naming one Method class — keeps working.

A package's ``__init__`` imports nothing eagerly (its public names are :func:`tkgqa.lazy.lazy_exports` of the
imports in its ``if TYPE_CHECKING:`` block), so reading the descriptors of every built-in package costs a few
small modules, no method implementation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ConfigError
from ..registry import Reference, Registry

if TYPE_CHECKING:
    from ..llm.parse_tasks import ParseTask
    from .analyses import Analysis
    from .paper_inputs import PaperInputs

T = TypeVar("T")

#: Entry-point group of third-party method packages (one :class:`MethodPackage` each).
PACKAGE_GROUP = "tkgqa.method_packages"


@dataclass(frozen=True)
class MethodPackage:
    """What one method package registers, as ``"module:attr"`` strings (nothing is imported here).

    ``methods``: method name → the Method class; ``extras``: method name → the ``tkgqa`` extra its optional
    dependencies come from (for the "pip install" hint when one is missing); ``commands``: a ``typer.Typer``
    with a ``name``, added to ``tkgqa`` as that command group; ``parse_tasks``: a sequence of
    :class:`~tkgqa.llm.parse_tasks.ParseTask` read by ``tkgqa llm parse``; ``paper``: ``"package:file"`` of
    the published tables of the package's paper (the JSON that :mod:`tkgqa.eval.reproduce.spec` reads, a data
    file shipped inside the package), reproduced by ``tkgqa reproduce NAME``; ``analyses``: method name → an
    :class:`~tkgqa.methods.analyses.Analysis`, run by ``tkgqa analyze coverage --method NAME``;
    ``paper_inputs``: method name → a :class:`~tkgqa.methods.paper_inputs.PaperInputs`, what ``tkgqa
    reproduce`` gives that method's LLM cells as the paper gave them (e.g. ARI's history memory)."""

    name: str
    methods: Mapping[str, str]
    extras: Mapping[str, str] = field(default_factory=dict)
    commands: str | None = None
    parse_tasks: str | None = None
    paper: str | None = None
    analyses: Mapping[str, str] = field(default_factory=dict)
    paper_inputs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("methods", "extras", "analyses", "paper_inputs"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        refs = [
            *self.methods.values(),
            *self.analyses.values(),
            *self.paper_inputs.values(),
            *filter(None, (self.commands, self.parse_tasks, self.paper)),
        ]
        bad = [ref for ref in refs if not isinstance(ref, str) or ":" not in ref]
        if not refs:
            raise ConfigError(
                f"method package {self.name!r} declares no methods, commands, parse tasks, paper, "
                "analyses or paper inputs"
            )
        if bad:
            raise ConfigError(f"method package {self.name!r}: {bad[0]!r} is not a 'module:attr' reference")
        unknown = sorted(set(self.extras) - set(self.methods))
        if unknown:
            raise ConfigError(f"method package {self.name!r}: extras for undeclared method(s) {unknown}")


@dataclass(frozen=True)
class Declared:
    """A package's descriptor and where it comes from (``distribution`` ``None``: built into tkgqa)."""

    package: MethodPackage
    distribution: str | None = None
    entry_point: str = ""

    @property
    def origin(self) -> str:
        return f"plugin {self.distribution}" if self.distribution else "built-in"

    def reference(self, what: str, target: str) -> Reference:
        """``target`` as a registry reference: guarded like any plugin import when the package is one."""
        if self.distribution is None:
            return Reference(what, target)
        return Reference(what, target, distribution=self.distribution, group=PACKAGE_GROUP)


def _read_descriptor(ref: Reference) -> MethodPackage:
    found = ref.load("method package")
    if not isinstance(found, MethodPackage):
        message = f"{ref.target!r} is a {type(found).__name__}, not a MethodPackage"
        raise ref.plugin_error("method package", message) if ref.distribution else ConfigError(message)
    return found


def builtin_packages() -> list[Declared]:
    """tkgqa's own packages, in :data:`~tkgqa.methods._builtin.BUILTIN_PACKAGES` order."""
    from ._builtin import BUILTIN_PACKAGES

    return [Declared(_read_descriptor(Reference(target, target))) for target in BUILTIN_PACKAGES]


_PLUGINS: list[Declared] | None = None


def plugin_packages(*, reread: bool = False) -> list[Declared]:
    """The third-party packages of the :data:`PACKAGE_GROUP` entry points (read once, or again with
    ``reread``; one that fails to load is skipped with a warning naming its distribution)."""
    global _PLUGINS
    if _PLUGINS is None or reread:
        found: list[Declared] = []
        for ep in metadata.entry_points(group=PACKAGE_GROUP):
            dist = ep.dist.name if ep.dist is not None else "?"
            ref = Reference(ep.name, ep.value, distribution=dist, group=PACKAGE_GROUP)
            try:
                found.append(Declared(_read_descriptor(ref), dist, ep.name))
            except ConfigError as exc:
                warnings.warn(f"method package skipped: {exc}", stacklevel=2)
        _PLUGINS = found
    return _PLUGINS


def method_packages() -> list[Declared]:
    """Every method package: the built-in ones, then the plugins."""
    return [*builtin_packages(), *plugin_packages()]


def builtin_methods() -> dict[str, str]:
    """Method name → ``"module:attr"`` of every built-in method (what the built-in descriptors declare)."""
    return {name: target for d in builtin_packages() for name, target in d.package.methods.items()}


def register_builtin_methods(registry: Registry[Any]) -> None:
    """Add every built-in package's methods to ``registry`` as lazy built-in references."""
    for declared in builtin_packages():
        for name, target in declared.package.methods.items():
            registry.add_lazy(name, target, extra=declared.package.extras.get(name))


def plugin_method_references() -> Iterator[Reference]:
    """The methods of the third-party packages, as plugin references (the registry's discovery: read when it
    is first queried, and again by ``reload_plugins``)."""
    for declared in plugin_packages(reread=True):
        for name, target in declared.package.methods.items():
            yield Reference(
                name,
                target,
                extra=declared.package.extras.get(name),
                distribution=declared.distribution,
                group=PACKAGE_GROUP,
            )


def load_declared(declared: Declared, what: str, target: str) -> Any:
    """Import ``target`` ("module:attr") of ``declared``'s package, guarded when it is a plugin's."""
    return declared.reference(what, target).load(what)


def _load_as(declared: Declared, what: str, target: str, expected: type[T]) -> T:
    """:func:`load_declared`, then ConfigError unless the object is an ``expected``."""
    found = load_declared(declared, what, target)
    if not isinstance(found, expected):
        raise ConfigError(
            f"{target!r} of {declared.origin} is a {type(found).__name__}, not {expected.__name__}"
        )
    return found


def parse_tasks() -> dict[str, ParseTask]:
    """Every package's parse tasks by name (:class:`~tkgqa.llm.parse_tasks.ParseTask`), imported now: the
    built-in ones, then the plugins' (a plugin task that fails to load, is not a ParseTask or takes a name
    already taken is skipped with a warning)."""
    from ..llm.parse_tasks import ParseTask

    out: dict[str, ParseTask] = {}
    for declared in method_packages():
        target = declared.package.parse_tasks
        if target is None:
            continue
        try:
            tasks = list(load_declared(declared, "parse tasks", target))
        except ConfigError as exc:
            if declared.distribution is None:
                raise
            warnings.warn(f"parse tasks skipped: {exc}", stacklevel=2)
            continue
        for task in tasks:
            problem = (
                f"{task!r} is not a ParseTask"
                if not isinstance(task, ParseTask)
                else f"the name {task.name!r} is already taken"
                if task.name in out
                else ""
            )
            if problem and declared.distribution is None:
                raise ConfigError(f"built-in parse tasks of {declared.package.name!r}: {problem}")
            if problem:
                warnings.warn(f"parse task of {declared.origin} skipped: {problem}", stacklevel=2)
                continue
            out[task.name] = task
    return out


def _by_name(what: str, names: Callable[[MethodPackage], Iterable[str]]) -> dict[str, Declared]:
    """The packages by each name ``names`` gives, built-in ones first (a plugin taking a name already taken
    is skipped with a warning naming ``what``)."""
    out: dict[str, Declared] = {}
    for declared in method_packages():
        for name in names(declared.package):
            if name not in out:
                out[name] = declared
                continue
            warnings.warn(f"{what} of {declared.origin} skipped: the name {name!r} is taken", stacklevel=3)
    return out


def paper_packages() -> dict[str, Declared]:
    """The packages that name a paper table, by package name (the paper's name in ``tkgqa reproduce``): the
    built-in ones, then the plugins' (a plugin taking a name already taken is skipped with a warning)."""
    return _by_name("paper table", lambda package: [package.name] if package.paper is not None else [])


def read_paper(name: str) -> tuple[str, str]:
    """The text of the paper table that package ``name`` declares, and its ``"package:file"`` reference."""
    declared = paper_packages().get(name)
    if declared is None or declared.package.paper is None:
        raise ConfigError(f"unknown paper {name!r}; use one of {', '.join(paper_packages())}")
    ref = declared.package.paper
    module, _, file = ref.partition(":")
    try:
        return resources.files(module).joinpath(file).read_text("utf-8"), ref
    except (ImportError, OSError, ValueError) as exc:
        raise ConfigError(
            f"the paper table {ref!r} of {declared.origin} cannot be read: {type(exc).__name__}: {exc}"
        ) from None


def analysis_packages() -> dict[str, Declared]:
    """The packages that declare an analysis, by the analysis's name (``tkgqa analyze coverage --method
    NAME``): the built-in ones, then the plugins' (a plugin taking a name already taken is skipped with a
    warning)."""
    return _by_name("analysis", lambda package: package.analyses)


def load_analysis(name: str) -> Analysis:
    """The :class:`~tkgqa.methods.analyses.Analysis` declared as ``name``, imported now (guarded when a
    plugin's)."""
    from .analyses import Analysis

    declared = analysis_packages().get(name)
    if declared is None:
        raise ConfigError(f"unknown analysis {name!r}; use one of {', '.join(analysis_packages())}")
    return _load_as(declared, "analysis", declared.package.analyses[name], Analysis)


def paper_inputs_packages() -> dict[str, Declared]:
    """The packages that declare paper inputs, by method name: the built-in ones, then the plugins' (a plugin
    taking a name already taken is skipped with a warning)."""
    return _by_name("paper inputs", lambda package: package.paper_inputs)


def load_paper_inputs(method: str) -> PaperInputs | None:
    """The :class:`~tkgqa.methods.paper_inputs.PaperInputs` declared for ``method``, imported now (guarded
    when a plugin's); ``None`` when no package declares any (the method is given nothing more)."""
    from .paper_inputs import PaperInputs

    declared = paper_inputs_packages().get(method)
    if declared is None:
        return None
    return _load_as(declared, "paper inputs", declared.package.paper_inputs[method], PaperInputs)

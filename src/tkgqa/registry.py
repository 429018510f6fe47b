"""A tiny name → factory registry used by every swappable part (backends, methods, loaders).

``Registry.resolve`` accepts a registered name (``"symbolic"``, or ``"openai:gpt-4o-mini"`` where the part
after the first ``:`` is handed to the factory as ``spec``), a class (instantiated with kwargs) or an
instance (returned as is).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to factories producing ``T``."""

    def __init__(self, kind: str, base: type | None = None) -> None:
        self.kind = kind
        self.base = base
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: ``@registry.register("name")`` on a class or factory function."""

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            self._factories[name.lower()] = factory
            return factory

        return deco

    def add(self, name: str, factory: Callable[..., T]) -> None:
        self._factories[name.lower()] = factory

    def factory(self, name: str) -> Callable[..., T]:
        """The factory registered as ``name``; ConfigError listing the known names otherwise."""
        found = self._factories.get(name.strip().lower())
        if found is None:
            known = ", ".join(self.names()) or "none registered"
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {known}")
        return found

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def resolve(self, target: str | type | Any, /, **kwargs: Any) -> T:
        """Return an instance for ``target``: a name (optionally ``name:arg``), a class, or an instance."""
        if isinstance(target, str):
            name, _, arg = target.partition(":")
            factory = self.factory(name)
            if arg:
                kwargs = {"spec": arg, **kwargs}
            return factory(**kwargs)
        if isinstance(target, type):
            return target(**kwargs)  # type: ignore[no-any-return]
        if target is None:
            raise ConfigError(f"no {self.kind} given; known: {', '.join(self.names())}")
        return target  # type: ignore[no-any-return]

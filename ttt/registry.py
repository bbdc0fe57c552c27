"""Classes found by the name they declare: the games (``ttt.games``) and the players (``ttt.agents``).

A game class or a player class that sets ``name`` in its own body is registered by being
defined (its base class's ``__init_subclass__`` calls `Registry.add`), so a name is written
once, on its class; every list of names (the ``ttt`` command's choices, the widgets' menus,
``ttt.agents.names``) is read from a registry. `Registry.classes` first imports every module
of its package, so a class in a new module of ``ttt/games/`` or ``ttt/agents/`` needs no other
line to be found.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module


class Registry(dict):
    """The classes of one kind (`kind`: 'game' or 'player') by the name each declares: a dict
    of the classes defined so far; `classes` first imports every module of `package`."""

    def __init__(self, kind: str, package: str) -> None:
        super().__init__()
        self.kind, self.package = kind, package
        self._loaded = False

    def add(self, cls: type) -> None:
        """Register `cls` under its ``name``. A class defined again (a notebook cell run twice,
        a module reloaded) replaces itself; another class may not take a name already taken."""
        name = cls.name
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind}'s name is a non-empty string, not {name!r} ({cls.__qualname__})")
        old = self.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
            raise ValueError(f"two {self.kind}s are called {name!r}: {_where(old)} and {_where(cls)}")
        self[name] = cls

    def classes(self) -> dict[str, type]:
        """Return every registered class by name, sorted, once the package's modules are imported."""
        if not self._loaded:
            self._loaded = True  # (first: a module imported here may ask again)
            try:
                for module in pkgutil.iter_modules(import_module(self.package).__path__):
                    import_module(f"{self.package}.{module.name}")
            except BaseException:
                self._loaded = False
                raise
        return dict(sorted(self.items()))


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


__all__ = ["Registry"]

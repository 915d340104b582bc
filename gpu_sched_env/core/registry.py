"""Policy registries: the simulators resolve policy names here; the agents fill them in.

Dependencies point down (``core`` <- simulators <- envs; ``agents`` use the simulators), so
a simulator cannot import the heuristics to turn ``"rh"`` into a policy. Instead each
scenario owns a :class:`PolicyRegistry`, and the package that implements the policies
registers them. Registration is discovered through the ``gpu_sched_env.policies`` entry-point
group (declared in ``pyproject.toml``), the standard plug-in mechanism of Python packaging:
the first lookup of an unknown name loads every entry point of the group once. A third-party
package can add its own policies the same way, or call :meth:`PolicyRegistry.register`.

Installed metadata can lag behind the source tree (an editable install made before an entry
point was added), so the plug-ins of this distribution are also listed in
:data:`BUILTIN_PLUGINS` and imported when no entry point of that name is installed; a test
keeps the table equal to ``pyproject.toml``'s.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from gpu_sched_env.core.errors import ConfigError

ENTRY_POINT_GROUP = "gpu_sched_env.policies"
# This distribution's plug-ins: entry-point name -> module (as in pyproject.toml).
BUILTIN_PLUGINS: dict[str, str] = {"cgrsp": "agents.heuristics.cgrsp"}
_loaded = False


def load_plugins() -> None:
    """Import every registered plug-in module once (each registers its policies).

    Entry points first; then each :data:`BUILTIN_PLUGINS` module whose entry point is not
    installed. A built-in plug-in whose package is absent (``agents`` not shipped) is
    skipped: its registry then stays empty and a lookup says so.
    """
    global _loaded
    if _loaded:
        return
    _loaded = True
    seen = set()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()
        seen.add(ep.name)
    for name, module in BUILTIN_PLUGINS.items():
        if name in seen:
            continue
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:  # only the plug-in's own package may be missing
            if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
                raise


_NO_KNOBS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class PolicyEntry:
    """One registered policy: ``factory(params, **knobs)`` builds an instance."""

    name: str
    factory: Callable[..., Any]
    published: bool = True  # False: an extension of ours, kept out of the published tables
    knobs: Mapping[str, Any] = field(default_factory=lambda: _NO_KNOBS)  # knob name -> default


class PolicyRegistry:
    """Name → policy factory table of one scenario."""

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self._entries: dict[str, PolicyEntry] = {}

    def register(self, name: str, factory: Callable[..., Any], *, published: bool = True, knobs: Mapping[str, Any] | None = None) -> None:
        """Add (or replace, idempotently) ``name``; ``knobs`` maps its keyword knobs to their defaults."""
        self._entries[name] = PolicyEntry(name, factory, published, MappingProxyType(dict(knobs or {})))

    def _ensure(self) -> None:
        if not self._entries:
            load_plugins()

    def names(self, published_only: bool = False) -> tuple[str, ...]:
        """Registered names in registration order."""
        self._ensure()
        return tuple(n for n, e in self._entries.items() if e.published or not published_only)

    def entry(self, name: str) -> PolicyEntry:
        """The entry for ``name``; ConfigError listing the known names otherwise."""
        if name not in self._entries:
            load_plugins()
        if name not in self._entries:
            known = ", ".join(self._entries) or "none (is the gpu_sched_env distribution installed?)"
            raise ConfigError(f"policy = {name!r} is not a known {self.scenario} policy; allowed: {known}")
        return self._entries[name]

    def make(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A fresh instance of ``name``."""
        return self.entry(name).factory(*args, **kwargs)

    def __contains__(self, name: object) -> bool:
        self._ensure()
        return name in self._entries


__all__ = ["BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "PolicyEntry", "PolicyRegistry", "load_plugins"]

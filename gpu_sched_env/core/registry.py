"""Policy registries: the simulators resolve policy names here; the agents fill them in.

One factory signature for every scenario::

    POLICIES.make(name, world=None, **knobs)

``world`` is what a policy is built for, fixed for a run and known before it starts: the
registry's :attr:`PolicyRegistry.world` type (CGRSP: the run's
:class:`~gpu_sched_env.cgrsp.params.CGRSPParams`, which its policies check their knobs
against) or ``None`` where a scenario's policies are built without one (HGSP, LLM, MIG, the
edge planners and env policies: what they need arrives with ``reset(state, rng)``). ``knobs``
are the policy's keyword knobs. The registry passes ``world`` to the factory as its first
argument exactly when the scenario declares a world type, so every factory is either
``factory(world, **knobs)`` or ``factory(**knobs)`` and callers never need to know which.

Dependencies point down (``core`` <- simulators <- envs; ``gpu_sched_agents`` use the simulators), so
a simulator cannot import the heuristics to turn ``"rh"`` into a policy. Instead each
scenario owns a :class:`PolicyRegistry` (``gpu_sched_env.<scenario>.policies.POLICIES``), and
the package that implements the policies registers them when it is imported.

Discovery uses the ``gpu_sched_env.policies`` entry-point group (declared in
``pyproject.toml``), the standard plug-in mechanism of Python packaging. An entry point named
``<scenario>`` or ``<scenario>.<anything>`` names a module that registers policies of that
scenario; the first lookup in a scenario's registry imports its plug-ins once. A third-party
package adds policies the same way, or calls :meth:`PolicyRegistry.register` directly.

Entry points are metadata of the *installed* distribution: an editable install made before
a plug-in was declared, or a source checkout on ``PYTHONPATH``, does not list it. So the
project's own plug-in modules (:data:`BUILTIN_PLUGINS`, derived from the scenario table
:mod:`gpu_sched_env.core.scenarios`; a test keeps ``pyproject.toml``'s entry points equal to it)
are also imported when the installed metadata does not name them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from gpu_sched_env.core.errors import ConfigError, check_keys
from gpu_sched_env.core.scenarios import builtin_plugins

ENTRY_POINT_GROUP = "gpu_sched_env.policies"

# scenario -> this project's plug-in module (the scenario table's); equal to pyproject.toml's entry points
BUILTIN_PLUGINS: dict[str, str] = builtin_plugins()

_loaded: set[str] = set()
# module -> why it could not be imported (shown when a name is unknown, never dropped)
_failed: dict[str, str] = {}


def plugin_modules(scenario: str) -> list[str]:
    """Modules that register ``scenario``'s policies: entry points first, then the built-in."""
    mods = [
        ep.value.split(":")[0]
        for ep in entry_points(group=ENTRY_POINT_GROUP)
        if ep.name == scenario or ep.name.startswith(scenario + ".")
    ]
    builtin = BUILTIN_PLUGINS.get(scenario)
    if builtin is not None and builtin not in mods:
        mods.append(builtin)
    return mods


def load_plugins(scenario: str) -> None:
    """Import ``scenario``'s plug-in modules once (each registers its policies).

    A module that cannot be imported (e.g. ``gpu_sched_agents`` is not installed) is recorded, and
    :meth:`PolicyRegistry.entry` names it when a policy is then not found.
    """
    if scenario in _loaded:
        return
    _loaded.add(scenario)  # before importing: a plug-in may itself consult the registry
    for mod in plugin_modules(scenario):
        try:
            _import(mod)
        except ImportError as e:
            _failed[mod] = f"{type(e).__name__}: {e}"


def _import(module: str) -> Any:
    return importlib.import_module(module)  # the one import of a module named by a string (tests/core/test_layers.py)


def load_object(target: str) -> Any:
    """The object ``"module:attr"`` names: a plug-in a higher layer provides (ImportError, AttributeError as raised).

    ``gpu-sched evaluate`` (``gpu_sched_agents.evaluate.cli:main``) and ``module:attr`` policies load this way.
    """
    module, _, attr = target.partition(":")
    return getattr(_import(module), attr)


_NO_KNOBS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class PolicyEntry:
    """One registered policy: ``factory(*args, **knobs)`` builds an instance.

    ``knobs`` maps the policy's keyword knobs to their defaults, where the plug-in declares
    them (CGRSP does: the scenario splits a user's keywords into world parameters and knobs
    with it, and leaves default knobs out of result keys); empty otherwise.
    """

    name: str
    factory: Callable[..., Any]
    published: bool = True  # False: an extension of ours, kept out of the published tables
    knobs: Mapping[str, Any] = field(default_factory=lambda: _NO_KNOBS)  # knob name -> default


class PolicyRegistry:
    """Name → factory table of one scenario's policies (or, with ``kind="planner"``, its planners).

    Args:
        scenario: the scenario whose plug-ins fill the table.
        world: the type of the ``world`` argument of :meth:`make` (passed to every factory
            first), or ``None`` if the scenario's factories take knobs only.
        kind: what the table holds, for messages (``"policy"`` or ``"planner"``).
    """

    def __init__(self, scenario: str, world: type | None = None, kind: str = "policy") -> None:
        self.scenario = scenario
        self.world = world
        self.kind = kind
        self._entries: dict[str, PolicyEntry] = {}

    def register(
        self, name: str, factory: Callable[..., Any], *, published: bool = True, knobs: Mapping[str, Any] | None = None
    ) -> None:
        """Add (or replace, idempotently) ``name``; ``knobs`` maps its keyword knobs to their defaults."""
        self._entries[name] = PolicyEntry(name, factory, published, MappingProxyType(dict(knobs or {})))

    def _ensure(self) -> None:
        load_plugins(self.scenario)

    def names(self, published_only: bool = False) -> tuple[str, ...]:
        """Registered names in registration order (``published_only``: without extensions)."""
        self._ensure()
        return tuple(n for n, e in self._entries.items() if e.published or not published_only)

    def entry(self, name: str) -> PolicyEntry:
        """The entry for ``name``; ConfigError listing the known names otherwise."""
        self._ensure()
        if name not in self._entries:
            known = ", ".join(self._entries) or "none"
            why = "".join(
                f"; plug-in {m} failed to import ({e})"
                for m, e in _failed.items()
                if m in plugin_modules(self.scenario)
            )
            kinds = "planners" if self.kind == "planner" else "policies"
            raise ConfigError(f"{self.kind} = {name!r} is not known; allowed: {known} ({self.scenario} {kinds}){why}")
        return self._entries[name]

    def make(self, name: str, world: Any = None, /, **knobs: Any) -> Any:
        """A fresh instance of ``name`` built for ``world`` with ``knobs`` (see the module doc).

        Raises:
            ConfigError: unknown name; ``world`` missing or of the wrong type where the
                scenario has a world type, given where it has none; a knob the factory does
                not take (naming the ones it does) or a value it rejects.
        """
        factory = self.entry(name).factory
        if self.world is None:
            if world is not None:
                raise ConfigError(
                    f"world = {world!r} is not taken by {self.scenario} {self.kind} {name!r}; "
                    f"allowed: None ({self.scenario} {self.kind} factories take knobs only)"
                )
            args: tuple[Any, ...] = ()
        else:
            if not isinstance(world, self.world):
                raise ConfigError(
                    f"world = {world!r} is not valid for {self.scenario} {self.kind} {name!r}; "
                    f"allowed: a {self.world.__name__}"
                )
            args = (world,)
        sig = inspect.signature(factory)
        kinds = {p.kind for p in sig.parameters.values()}
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            named = [n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][
                len(args) :
            ]
            check_keys(knobs, named, section=f"{name} parameters")
        try:
            sig.bind(*args, **knobs)
        except TypeError as e:
            raise ConfigError(f"{self.scenario} {self.kind} {name!r}: {e}") from None
        return factory(*args, **knobs)

    def __contains__(self, name: object) -> bool:
        self._ensure()
        return name in self._entries

    def __iter__(self):
        """Iterate over the registered names."""
        return iter(self.names())


__all__ = ["BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "PolicyEntry", "PolicyRegistry", "load_plugins", "plugin_modules"]

"""Discover strategy plugins through entry points, each loaded inside its own guard.

A plugin that fails to import, raises in its hook, or returns something that is not a list
of strategies is recorded as `broken` with its error; every other plugin still works. Each
plugin's load time (its import and its hook) is recorded, and one slower than
`SLOW_LOAD_MS` is logged as a warning: every command pays for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from typing import Literal, cast

import pluggy
from pydantic import BaseModel

from . import hookspecs
from .config import Settings, default_config_toml, disabled_plugins
from .errors import ConfigError
from .logs import logger
from .strategy import ContextStrategy

PluginStatus = Literal["ok", "broken", "disabled"]

#: A plugin taking longer than this to load (import and hook) is logged as a warning.
SLOW_LOAD_MS = 1000.0


@dataclass(frozen=True)
class PluginInfo:
    """One plugin (entry point) and what became of it."""

    name: str
    distribution: str
    version: str
    status: PluginStatus
    error: str = ""
    strategies: tuple[str, ...] = ()
    load_ms: float = 0.0  # its import (for an entry point) and its hook; 0 when not loaded

    @property
    def label(self) -> str:
        """`distribution version`, as provenance shows it."""
        return f"{self.distribution} {self.version}".strip()


@dataclass(frozen=True)
class RegisteredStrategy:
    """A strategy and the plugin that registered it."""

    strategy: ContextStrategy
    plugin: PluginInfo


def _contract_error(candidate: object) -> str | None:
    """Why `candidate` is not a ContextStrategy, or None when it is one."""
    for attribute, kind in (
        ("name", str),
        ("quality", float | int),
        ("required_backends", frozenset),
    ):
        value = getattr(candidate, attribute, None)
        if not isinstance(value, kind):
            return f"{type(candidate).__name__}.{attribute} must be a {kind}, got {value!r}"
    quality = float(getattr(candidate, "quality"))  # noqa: B009 - checked above
    if not 0.0 <= quality <= 1.0:
        return f"{type(candidate).__name__}.quality must be within [0, 1], got {quality}"
    for method in ("can_handle", "retrieve", "explain"):
        if not callable(getattr(candidate, method, None)):
            return f"{type(candidate).__name__} has no {method}() method"
    return None


class StrategyRegistry:
    """Every plugin found, and the strategies of those that loaded."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._manager.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.strategies: dict[str, RegisteredStrategy] = {}

    @classmethod
    def discover(
        cls, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> StrategyRegistry:
        """Load every entry point of `contextpipe.strategies` that config allows."""
        registry = cls(settings)
        denied = disabled_plugins(settings, environ)
        allowed = frozenset(settings.plugins.allow)
        found = sorted(entry_points(group=hookspecs.ENTRY_POINT_GROUP), key=lambda ep: ep.name)
        for entry_point in _unique(found):
            started = time.perf_counter()
            distribution, version = _distribution(entry_point)
            if entry_point.name in denied or (allowed and entry_point.name not in allowed):
                registry.plugins.append(
                    PluginInfo(
                        entry_point.name,
                        distribution,
                        version,
                        "disabled",
                        "disabled by configuration",
                    )
                )
                continue
            try:
                plugin = entry_point.load()
            except Exception as exc:  # a broken plugin must not take the others down
                error = f"import failed: {type(exc).__name__}: {exc}"
                info = PluginInfo(entry_point.name, distribution, version, "broken", error)
                registry.plugins.append(_timed(info, started))
                continue
            registry.register(plugin, entry_point.name, distribution, version, started=started)
        return registry

    def register(
        self,
        plugin: object,
        name: str,
        distribution: str = "",
        version: str = "",
        *,
        started: float | None = None,
    ) -> PluginInfo:
        """Register a plugin object (a module or instance with hook implementations).
        `started` is when loading it began (`time.perf_counter()`, before its import); its
        load time counts from then, else from now.
        """
        since = time.perf_counter() if started is None else started
        info = self._load(plugin, name, distribution or name, version, since)
        self.plugins.append(info)
        return info

    def _load(
        self, plugin: object, name: str, distribution: str, version: str, started: float
    ) -> PluginInfo:
        def broken(error: str) -> PluginInfo:
            return _timed(PluginInfo(name, distribution, version, "broken", error), started)

        try:
            self._manager.register(plugin, name=name)
        except Exception as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return broken(f"registration failed: {type(exc).__name__}: {first_line}")
        others = [p for p in self._manager.get_plugins() if p is not plugin]
        caller = self._manager.subset_hook_caller("contextpipe_strategies", others)
        if not caller.get_hookimpls():
            self._manager.unregister(plugin)
            return broken("defines no contextpipe_strategies hook")
        try:
            results: list[object] = caller(settings=self._settings)
        except ConfigError:
            self._manager.unregister(plugin)
            raise  # the user's settings are at fault, not the plugin: stop and name the key
        except Exception as exc:
            self._manager.unregister(plugin)
            return broken(f"contextpipe_strategies raised {type(exc).__name__}: {exc}")
        if not results:  # pluggy drops a None result
            self._manager.unregister(plugin)
            return broken("contextpipe_strategies returned None, not a list of strategies")
        strategies: list[ContextStrategy] = []
        for result in results:
            if not isinstance(result, Iterable) or isinstance(result, str | bytes):
                self._manager.unregister(plugin)
                return broken(
                    f"contextpipe_strategies returned {result!r}, not a list of strategies"
                )
            for strategy in cast(Iterable[object], result):
                if (error := _contract_error(strategy)) is not None:
                    self._manager.unregister(plugin)
                    return broken(error)
                strategies.append(cast(ContextStrategy, strategy))
        clashes = [s.name for s in strategies if s.name in self.strategies]
        if clashes:
            self._manager.unregister(plugin)
            owner = self.strategies[clashes[0]].plugin.name
            return broken(f"strategy {clashes[0]!r} is already registered by plugin {owner!r}")
        provided = tuple(s.name for s in strategies)
        info = _timed(PluginInfo(name, distribution, version, "ok", "", provided), started)
        for strategy in strategies:
            self.strategies[strategy.name] = RegisteredStrategy(strategy, info)
        return info

    def get(self, name: str) -> RegisteredStrategy | None:
        """The registered strategy called `name`."""
        return self.strategies.get(name)


def commented_default_config() -> str:
    """The default config.toml, with the options of every strategy installed here: what
    `contextpipe config init` writes.
    """
    registry = StrategyRegistry.discover(Settings())
    options: dict[str, BaseModel | None] = {}
    for name, registered in registry.strategies.items():
        model = getattr(registered.strategy, "options", None)
        options[name] = model if isinstance(model, BaseModel) else None
    return default_config_toml(options)


def _timed(info: PluginInfo, started: float) -> PluginInfo:
    """`info` with its load time since `started`; a slow one is logged as a warning."""
    load_ms = round((time.perf_counter() - started) * 1000, 1)
    if load_ms > SLOW_LOAD_MS:
        # Every command waits for it: say which plugin it is.
        logger.warning(
            "slow plugin",
            plugin=info.name,
            distribution=info.distribution,
            load_ms=load_ms,
            threshold_ms=SLOW_LOAD_MS,
        )
    return replace(info, load_ms=load_ms)


def _unique(found: Iterable[EntryPoint]) -> Iterable[EntryPoint]:
    """The same distribution can be visible twice on sys.path (editable installs)."""
    seen: set[str] = set()
    for entry_point in found:
        if entry_point.name not in seen:
            seen.add(entry_point.name)
            yield entry_point


def _distribution(entry_point: EntryPoint) -> tuple[str, str]:
    dist = entry_point.dist
    if dist is None:
        return entry_point.module, ""
    return dist.name, dist.version

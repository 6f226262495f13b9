"""Discover plugins through entry points, each loaded inside its own guard: strategies
(`contextpipe.strategies`), store backends (`contextpipe.stores`) and embedders
(`contextpipe.embedders`). Of the last two only the configured one is imported.

A plugin that fails to import, raises in its hook (anything: its exceptions are its own),
or returns something that is not a list of what its hook promises is recorded as `broken`
with its error; every other plugin still works. Each plugin's load time (its import and its
hook) is recorded, and one slower than `SLOW_LOAD_MS` is logged as a warning: every
command pays for it. Every command loads every strategy plugin, so one that is not built
in loads on a thread of its own, and one still loading after `[plugins] load_timeout_ms`
is left out, `broken` (its thread is abandoned, as a hung strategy's is). Built-in plugins
are contextpipe's own code: they are loaded where they are asked for, and never reported
as slow (on a busy machine any import is slow).
"""

from __future__ import annotations

import functools
import inspect
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import pluggy
from pydantic import BaseModel

from .config import Settings, default_config_toml, disabled_plugins
from .contract import hookspecs
from .contract.embedding import Embedder
from .contract.store import Store, StoreBackend
from .contract.strategy import ContextStrategy
from .core.errors import ConfigError, ContextpipeError, StoreError, described
from .core.logs import logger

_T = TypeVar("_T")

PluginStatus = Literal["ok", "broken", "disabled"]

#: A plugin taking longer than this to load (import and hook) is logged as a warning.
SLOW_LOAD_MS = 1000.0

#: What plugins' load times are read from (a test gives it the clock of a busy machine).
_clock = time.perf_counter


@dataclass(frozen=True)
class PluginInfo:
    """One plugin (entry point) and what became of it."""

    name: str
    distribution: str
    version: str
    status: PluginStatus
    error: str = ""
    provides: tuple[str, ...] = ()  # the names of its strategies, or of its store backends
    load_ms: float = 0.0  # its import (for an entry point) and its hook; 0 when not loaded
    built_in: bool = False  # contextpipe's own code

    @property
    def slow(self) -> bool:
        """Whether it took longer than `SLOW_LOAD_MS` to load, not being built in."""
        return not self.built_in and self.load_ms > SLOW_LOAD_MS

    @property
    def label(self) -> str:
        """`distribution version`, as provenance shows it."""
        return f"{self.distribution} {self.version}".strip()


@dataclass(frozen=True)
class RegisteredStrategy:
    """A strategy and the plugin that registered it."""

    strategy: ContextStrategy
    plugin: PluginInfo

    @property
    def default_weight(self) -> float:
        """The weight it runs with when `[strategies.NAME] weight` is unset: the
        strategy's own `default_weight` (checked when it registered), else 1.
        """
        return float(getattr(self.strategy, "default_weight", DEFAULT_WEIGHT))


#: The weight of a strategy that declares no `default_weight` and is given none in config.
DEFAULT_WEIGHT = 1.0


def _strategy_error(candidate: object) -> str | None:
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
    weight = getattr(candidate, "default_weight", DEFAULT_WEIGHT)
    if (
        not isinstance(weight, float | int)
        or isinstance(weight, bool)
        or not math.isfinite(weight)
        or weight < 0
    ):
        return (
            f"{type(candidate).__name__}.default_weight must be a finite number >= 0,"
            f" got {weight!r}"
        )
    return None


def _store_error(candidate: object) -> str | None:
    """Why `candidate` is not a StoreBackend, or None when it is one."""
    if not isinstance(getattr(candidate, "name", None), str):
        return f"{type(candidate).__name__}.name must be a str"
    if not callable(getattr(candidate, "open", None)):
        return f"{type(candidate).__name__} has no open() method"
    return None


def _embedder_error(candidate: object) -> str | None:
    """Why `candidate` is not an Embedder, or None when it is one. `space` is only looked
    up, not read: reading it may load the weights.
    """
    kind = type(candidate).__name__
    if not isinstance(getattr(candidate, "name", None), str):
        return f"{kind}.name must be a str"
    dimension = getattr(candidate, "dimension", None)
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        return f"{kind}.dimension must be a positive int, got {dimension!r}"
    if inspect.getattr_static(candidate, "space", None) is None:
        return f"{kind} has no space"
    for method in ("load", "embed"):
        if not callable(getattr(candidate, method, None)):
            return f"{kind} has no {method}() method"
    return None


@dataclass(frozen=True)
class _Hook:
    """One kind of plugin: its hook, what the hook returns, and how to check each item."""

    name: str
    provides: str
    noun: str
    contract: Callable[[object], str | None]


_STRATEGIES = _Hook("contextpipe_strategies", "strategies", "strategy", _strategy_error)
_STORES = _Hook("contextpipe_stores", "store backends", "store backend", _store_error)
_EMBEDDERS = _Hook("contextpipe_embedders", "embedders", "embedder", _embedder_error)


class _LoadError(Exception):
    """Why a plugin is broken."""


class _PluginLoader:
    """Registers plugins for one hook, each in its own guard, and collects what they
    provide by name.
    """

    def __init__(self, hook: _Hook, arguments: Mapping[str, Any]) -> None:
        self._hook = hook
        self._arguments = dict(arguments)
        self.plugins: list[PluginInfo] = []
        self.provided: dict[str, tuple[object, PluginInfo]] = {}

    def discover(self, group: str, settings: Settings, environ: Mapping[str, str] | None) -> None:
        """Load every entry point of `group` that config allows: those not built in all at
        once, each on a thread of its own, and left out when still loading
        `[plugins] load_timeout_ms` after the first started (so that two slow plugins cost
        every command one bound, not two).
        """
        denied = disabled_plugins(settings, environ)
        allowed = frozenset(settings.plugins.allow)
        bound_ms = settings.plugins.load_timeout_ms
        found = sorted(entry_points(group=group), key=lambda ep: ep.name)
        started = _clock()
        # Each entry point: disabled (False), built in (None), or its load, started now.
        loads: list[tuple[EntryPoint, Future[tuple[object, list[object]]] | bool | None]] = []
        for entry_point in _unique(found):
            if entry_point.name in denied or (allowed and entry_point.name not in allowed):
                loads.append((entry_point, False))
            else:
                start = not _built_in(entry_point)
                loads.append((entry_point, self._start(entry_point) if start else None))
        for entry_point, loading in loads:
            if loading is False:
                info = replace(_about(entry_point), status="disabled")
                self.plugins.append(replace(info, error="disabled by configuration"))
            elif isinstance(loading, Future):
                self._finish(entry_point, loading, started, bound_ms)
            else:
                self.load(entry_point)

    def load(self, entry_point: EntryPoint, bound_ms: int | None = None) -> PluginInfo:
        """Import one entry point's plugin and register it, inside the guard. Given
        `bound_ms`, a plugin not built in is imported, and its hook called, on a thread of
        its own; one still loading by then is left out, broken.
        """
        if bound_ms is not None and not _built_in(entry_point):
            return self._finish(entry_point, self._start(entry_point), _clock(), bound_ms)
        started = _clock()
        about = _about(entry_point)
        try:
            plugin = entry_point.load()
        except Exception as exc:  # a broken plugin must not take the others down
            return self._done(_broken(about, f"import failed: {described(exc)}"), started)
        return self._register(plugin, about, started)

    def _start(self, entry_point: EntryPoint) -> Future[tuple[object, list[object]]]:
        """The plugin's import and hook, started on a thread of its own."""
        call = functools.partial(self._provide, entry_point)
        return _on_own_thread(call, f"contextpipe-load-{entry_point.name}")

    def _finish(
        self,
        entry_point: EntryPoint,
        loading: Future[tuple[object, list[object]]],
        started: float,
        bound_ms: int,
    ) -> PluginInfo:
        """What became of a load started at `started`, waited for until `bound_ms` after."""
        about = _about(entry_point)
        try:
            _, results = loading.result(timeout=max(0.0, started + bound_ms / 1000 - _clock()))
        except TimeoutError:
            error = (
                f"left out: still loading after {bound_ms} ms (its import and its hook);"
                " every command would wait for it"
            )
            return self._done(_broken(about, error), started)
        except _LoadError as exc:
            return self._done(_broken(about, str(exc)), started)
        return self._collect(about, results, started)

    def register(
        self, plugin: object, name: str, distribution: str = "", version: str = ""
    ) -> PluginInfo:
        """Register a plugin object (a module or instance with hook implementations)."""
        about = PluginInfo(name, distribution or name, version, "ok")
        return self._register(plugin, about, _clock())

    def _register(self, plugin: object, about: PluginInfo, started: float) -> PluginInfo:
        try:
            results = self._results(plugin, about.name)
        except _LoadError as exc:
            return self._done(_broken(about, str(exc)), started)
        return self._collect(about, results, started)

    def _provide(self, entry_point: EntryPoint) -> tuple[object, list[object]]:
        """On a thread of its own: the plugin and what its hook returned. Whatever it
        raises is its own (`KeyboardInterrupt` too: the user's Ctrl-C interrupts the main
        thread); a `ConfigError` is the user's, and stops the command.
        """
        try:
            plugin = entry_point.load()
        except BaseException as exc:
            raise _LoadError(f"import failed: {described(exc)}") from None
        try:
            return plugin, self._results(plugin, entry_point.name)
        except (_LoadError, ConfigError):
            raise
        except BaseException as exc:
            raise _LoadError(f"{self._hook.name} raised {described(exc)}") from None

    def _results(self, plugin: object, name: str) -> list[object]:
        """What the plugin's hook returns, called in a plugin manager of its own; a
        `_LoadError` says why there is nothing.
        """
        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        try:
            manager.register(plugin, name=name)
        except Exception as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise _LoadError(f"registration failed: {type(exc).__name__}: {first_line}") from None
        caller = getattr(manager.hook, self._hook.name)
        if not caller.get_hookimpls():
            raise _LoadError(f"defines no {self._hook.name} hook")
        try:
            return caller(**self._arguments)
        except ConfigError:
            raise  # the user's settings are at fault, not the plugin: stop and name the key
        except Exception as exc:
            raise _LoadError(f"{self._hook.name} raised {described(exc)}") from None

    def _collect(self, about: PluginInfo, results: list[object], started: float) -> PluginInfo:
        """Check what a plugin's hook returned, and keep what it provides by name."""
        hook, provides = self._hook.name, self._hook.provides
        if any(info.name == about.name and info.status == "ok" for info in self.plugins):
            error = f"registration failed: a plugin named {about.name!r} is registered already"
            return self._done(_broken(about, error), started)
        if not results:  # pluggy drops a None result
            return self._done(
                _broken(about, f"{hook} returned None, not a list of {provides}"), started
            )
        items: list[object] = []
        for result in results:
            if not isinstance(result, Iterable) or isinstance(result, str | bytes):
                error = f"{hook} returned {result!r}, not a list of {provides}"
                return self._done(_broken(about, error), started)
            for item in cast(Iterable[object], result):
                if (error := self._hook.contract(item)) is not None:
                    return self._done(_broken(about, error), started)
                items.append(item)
        names = [str(getattr(item, "name")) for item in items]  # noqa: B009 - checked
        clashes = [n for n in names if n in self.provided]
        if clashes:
            owner = self.provided[clashes[0]][1].name
            error = f"{self._hook.noun} {clashes[0]!r} is already registered by plugin {owner!r}"
            return self._done(_broken(about, error), started)
        info = self._done(replace(about, provides=tuple(names)), started)
        for item_name, item in zip(names, items, strict=True):
            self.provided[item_name] = (item, info)
        return info

    def _done(self, info: PluginInfo, started: float) -> PluginInfo:
        """`info` with its load time since `started`, kept; a slow one is logged."""
        load_ms = round((_clock() - started) * 1000, 1)
        info = replace(info, load_ms=load_ms)
        if info.slow:
            # Every command waits for it: say which plugin it is.
            logger.warning(
                "slow plugin",
                plugin=info.name,
                distribution=info.distribution,
                load_ms=load_ms,
                threshold_ms=SLOW_LOAD_MS,
            )
        self.plugins.append(info)
        return info


def _on_own_thread(call: Callable[[], _T], name: str) -> Future[_T]:
    """`call()` on a daemon thread of its own, started now: its future, to wait on for as
    long as the caller likes. A call still running when its caller stops waiting keeps its
    thread, which holds up no exit.
    """
    future: Future[_T] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(call())
        except BaseException as exc:  # the caller's, to judge
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def _built_in(entry_point: EntryPoint) -> bool:
    """Whether the plugin is contextpipe's own code."""
    return entry_point.module.partition(".")[0] == __package__


def _about(entry_point: EntryPoint) -> PluginInfo:
    """The plugin an entry point names, before it is loaded."""
    distribution, version = _distribution(entry_point)
    return PluginInfo(
        entry_point.name, distribution, version, "ok", built_in=_built_in(entry_point)
    )


def _broken(about: PluginInfo, error: str) -> PluginInfo:
    return replace(about, status="broken", error=error)


class StrategyRegistry:
    """Every strategy plugin found, and the strategies of those that loaded."""

    def __init__(self, settings: Settings) -> None:
        self._loader = _PluginLoader(_STRATEGIES, {"settings": settings})
        self.plugins = self._loader.plugins
        self.strategies: dict[str, RegisteredStrategy] = {}

    @classmethod
    def discover(
        cls, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> StrategyRegistry:
        """Load every entry point of `contextpipe.strategies` that config allows."""
        registry = cls(settings)
        registry._loader.discover(hookspecs.ENTRY_POINT_GROUP, settings, environ)
        registry._collect()
        return registry

    def register(
        self, plugin: object, name: str, distribution: str = "", version: str = ""
    ) -> PluginInfo:
        """Register a plugin object (a module or instance with hook implementations) in
        process, in the same guard as an entry point's.
        """
        info = self._loader.register(plugin, name, distribution, version)
        self._collect()
        return info

    def _collect(self) -> None:
        for name, (strategy, info) in self._loader.provided.items():
            if name not in self.strategies:
                self.strategies[name] = RegisteredStrategy(cast(ContextStrategy, strategy), info)

    def get(self, name: str) -> RegisteredStrategy | None:
        """The registered strategy called `name`."""
        return self.strategies.get(name)


class _ChosenPlugin:
    """The installed plugins of one entry-point group whose entry points are named like
    what they provide; only the one asked for is imported (`choose`).
    """

    def __init__(self, hook: _Hook, group: str) -> None:
        self._hook = hook
        found = sorted(entry_points(group=group), key=lambda e: e.name)
        self._entry_points = {entry_point.name: entry_point for entry_point in _unique(found)}

    @property
    def installed(self) -> list[str]:
        """The names of the installed plugins, sorted."""
        return list(self._entry_points)

    def choose(self, name: str, key: str | None, arguments: Mapping[str, Any]) -> object:
        """What plugin `name` provides under its own name. An unknown name, or a plugin
        that is broken or does not provide `name`, is a `ConfigError` of one line, on `key`
        (the setting that named it) when there is one.
        """
        noun = self._hook.noun
        where = f"{key}: " if key else ""
        entry_point = self._entry_points.get(name)
        if entry_point is None:
            installed = ", ".join(self.installed) or "none"
            raise ConfigError(f"{where}unknown {noun} {name!r}; installed: {installed}", key)
        loader = _PluginLoader(self._hook, arguments)
        info = loader.load(entry_point)
        if info.status != "ok":
            raise ConfigError(f"{where}{noun} {name!r} is broken: {info.error}", key)
        provided = loader.provided.get(name)
        if provided is None:
            provides = ", ".join(info.provides)
            raise ConfigError(f"{where}plugin {name!r} provides {provides}, not {name!r}", key)
        return provided[0]


class StoreRegistry:
    """The store plugins installed (entry-point group `contextpipe.stores`, each entry point
    named like the backend it provides). Only the one `[store] backend` names is loaded.
    """

    def __init__(self) -> None:
        self._plugins = _ChosenPlugin(_STORES, hookspecs.STORE_ENTRY_POINT_GROUP)

    @property
    def installed(self) -> list[str]:
        """The names of the installed backends."""
        return self._plugins.installed

    def open(self, settings: Settings, project_dir: Path) -> Store:
        """The store of the backend `[store] backend` names. An unknown name, or a plugin
        that is broken or does not provide that backend, is a `ConfigError` on that key.
        """
        name = settings.store.backend
        backend = cast(StoreBackend, self._plugins.choose(name, "store.backend", {}))
        try:
            return backend.open(settings, project_dir)
        except ContextpipeError:
            raise
        except Exception as exc:  # a backend's own failure, in one line that names it
            first_line = (str(exc).strip().splitlines() or [""])[0]
            raise StoreError(
                f"store backend {name!r} failed to open: {type(exc).__name__}: {first_line}"
            ) from None


class EmbedderRegistry:
    """The embedder plugins installed (entry-point group `contextpipe.embedders`, each entry
    point named like the embedder it provides). Only the one asked for is loaded, and
    constructing it reads no weights.
    """

    def __init__(self) -> None:
        self._plugins = _ChosenPlugin(_EMBEDDERS, hookspecs.EMBEDDER_ENTRY_POINT_GROUP)

    @property
    def installed(self) -> list[str]:
        """The names of the installed embedders, sorted."""
        return self._plugins.installed

    def embedder(self, settings: Settings, name: str | None = None) -> Embedder:
        """The embedder called `name`, by default the one `[embedding] model` names. An
        unknown name, or a plugin that is broken or does not provide it, is a `ConfigError`
        (on `embedding.model` when the name came from there).
        """
        key = "embedding.model" if name is None else None
        chosen = settings.embedding.model if name is None else name
        return cast(Embedder, self._plugins.choose(chosen, key, {"settings": settings}))


def commented_default_config() -> str:
    """The default config.toml, with the default weight and the options of every strategy
    installed here: what `contextpipe config init` writes.
    """
    registry = StrategyRegistry.discover(Settings())
    options: dict[str, BaseModel | None] = {}
    weights: dict[str, float] = {}
    for name, registered in registry.strategies.items():
        model = getattr(registered.strategy, "options", None)
        options[name] = model if isinstance(model, BaseModel) else None
        weights[name] = registered.default_weight
    return default_config_toml(options, weights)


def _unique(found: Iterable[EntryPoint]) -> Iterator[EntryPoint]:
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

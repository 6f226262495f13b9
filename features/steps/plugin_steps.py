"""Steps for plugins: registered in code, installed as packages, allowed and denied."""

from __future__ import annotations

import itertools
from pathlib import Path

from behave import given, then, when
from behave.runner import Context
from structlog.testing import capture_logs
from testkit import (
    ScriptedStrategy,
    StrategiesPlugin,
    install_distribution,
    pipeline,
    plugin_of,
    propose,
    require_closed_pipeline,
)

from contextpipe import Backends, ContextpipeError, ContextRequest, plugins
from contextpipe.config import load_settings
from contextpipe.plugins import PluginInfo, StrategyRegistry


class _NoRetrieve:
    """Looks like a strategy, but cannot retrieve anything."""

    name = "half-done"
    quality = 0.5
    required_backends = frozenset[str]()

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0

    def explain(self) -> str:
        return "forgot to implement retrieve"


class _Nameless(_NoRetrieve):
    name = None  # type: ignore[assignment]


class _NoHook:
    """A plugin object with no hook implementation."""

    def contextpipe_strategies(self) -> list[object]:  # not marked with @hookimpl
        return []


def _raising(error: str, message: str) -> StrategiesPlugin:
    exception = {"RuntimeError": RuntimeError, "ImportError": ImportError}[error]

    def provide() -> object:
        raise exception(message)

    return StrategiesPlugin(provide)


_MISBEHAVIOURS: dict[str, object] = {
    'raises RuntimeError "catalogue offline"': _raising("RuntimeError", "catalogue offline"),
    'returns the string "handbook"': StrategiesPlugin(lambda: "handbook"),
    "returns the number 42": StrategiesPlugin(lambda: 42),
    "returns a strategy without a retrieve method": plugin_of([_NoRetrieve()]),
    "returns a strategy without a name": plugin_of([_Nameless()]),
    "returns a strategy of quality 1.5": plugin_of(
        [ScriptedStrategy("too-good", propose([]), quality=1.5)]
    ),
    "defines no hook at all": _NoHook(),
    "returns nothing": StrategiesPlugin(lambda: None),
}


@given('a plugin "{name}" that {misbehaviour}')
def misbehaving_plugin(context: Context, name: str, misbehaviour: str) -> None:
    pipeline(context).registry.register(_MISBEHAVIOURS[misbehaviour], name)


@given('another plugin "{name}" also provides a strategy called "{strategy}"')
def clashing_plugin(context: Context, name: str, strategy: str) -> None:
    pipeline(context).registry.register(plugin_of([ScriptedStrategy(strategy, propose([]))]), name)


_DEMO_PLUGIN = '''\
"""A third-party strategy plugin, as a package would ship it."""

from contextpipe import Candidate, ContextFragment, SourceRef, get_tokenizer, hookimpl
from contextpipe.core.models import content_hash, fragment_id

TEXT = "The demo plugin knows that budgets are split by weight."
URI = "uko://doc/demo/notes.md#demo"


class DemoStrategy:
    name = "{strategy}"
    quality = 0.5
    required_backends = frozenset()

    def can_handle(self, request, backends):
        return 1.0

    def retrieve(self, request, backends, budget):
        fragment = ContextFragment(
            id=fragment_id(URI, 9),
            uko_uri=URI,
            detail_depth=9,
            text=TEXT,
            token_count=get_tokenizer("o200k_base").count(TEXT),
            source=SourceRef(uri=URI, path="demo/notes.md", start_line=1, end_line=1, kind="note"),
            content_hash=content_hash(TEXT),
        )
        return [Candidate(fragment=fragment, score=1.0, reason="the demo always answers")]

    def explain(self):
        return "a demonstration"


@hookimpl
def contextpipe_strategies(settings):
    return [DemoStrategy()]
'''


@given(
    'the installed package "{distribution}" provides the strategy "{strategy}"'
    " through its entry point"
)
def installed_plugin(context: Context, distribution: str, strategy: str) -> None:
    module = distribution.replace("-", "_") + "_module"
    install_distribution(
        context, distribution, module, _DEMO_PLUGIN.replace("{strategy}", strategy)
    )


@given(
    'the installed package "{distribution}" takes {import_s:g} seconds to import and'
    ' {hook_s:g} seconds in its hook to provide the strategy "{strategy}"'
)
def installed_slow_plugin(
    context: Context, distribution: str, import_s: float, hook_s: float, strategy: str
) -> None:
    module = distribution.replace("-", "_") + "_module"
    source = _DEMO_PLUGIN.replace("{strategy}", strategy)
    source = source.replace(
        "    return [DemoStrategy()]", f"    time.sleep({hook_s})\n    return [DemoStrategy()]"
    )
    install_distribution(
        context, distribution, module, f"import time\ntime.sleep({import_s})\n{source}"
    )


@given(
    'the installed packages "{first}" and "{second}", whose first one\'s import waits up to'
    " {seconds:d} seconds for the second one's import to start"
)
def plugins_waiting_for_each_other(context: Context, first: str, second: str, seconds: int) -> None:
    """Two plugins that load only when both load at once: the first (in name order) waits
    for a file the second's import writes.
    """
    signal = context.tmp / f"{second}.started"
    for distribution, prelude in (
        (
            first,
            f"import pathlib, time\nsignal = pathlib.Path({str(signal)!r})\n"
            f"for _ in range({seconds * 100}):\n"
            "    if signal.exists():\n        break\n    time.sleep(0.01)\n",
        ),
        (second, f"import pathlib\npathlib.Path({str(signal)!r}).touch()\n"),
    ):
        module = distribution.replace("-", "_") + "_module"
        strategy = distribution.removeprefix("cp-")
        source = prelude + _DEMO_PLUGIN.replace("{strategy}", strategy)
        install_distribution(context, distribution, module, source)


@given('the installed package "{distribution}" fails to import with {error} "{message}"')
def installed_broken_plugin(context: Context, distribution: str, error: str, message: str) -> None:
    module = distribution.replace("-", "_") + "_module"
    install_distribution(context, distribution, module, f"raise {error}({message!r})\n")


# A store plugin of its own: the embedded store under another name, opened as any other.
_MIRROR_STORE = """
from pathlib import Path

from contextpipe import hookimpl
from contextpipe.stores.embedded.backend import EmbeddedStore


class MirrorBackend:
    name = "{backend}"

    def open(self, settings, project_dir):
        return EmbeddedStore(Path(project_dir) / ".mirror-store")


@hookimpl
def contextpipe_stores():
    return [MirrorBackend()]
"""


@given('the installed store plugin "{distribution}" provides the backend "{backend}"')
def installed_store(context: Context, distribution: str, backend: str) -> None:
    module = distribution.replace("-", "_") + "_module"
    source = _MIRROR_STORE.replace("{backend}", backend)
    install_distribution(context, distribution, module, source, "contextpipe.stores")


@given('the installed store plugin "{distribution}" fails to open with {error} "{message}"')
def installed_failing_store(context: Context, distribution: str, error: str, message: str) -> None:
    module = distribution.replace("-", "_") + "_module"
    source = _MIRROR_STORE.replace("{backend}", distribution).replace(
        "        return EmbeddedStore(",
        f"        raise {error}({message!r})\n        return EmbeddedStore(",
    )
    install_distribution(context, distribution, module, source, "contextpipe.stores")


@then('opening the pipeline fails with {error} saying "{words}"')
def opening_fails(context: Context, error: str, words: str) -> None:
    try:
        pipeline(context)
    except ContextpipeError as exc:
        assert type(exc).__name__ == error, f"{type(exc).__name__}: {exc}"
        assert "\n" not in str(exc) and words in str(exc), str(exc)
    else:
        raise AssertionError("the pipeline opened")


@given('the installed store plugin "{distribution}" fails to import with {error} "{message}"')
def installed_broken_store(context: Context, distribution: str, error: str, message: str) -> None:
    module = distribution.replace("-", "_") + "_module"
    source = f"raise {error}({message!r})\n"
    install_distribution(context, distribution, module, source, "contextpipe.stores")


@then('the store is in the project folder "{folder}"')
def store_folder(context: Context, folder: str) -> None:
    location = Path(pipeline(context).stats().location)
    assert location == (context.project / folder).resolve(), location
    assert pipeline(context).stats().fragments > 0, pipeline(context).stats()


@when("the plugins are discovered")
def plugins_discovered(context: Context) -> None:
    pipeline(context)


@when("the plugins are discovered while capturing the log")
def plugins_discovered_capturing(context: Context) -> None:
    with capture_logs() as events:
        pipeline(context)
    context.log_events = list(events)


@given(
    "plugins' load times are read from a clock that runs {seconds:g} seconds ahead at every reading"
)
def busy_clock(context: Context, seconds: float) -> None:
    require_closed_pipeline(context, "the clock")
    readings = itertools.count()
    real = plugins._clock  # the seam plugin loading reads its clock through
    plugins._clock = lambda: real() + seconds * next(readings)
    context.add_cleanup(setattr, plugins, "_clock", real)


@then("no built-in plugin is marked slow")
def built_ins_not_slow(context: Context) -> None:
    built_in = [p for p in pipeline(context).plugins if p.distribution == "contextpipe"]
    assert built_in and all(p.built_in for p in built_in), built_in
    slow = [(p.name, p.load_ms) for p in built_in if p.slow]
    assert not slow, f"built-in plugins marked slow: {slow}"
    assert all(p.load_ms >= 1500 for p in built_in), "the clock did not run ahead"


@then('the plugin "{name}" took at least {milliseconds:d} ms to load')
def plugin_load_time(context: Context, name: str, milliseconds: int) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    assert plugin.load_ms >= milliseconds, plugin


@then('the log warns that the plugin "{name}" is slow, with its load time')
def slow_plugin_warned(context: Context, name: str) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    warnings = [e for e in context.log_events if e["event"] == "slow plugin"]
    assert [(e["log_level"], e["plugin"], e["load_ms"]) for e in warnings] == [
        ("warning", name, plugin.load_ms)
    ], warnings


def _plugin(plugins: list[PluginInfo], name: str) -> PluginInfo:
    found = [plugin for plugin in plugins if plugin.name == name]
    assert found, f"no plugin {name!r}; plugins: {[p.name for p in plugins]}"
    return found[0]


@then('the plugin "{name}" is ok and provides "{strategy}"')
def plugin_ok(context: Context, name: str, strategy: str) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    assert plugin.status == "ok", plugin
    assert strategy in plugin.provides, plugin
    registered = pipeline(context).registry.get(strategy)
    assert registered is not None and registered.plugin.name == name, registered


@then('the plugin "{name}" is broken with an error mentioning "{words}"')
def plugin_broken(context: Context, name: str, words: str) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    assert plugin.status == "broken", plugin
    assert words in plugin.error, f"the error is {plugin.error!r}"
    assert plugin.provides == (), plugin


@then('the plugin "{name}" is disabled')
def plugin_disabled(context: Context, name: str) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    assert plugin.status == "disabled", plugin
    assert plugin.error, "a disabled plugin says why"


@then('the plugin "{name}" comes from distribution "{distribution}" version "{version}"')
def plugin_distribution(context: Context, name: str, distribution: str, version: str) -> None:
    plugin = _plugin(pipeline(context).plugins, name)
    assert (plugin.distribution, plugin.version) == (distribution, version), plugin


@then('no strategy called "{name}" is registered')
def strategy_not_registered(context: Context, name: str) -> None:
    names = [registered.strategy.name for registered in pipeline(context).strategies]
    assert name not in names, f"registered strategies: {names}"


@when("the strategy registry discovers plugins with the scenario's settings and environment")
def registry_discovers(context: Context) -> None:
    settings = load_settings(context.project, None, None, context.environ).settings
    context.registry = StrategyRegistry.discover(settings, context.environ)


@when("the strategy registry discovers plugins with an empty environment")
def registry_discovers_empty(context: Context) -> None:
    settings = load_settings(context.project, None, None, {}).settings
    context.registry = StrategyRegistry.discover(settings, {})


@then('the registry lists the plugin "{name}" as {status:PluginStatus}')
def registry_lists(context: Context, name: str, status: str) -> None:
    plugin = _plugin(context.registry.plugins, name)
    assert plugin.status == status, plugin

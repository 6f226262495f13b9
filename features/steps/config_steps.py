"""Steps for configuration: validation errors, precedence, provenance of values, defaults."""

from __future__ import annotations

import json
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

from behave import given, then, when
from behave.runner import Context
from pydantic import BaseModel
from structlog.testing import capture_logs
from testkit import assemble, require_closed_pipeline, toml_value

from contextpipe import ConfigError, Pipeline, Settings
from contextpipe.config import StrategySettings, effective_items, load_settings
from contextpipe.plugins import commented_default_config


@when("the configuration is loaded")
def load(context: Context) -> None:
    context.loaded, context.error = None, None
    try:
        context.loaded = load_settings(
            context.project, None, dict(context.overrides), dict(context.environ)
        )
    except ConfigError as exc:
        context.error = exc


@when("the pipeline is opened")
def open_pipeline(context: Context) -> None:
    context.error = None
    with capture_logs() as events:
        try:
            Pipeline.open(
                project_dir=context.project, overrides=context.overrides, environ=context.environ
            ).close()
        except ConfigError as exc:
            context.error = exc
    context.log_events = list(events)


def _warnings(context: Context) -> list[dict[str, Any]]:
    return [event for event in context.log_events if event["log_level"] == "warning"]


@then('it opens, warning "{words}"')
def opens_with_warning(context: Context, words: str) -> None:
    assert context.error is None, f"the pipeline did not open: {context.error}"
    messages = [str(event.get("message")) for event in _warnings(context)]
    assert len(messages) == 1, f"expected one warning, got {messages}"
    assert "\n" not in messages[0], f"the warning is not one line: {messages[0]!r}"
    assert words in messages[0], f"the warning is {messages[0]!r}"
    expected_file = str(context.project / "config.toml")
    if words.startswith("config.toml:"):
        assert messages[0].startswith(expected_file + ":"), messages[0]


@then('the warning is logged as an "{event}" event naming "{name}"')
def warning_event(context: Context, event: str, name: str) -> None:
    (logged,) = _warnings(context)
    assert logged["event"] == event, logged
    assert logged["strategy"] == name, logged


@then("it opens without a warning")
def opens_quietly(context: Context) -> None:
    assert context.error is None, f"the pipeline did not open: {context.error}"
    assert not _warnings(context), _warnings(context)


@given("the project config file, saved as {encoding}:")
def config_file_encoded(context: Context, encoding: str) -> None:
    require_closed_pipeline(context, "the config file")
    codec = {"Latin-1": "latin-1", "UTF-8 with a byte-order mark": "utf-8-sig"}[encoding]
    (context.project / "config.toml").write_bytes((context.text + "\n").encode(codec))


@when('I ask for "{query}" within {budget:d} tokens giving "{name}" the weight {weight}')
def ask_with_raw_weight(context: Context, query: str, budget: int, name: str, weight: str) -> None:
    """The override as a caller's plain data, validated by the pipeline like any request."""
    assemble(context, query, budget=budget, strategies={name: {"weight": float(weight)}})


def _numeric_keys(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, type]]:
    """Every int or float setting under `model`, dotted, with its number type; strategy
    settings under the built-in strategy's name.
    """
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if name == "strategies":
            yield from _numeric_keys(StrategySettings, f"{prefix}strategies.simple-keyword.")
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _numeric_keys(annotation, f"{prefix}{name}.")
        else:
            kinds = get_args(annotation) if isinstance(annotation, types.UnionType) else ()
            for kind in (annotation, *kinds):
                if kind in (int, float):
                    yield f"{prefix}{name}", kind


@when("every numeric setting is written in turn as inf, -inf and nan in config.toml")
def every_number_not_finite(context: Context) -> None:
    keys = list(_numeric_keys(Settings))
    assert any(kind is float for _, kind in keys), keys
    assert any(kind is int for _, kind in keys), keys
    context.refusals = []
    config = context.project / "config.toml"
    for key, kind in keys:
        table, _, leaf = key.rpartition(".")
        for value in ("inf", "-inf", "nan"):
            config.write_text(f"# not a number\n[{table}]\n{leaf} = {value}\n", encoding="utf-8")
            try:
                load_settings(context.project, None, {}, {})
            except ConfigError as exc:
                context.refusals.append((key, kind, value, str(exc)))
            else:
                context.refusals.append((key, kind, value, None))


@then("each is refused with one line naming the file, the line, the key and the value")
def each_refused(context: Context) -> None:
    path = context.project / "config.toml"
    accepted = [(key, value) for key, _, value, error in context.refusals if error is None]
    assert not accepted, f"accepted: {accepted}"
    for key, kind, value, error in context.refusals:
        assert error.startswith(f"{path}:3: {key}: "), error
        assert "\n" not in error, error
        assert f"(got {value})" in error, error
        if kind is float:
            assert "finite number" in error, error


@then('loading fails with the one-line error "{words}"')
def fails_with(context: Context, words: str) -> None:
    assert context.error is not None, "the configuration loaded without complaint"
    message = str(context.error)
    assert "\n" not in message, f"the error is not one line: {message!r}"
    assert words in message, f"the error is {message!r}"


@then('the error starts with the path of the config file followed by ":{line:d}:"')
def error_has_path_and_line(context: Context, line: int) -> None:
    expected = f"{context.project / 'config.toml'}:{line}: "
    assert str(context.error).startswith(expected), f"the error is {str(context.error)!r}"


@then('"{key}" is {value} from "{source}"')
def value_from(context: Context, key: str, value: str, source: str) -> None:
    assert context.error is None, f"the configuration failed to load: {context.error}"
    items = {name: (found, origin) for name, found, origin in effective_items(context.loaded)}
    expected_source = str(context.project / "config.toml") if source == "config.toml" else source
    assert items[key] == (toml_value(value), expected_source), f"{key}: {items[key]}"


@given("no project config file")
@given("no environment variable")
@given("no command-line setting")
def nothing_given(context: Context) -> None:
    """Precedence examples name what is absent too."""


@given("a project config file with a budget of {tokens:d}")
def config_with_budget(context: Context, tokens: int) -> None:
    require_closed_pipeline(context, "the config file")
    text = f"[budget]\ndefault = {tokens}\n"
    (context.project / "config.toml").write_text(text, encoding="utf-8")


@then("every effective key is listed once, with its value and where it came from")
def every_key_listed(context: Context) -> None:
    items = effective_items(context.loaded)
    keys = [key for key, _, _ in items]
    assert len(keys) == len(set(keys)), "a key is listed twice"
    for key, value, source in items:
        json.dumps(value)  # values are plain data, as `config show --format json` prints them
        assert source, f"{key} has no source"
    expected = {"budget.default", "tokenizer.name", "packing.mmr_lambda", "plugins.deny"}
    assert expected <= set(keys), sorted(expected - set(keys))


@when("I generate the default config.toml")
def generate_default(context: Context) -> None:
    context.default_toml = commented_default_config()


@then("it reads back with tomllib as exactly the default settings")
def round_trips(context: Context) -> None:
    data: dict[str, Any] = tomllib.loads(context.default_toml)
    settings = Settings.model_validate(data)
    assert settings.model_dump(exclude={"strategies"}) == Settings().model_dump(
        exclude={"strategies"}
    )
    assert "simple-keyword" in settings.strategies, "the built-in strategy's table is missing"
    for name, strategy in settings.strategies.items():
        # The weight written is the one the strategy runs with unset (`default_weight`).
        assert strategy.weight is not None, name
        unset = strategy.model_copy(update={"options": {}, "weight": None})
        assert unset == StrategySettings(), name


@then("it is exactly the config.toml at the root of the repository")
def same_as_repository(context: Context) -> None:
    committed = (Path(__file__).resolve().parents[2] / "config.toml").read_text(encoding="utf-8")
    assert context.default_toml == committed, (
        "config.toml is stale: run `contextpipe config init --force`"
    )


@then("every setting in it has a comment just above it")
def every_key_commented(context: Context) -> None:
    lines = context.default_toml.splitlines()
    for number, line in enumerate(lines):
        if "=" in line and not line.startswith(("#", "[")):
            assert lines[number - 1].startswith("#"), f"no comment above {line!r}"


@given("the default config.toml is the project's config file")
def default_as_project(context: Context) -> None:
    (context.project / "config.toml").write_text(commented_default_config(), encoding="utf-8")


@then("every value comes from config.toml or the defaults and equals the default")
def all_defaults(context: Context) -> None:
    assert context.error is None, f"the configuration failed to load: {context.error}"
    settings = context.loaded.settings
    assert settings.model_dump(exclude={"strategies"}) == Settings().model_dump(
        exclude={"strategies"}
    )

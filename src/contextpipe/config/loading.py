"""Loading settings: defaults < project `config.toml` < `CONTEXTPIPE_*` environment < CLI
flags, merged key by key, then validated against the schema.

Rules: the config file is UTF-8 TOML; `CONTEXTPIPE_SECTION__KEY=value` sets
`section.key` (a TOML value when it parses as one, else a string; `-` in a strategy name
is written `_`); every mistake is a `ConfigError` of one line naming where the value came
from (file and line, environment variable, or command line), the dotted key, what is
allowed and the value given. Where each effective value came from is kept
(`LoadedSettings.sources`) for `contextpipe config show` and for later errors.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import ConfigError, validation_problem
from ..core.formats import CONFIG_FILENAME
from .schema import Settings

ENV_PREFIX = "CONTEXTPIPE_"
#: Comma-separated plugin names to disable, on top of `plugins.deny`.
DISABLE_PLUGINS_ENV = "CONTEXTPIPE_DISABLE_PLUGINS"


class LoadedSettings(BaseModel):
    """Effective settings and where each dotted key's value came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: Settings
    sources: dict[str, str]
    project_dir: Path
    files: dict[str, str] = Field(default_factory=dict[str, str], repr=False)

    def located(self, error: ConfigError) -> ConfigError:
        """`error` prefixed with the file and line (or variable) that set its key."""
        if error.key is None:
            return error
        return ConfigError(f"{_where(error.key, self.sources, self.files)}: {error}", error.key)

    def unknown_strategies(
        self, installed: Collection[str], not_loaded: Sequence[str] = ()
    ) -> list[tuple[str, str]]:
        """`(name, warning)` for each `[strategies.NAME]` that no loaded strategy (of
        those `installed` and enabled) is called, whose settings therefore do nothing. A
        warning, not an error: a plugin may be uninstalled or disabled for a while with its
        settings kept. Each warning is one line naming the file and line (or variable), the
        closest loaded name, every loaded one, and the plugins that did not load
        (`not_loaded`), whose strategies cannot be known.
        """
        known = sorted(installed)
        listed = ", ".join(known) or "none"
        if not_loaded:
            listed += f"; plugins not loaded: {', '.join(not_loaded)}"
        found: list[tuple[str, str]] = []
        for name in sorted(set(self.settings.strategies) - set(known)):
            key = f"strategies.{name}"
            closest = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {closest[0]!r}?" if closest else ""
            found.append(
                (
                    name,
                    f"{_where(key, self.sources, self.files)}: {key}: no strategy called "
                    f"{name!r} is loaded, so these settings do nothing{hint} (loaded: {listed})",
                )
            )
        return found


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _flatten(cast(Mapping[str, Any], value), f"{dotted}.")
        else:
            yield dotted, value


def _merge(base: dict[str, Any], overlay: Mapping[str, Any]) -> None:
    for key, value in overlay.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(cast(dict[str, Any], current), cast(Mapping[str, Any], value))
        else:
            base[key] = value


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = target
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def setting_value(raw: str) -> Any:
    """A setting given as text (an environment variable, a command-line option): its TOML
    value when it parses as one (`5432`, `true`, `["a", "b"]`), else the text itself.
    """
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _env_overrides(environ: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    """`CONTEXTPIPE_SECTION__KEY=value` sets `section.key`; `-` in strategy names is `_`."""
    overrides: dict[str, tuple[str, Any]] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name == DISABLE_PLUGINS_ENV or "__" not in name:
            continue
        parts = name[len(ENV_PREFIX) :].lower().split("__")
        if parts[0] == "strategies" and len(parts) > 1:
            parts[1] = parts[1].replace("_", "-")
        overrides[".".join(parts)] = (name, setting_value(environ[name]))
    return overrides


_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
_ASSIGN = re.compile(r'^\s*("?)([^"=\s]+)\1\s*=')


def _toml_keys(text: str) -> Iterator[tuple[int, list[str], bool]]:
    """Best effort: (line number, dotted key, is a table header) of each table header and
    each assignment in a TOML text, for pointing at lines in error messages.
    """
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _HEADER.match(line):
            table = _dotted_parts(match.group(1))
            yield number, table, True
        elif match := _ASSIGN.match(line):
            yield number, [*table, *_dotted_parts(match.group(2))], False


def _dotted_parts(key: str) -> list[str]:
    return [part.strip().strip('"') for part in key.split(".")]


def _key_line(text: str, dotted: str) -> int | None:
    """Best-effort line number of `dotted` in a TOML file, for error messages; for a key
    the file lacks (a required one), the header of the deepest table it belongs in.
    """
    parts = dotted.split(".")
    table: tuple[int, int] | None = None  # (depth, line) of the deepest enclosing header
    for number, key, header in _toml_keys(text):
        # The key itself, a table or dotted key under it, or (for an assignment) an inline
        # table that holds it: `[a.b]` and `a.b.c = 1` both point at `a.b`.
        shorter = min(len(key), len(parts))
        if key[:shorter] == parts[:shorter] and (len(key) >= len(parts) or not header):
            return number
        if header and key == parts[: len(key)] and (table is None or len(key) > table[0]):
            table = (len(key), number)
    return None if table is None else table[1]


def _key_at(text: str, line: int) -> str | None:
    """The dotted key that `line` of a TOML text assigns or opens, if any."""
    return next((".".join(key) for number, key, _ in _toml_keys(text) if number == line), None)


def _read_config(path: Path) -> str:
    """The text of a config file, which TOML requires to be UTF-8 (a byte-order mark, as
    some editors write, is allowed); anything else is a `ConfigError` naming the line, the
    key on it and the offending byte.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        key = _key_at(data.decode("utf-8-sig", errors="replace"), line)
        raise ConfigError(
            f"{path}:{line}: {f'{key}: ' if key else ''}not UTF-8 text "
            f"(byte 0x{data[exc.start]:02x} at column {column}); save the file as UTF-8"
        ) from None


def _validate(
    merged: dict[str, Any], sources: Mapping[str, str], files: Mapping[str, str]
) -> Settings:
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        dotted, problem = validation_problem(exc)
        raise ConfigError(f"{_where(dotted, sources, files)}: {dotted}: {problem}") from None


def _where(dotted: str, sources: Mapping[str, str], files: Mapping[str, str]) -> str:
    """`file:line` (or the environment variable, or "defaults") that set `dotted`."""
    source = _source_of(dotted, sources)
    line = _key_line(files[source], dotted) if source in files else None
    return f"{source}:{line}" if line else source


def _source_of(dotted: str, sources: Mapping[str, str]) -> str:
    """What set `dotted`, else what set a key under it, else the nearest table around it
    (where a required key is missing), else "defaults".
    """
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if (found := sources.get(".".join(parts[:end]))) is not None:
            return found
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end]) + "."
        for key, found in sources.items():
            if key.startswith(prefix):
                return found
    return "defaults"


def find_config(project_dir: Path) -> Path | None:
    """The project's config file, if it has one."""
    candidate = project_dir / CONFIG_FILENAME
    return candidate if candidate.is_file() else None


def load_settings(
    project_dir: Path | None = None,
    config_file: Path | None = None,
    cli_overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Merge defaults, the config file, `CONTEXTPIPE_*` variables and CLI flags, then validate.

    Raises `ConfigError` with one line naming the file (and line), the key and what is allowed.
    """
    project = (project_dir or Path.cwd()).resolve()
    env = os.environ if environ is None else environ
    merged: dict[str, Any] = Settings().model_dump()
    sources: dict[str, str] = {}
    files: dict[str, str] = {}

    path = config_file or find_config(project)
    if path is not None:
        text = _read_config(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        label = str(path)
        files[label] = text
        for dotted, _ in _flatten(data):
            sources[dotted] = label
        _merge(merged, data)

    for dotted, (variable, value) in _env_overrides(env).items():
        _set_dotted(merged, dotted, value)
        sources[dotted] = f"env {variable}"

    for dotted, value in (cli_overrides or {}).items():
        _set_dotted(merged, dotted, value)
        sources[dotted] = "command line"

    settings = _validate(merged, sources, files)
    return LoadedSettings(settings=settings, sources=sources, project_dir=project, files=files)


def disabled_plugins(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> frozenset[str]:
    """Plugin names denied by config or by `CONTEXTPIPE_DISABLE_PLUGINS`."""
    env = os.environ if environ is None else environ
    from_env = {
        name.strip() for name in env.get(DISABLE_PLUGINS_ENV, "").split(",") if name.strip()
    }
    return frozenset(settings.plugins.deny) | from_env


def effective_items(loaded: LoadedSettings) -> list[tuple[str, Any, str]]:
    """Every effective dotted key with its value and the source it came from."""
    data = loaded.settings.model_dump(mode="json")
    return [
        (
            dotted,
            value,
            _source_of(dotted, loaded.sources)
            if dotted in loaded.sources
            or any(key.startswith(f"{dotted}.") for key in loaded.sources)
            else "defaults",
        )
        for dotted, value in _flatten(data)
    ]

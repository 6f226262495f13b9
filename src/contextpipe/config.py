"""Settings: defaults < project `config.toml` < `CONTEXTPIPE_*` environment < CLI flags.

Every tunable lives in one pydantic model tree; field descriptions double as the comments
`contextpipe config init` writes, so the documentation of a key cannot drift from its
validation.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError
from .formats import CONFIG_FILENAME
from .tokenizers import TOKENIZER_NAMES

ENV_PREFIX = "CONTEXTPIPE_"
#: Comma-separated plugin names to disable, on top of `plugins.deny`.
DISABLE_PLUGINS_ENV = "CONTEXTPIPE_DISABLE_PLUGINS"

# TOML values are typed: a string where a number belongs is a mistake, not a conversion.
# TOML also has `inf` and `nan`, which no setting means: every number must be finite.
_STRICT = ConfigDict(extra="forbid", validate_assignment=True, strict=True, allow_inf_nan=False)


class StoreSettings(BaseModel):
    """Where the index lives."""

    model_config = _STRICT

    path: str = Field(
        default=".contextpipe",
        description="Directory of the embedded store, relative to the project directory.",
    )
    backend: Literal["embedded"] = Field(
        default="embedded", description='Storage backend: "embedded" (SQLite FTS5 in one folder).'
    )


class TokenizerSettings(BaseModel):
    """How tokens are counted."""

    model_config = _STRICT

    name: str = Field(
        default="o200k_base",
        description=(
            'Tokenizer for budgets: "o200k_base", "cl100k_base" (exact, offline), or "approx" '
            "(fast over-estimate)."
        ),
    )

    @field_validator("name")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in TOKENIZER_NAMES:
            raise ValueError(f"must be one of {', '.join(TOKENIZER_NAMES)}")
        return value


class BudgetSettings(BaseModel):
    """Token budget defaults."""

    model_config = _STRICT

    default: int = Field(default=4000, gt=0, description="Budget when a request names none.")


class ExecutorSettings(BaseModel):
    """Deadlines for running strategies."""

    model_config = _STRICT

    deadline_ms: int = Field(
        default=5000, gt=0, description="Global deadline for all strategies of one request."
    )
    strategy_deadline_ms: int = Field(
        default=3000, gt=0, description="Default deadline for each strategy."
    )


class FusionSettings(BaseModel):
    """Reciprocal-rank fusion of the strategies' lists."""

    model_config = _STRICT

    rrf_k: int = Field(
        default=60, gt=0, description="RRF constant k: score = sum(weight / (k + rank))."
    )


class PackingSettings(BaseModel):
    """Choosing what fits in the budget."""

    model_config = _STRICT

    mmr_lambda: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="MMR trade-off: 1 = relevance only, 0 = diversity only.",
    )
    duplicate_threshold: float = Field(
        default=0.85,
        gt=0.0,
        le=1.0,
        description="Word-set Jaccard similarity from which a candidate is a near-duplicate.",
    )
    min_score: float = Field(
        default=0.0,
        ge=0.0,
        description="Fused scores below this are dropped as below threshold.",
    )
    depth_value_skeleton: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Value of a depth-4 skeleton relative to full text.",
    )
    depth_value_listing: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="Value of a depth-0 listing relative to full text.",
    )


class IngestSettings(BaseModel):
    """What `contextpipe index` reads and how it splits it."""

    model_config = _STRICT

    max_file_bytes: int = Field(
        default=1_000_000, gt=0, description="Files larger than this are skipped with a warning."
    )
    max_chunk_lines: int = Field(
        default=120, ge=5, description="Paragraphs and blocks are split at this many lines."
    )
    exclude: list[str] = Field(
        default_factory=list[str],
        description="Extra gitignore-style patterns to skip, on top of .gitignore files.",
    )
    skip_virtualenvs: bool = Field(
        default=True,
        description="Do not walk Python virtual environments (folders holding pyvenv.cfg).",
    )
    skip_vcs: bool = Field(
        default=True,
        description="Do not walk version-control folders (.git, .hg, .svn, .bzr, .jj).",
    )
    commit_seconds: float = Field(
        default=2.0,
        ge=0.0,
        allow_inf_nan=False,
        description=(
            "A long index run commits whole files at least this often, so that an"
            " interrupted run keeps its work; 0 commits after every file."
        ),
    )


class PluginSettings(BaseModel):
    """Which plugins (entry-point names) load."""

    model_config = _STRICT

    allow: list[str] = Field(
        default_factory=list[str], description="If not empty, only these plugins load."
    )
    deny: list[str] = Field(
        default_factory=list[str],
        description="These plugins never load (CONTEXTPIPE_DISABLE_PLUGINS adds more).",
    )


class StrategySettings(BaseModel):
    """Settings common to every strategy, plus the strategy's own `options`."""

    model_config = _STRICT

    enabled: bool = Field(default=True, description="Run this strategy at all.")
    weight: float = Field(
        default=1.0, ge=0.0, description="Allocation and fusion weight (times quality)."
    )
    floor_tokens: int = Field(
        default=0, ge=0, description="Tokens guaranteed to this strategy when it runs."
    )
    cap_fraction: float = Field(
        default=1.0, gt=0.0, le=1.0, description="Largest share of the budget it may receive."
    )
    deadline_ms: int | None = Field(
        default=None, gt=0, description="Overrides executor.strategy_deadline_ms."
    )
    options: dict[str, Any] = Field(
        default_factory=dict[str, Any],
        description="Strategy-specific settings; see `contextpipe explain STRATEGY`.",
    )


class Settings(BaseModel):
    """Every tunable of contextpipe."""

    model_config = _STRICT

    store: StoreSettings = Field(default_factory=StoreSettings)
    tokenizer: TokenizerSettings = Field(default_factory=TokenizerSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    executor: ExecutorSettings = Field(default_factory=ExecutorSettings)
    fusion: FusionSettings = Field(default_factory=FusionSettings)
    packing: PackingSettings = Field(default_factory=PackingSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    plugins: PluginSettings = Field(default_factory=PluginSettings)
    strategies: dict[str, StrategySettings] = Field(default_factory=dict[str, StrategySettings])

    def strategy(self, name: str) -> StrategySettings:
        """Settings for strategy `name`, defaults when config does not mention it."""
        return self.strategies.get(name) or StrategySettings()


_Options = TypeVar("_Options", bound=BaseModel)


def strategy_options(settings: Settings, name: str, model: type[_Options]) -> _Options:
    """Strategy `name`'s `[strategies.NAME.options]`, validated by the strategy's own
    pydantic `model`. A mistake raises `ConfigError` naming the dotted key, which
    contextpipe reports with the file and line it came from.
    """
    try:
        return model.model_validate(settings.strategy(name).options)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = f"strategies.{name}.options." + ".".join(str(part) for part in error["loc"])
        problem = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(f"{key}: {problem}", key) from None


class LoadedSettings(BaseModel):
    """Effective settings and where each dotted key's value came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: Settings
    sources: dict[str, str]
    project_dir: Path
    files: dict[str, str] = Field(default_factory=dict[str, str], repr=False)

    @property
    def store_path(self) -> Path:
        """The store directory, resolved against the project directory."""
        return (self.project_dir / self.settings.store.path).resolve()

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


def _parse_env_value(raw: str) -> Any:
    """Environment values are TOML values when they parse as one, else plain strings."""
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
        overrides[".".join(parts)] = (name, _parse_env_value(environ[name]))
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
    """Best-effort line number of `dotted` in a TOML file, for error messages."""
    parts = dotted.split(".")
    for number, key, header in _toml_keys(text):
        # The key itself, a table or dotted key under it, or (for an assignment) an inline
        # table that holds it: `[a.b]` and `a.b.c = 1` both point at `a.b`.
        shorter = min(len(key), len(parts))
        if key[:shorter] == parts[:shorter] and (len(key) >= len(parts) or not header):
            return number
    return None


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


def _describe_error(error: Mapping[str, Any]) -> str:
    kind = str(error["type"])
    if kind == "extra_forbidden":
        return "unknown key"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{message} (got {error.get('input')!r})"


def _validate(
    merged: dict[str, Any], sources: Mapping[str, str], files: Mapping[str, str]
) -> Settings:
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        dotted = ".".join(str(part) for part in error["loc"])
        where = _where(dotted, sources, files)
        raise ConfigError(f"{where}: {dotted}: {_describe_error(error)}") from None


def _where(dotted: str, sources: Mapping[str, str], files: Mapping[str, str]) -> str:
    """`file:line` (or the environment variable, or "defaults") that set `dotted`."""
    source = _source_of(dotted, sources)
    line = _key_line(files[source], dotted) if source in files else None
    return f"{source}:{line}" if line else source


def _source_of(dotted: str, sources: Mapping[str, str]) -> str:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if (found := sources.get(".".join(parts[:end]))) is not None:
            return found
    prefix = f"{dotted}."
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


def _comment(text: str) -> str:
    return "\n".join(f"# {line}" for line in text.splitlines())


def _write_table(lines: list[str], header: str, model: BaseModel) -> None:
    """A TOML table of the model's fields, each preceded by its description."""
    lines.append(f"[{header}]")
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        description = field.description or ""
        if isinstance(value, dict):
            continue  # sub-tables (strategy options) are written by their owner
        if value is None:
            lines.append(_comment(f"{description} Unset by default."))
            lines.append(f"# {name} =")
        else:
            lines.append(_comment(description))
            lines.append(tomli_w.dumps({name: value}).strip())
    lines.append("")


def default_config_toml(strategy_options: Mapping[str, BaseModel | None] | None = None) -> str:
    """The commented default `config.toml` that `contextpipe config init` writes.

    `strategy_options` maps each strategy name to its options model (defaults and field
    descriptions), so plugins' own settings are written and commented like the core's.
    """
    settings = Settings()
    lines = [
        "# contextpipe configuration. Every key is shown with its default.",
        "# Precedence: command-line flags > CONTEXTPIPE_SECTION__KEY environment > this file.",
        "",
    ]
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            lines.append(_comment(str(type(value).__doc__).strip()))
            _write_table(lines, name, value)
    for strategy_name, options in sorted((strategy_options or {}).items()):
        lines.append(_comment(f"Strategy {strategy_name}: {StrategySettings.__doc__}"))
        _write_table(lines, f"strategies.{strategy_name}", StrategySettings())
        if options is not None:
            _write_table(lines, f"strategies.{strategy_name}.options", options)
    text = "\n".join(lines).rstrip() + "\n"
    tomllib.loads(text)  # what we write must read back
    return text

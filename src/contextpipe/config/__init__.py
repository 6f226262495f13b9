"""Settings: the schema (`schema`), loading them from defaults, `config.toml`, the
environment and flags (`loading`), the LLMs chat requests name (`windows`), and writing
the commented default file (`writing`).
"""

from .loading import (
    CONFIG_FILENAME,
    LoadedSettings,
    disabled_plugins,
    effective_items,
    load_settings,
    setting_value,
)
from .schema import (
    IngestSettings,
    PackingSettings,
    Settings,
    StrategySettings,
    TokenizerSettings,
    store_options,
    strategy_options,
)
from .windows import model_window
from .writing import default_config_toml

__all__ = [
    "CONFIG_FILENAME",
    "IngestSettings",
    "LoadedSettings",
    "PackingSettings",
    "Settings",
    "StrategySettings",
    "TokenizerSettings",
    "default_config_toml",
    "disabled_plugins",
    "effective_items",
    "load_settings",
    "model_window",
    "setting_value",
    "store_options",
    "strategy_options",
]

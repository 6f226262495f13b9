"""The formats contextpipe reads and writes, as plain names: the config file it looks for
and the formats an assembled context is printed in.

No dependencies: the command line declares its options from these before anything heavy
(pydantic, the pipeline) is loaded, so that `contextpipe --help` answers at once.
"""

from __future__ import annotations

from enum import StrEnum

CONFIG_FILENAME = "config.toml"


class OutputFormat(StrEnum):
    """How the assembled context is rendered for the model."""

    MARKDOWN = "markdown"
    XML = "xml"
    JSON = "json"
    MESSAGES = "messages"

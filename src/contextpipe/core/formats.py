"""The formats contextpipe reads and writes, as plain names: the config file it looks for,
the formats an assembled context is printed in, and the tokenizers it counts with.

No dependencies: the command line declares its options from these before anything heavy
(pydantic, the pipeline) is loaded, so that `contextpipe --help` answers at once.
"""

from __future__ import annotations

from enum import StrEnum

CONFIG_FILENAME = "config.toml"

#: The tokenizers `[tokenizer] name` takes: the exact BPE encodings (`tokens`), and the
#: fast over-estimate.
APPROX = "approx"
TOKENIZER_NAMES: tuple[str, ...] = ("o200k_base", "cl100k_base", APPROX)


class OutputFormat(StrEnum):
    """How the assembled context is rendered for the model."""

    MARKDOWN = "markdown"
    XML = "xml"
    JSON = "json"
    MESSAGES = "messages"

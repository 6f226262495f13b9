"""Structured logging: key-value events on stderr, quiet unless asked.

`CONTEXTPIPE_LOG_LEVEL` (debug, info, warning, error) sets the threshold; the CLI's
`--verbose` sets info. Events go to stderr so that stdout stays clean for `--format json`.
An event that carries a `message` is meant for the person running contextpipe (a warning
about their config, say): it is printed as that one sentence, `contextpipe: warning: ...`,
like the command line's errors; its other fields stay in the event for log processors.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

LOG_LEVEL_ENV = "CONTEXTPIPE_LOG_LEVEL"

_KEY_VALUES = structlog.processors.KeyValueRenderer(key_order=["event", "level"], sort_keys=True)


def _render(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
    """One line: the sentence of an event meant for people, else key=value pairs."""
    if (message := event_dict.get("message")) is not None:
        return f"contextpipe: {event_dict['level']}: {message}"
    return _KEY_VALUES(logger, method_name, event_dict)


def configure_logging(level: str | None = None) -> None:
    """Route structlog events to stderr at `level` (default: $CONTEXTPIPE_LOG_LEVEL or warning)."""
    name = (level or os.environ.get(LOG_LEVEL_ENV) or "warning").upper()
    threshold = logging.getLevelNamesMapping().get(name, logging.WARNING)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _render,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


logger = structlog.get_logger("contextpipe")

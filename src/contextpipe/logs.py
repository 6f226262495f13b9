"""Structured logging: key-value events on stderr, quiet unless asked.

`CONTEXTPIPE_LOG_LEVEL` (debug, info, warning, error) sets the threshold; the CLI's
`--verbose` sets info. Events go to stderr so that stdout stays clean for `--format json`.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

LOG_LEVEL_ENV = "CONTEXTPIPE_LOG_LEVEL"


def configure_logging(level: str | None = None) -> None:
    """Route structlog events to stderr at `level` (default: $CONTEXTPIPE_LOG_LEVEL or warning)."""
    name = (level or os.environ.get(LOG_LEVEL_ENV) or "warning").upper()
    threshold = logging.getLevelNamesMapping().get(name, logging.WARNING)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.KeyValueRenderer(key_order=["event", "level"], sort_keys=True),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


logger = structlog.get_logger("contextpipe")

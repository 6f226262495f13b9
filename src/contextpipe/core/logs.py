"""Structured logging: key-value events on stderr, quiet unless asked.

`CONTEXTPIPE_LOG_LEVEL` (debug, info, warning, error) sets the threshold; the CLI's
`--verbose` sets info. Events go to stderr so that stdout stays clean for `--format json`.
An event that carries a `message` is meant for the person running contextpipe (a warning
about their config, say): it is printed as that one sentence, `contextpipe: warning: ...`,
like the command line's errors; its other fields stay in the event for log processors.

structlog is imported only when an event at or above the threshold is logged, or when
logging is configured while structlog is loaded already: importing it takes about 0.1 s (it
loads rich for its console renderer), which a command that logs nothing should not pay.
Events below the threshold are dropped before structlog would drop them. Before
`configure_logging` runs, every event goes to structlog, whose own configuration decides.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from functools import cache
from typing import Any

LOG_LEVEL_ENV = "CONTEXTPIPE_LOG_LEVEL"


class _Configuration:
    """What `configure_logging` asked for, and whether structlog has been told yet."""

    threshold: int | None = None
    applied = True


_configuration = _Configuration()


@cache
def _key_values() -> Any:
    import structlog

    return structlog.processors.KeyValueRenderer(key_order=["event", "level"], sort_keys=True)


def _render(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
    """One line: the sentence of an event meant for people, else key=value pairs."""
    if (message := event_dict.get("message")) is not None:
        return f"contextpipe: {event_dict['level']}: {message}"
    return _key_values()(logger, method_name, event_dict)


def _apply(threshold: int) -> None:
    """Configure structlog as `configure_logging` asked (imports it)."""
    import structlog

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
    _configuration.applied = True


def configure_logging(level: str | None = None) -> None:
    """Route structlog events to stderr at `level` (default: $CONTEXTPIPE_LOG_LEVEL or warning)."""
    name = (level or os.environ.get(LOG_LEVEL_ENV) or "warning").upper()
    threshold = logging.getLevelNamesMapping().get(name, logging.WARNING)
    _configuration.threshold, _configuration.applied = threshold, False
    if "structlog" in sys.modules:
        _apply(threshold)


def is_configured() -> bool:
    """Whether logging has been configured: by `configure_logging`, or by the application
    through structlog itself.
    """
    if _configuration.threshold is not None:
        return True
    if "structlog" not in sys.modules:
        return False
    import structlog

    return structlog.is_configured()


class _Logger:
    """contextpipe's logger: structlog's logger "contextpipe", loaded on first need."""

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, "debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, "info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, "warning", event, fields)

    def _log(self, level: int, method: str, event: str, fields: dict[str, Any]) -> None:
        threshold = _configuration.threshold
        if threshold is not None:
            if level < threshold:
                return
            if not _configuration.applied:
                _apply(threshold)
        import structlog

        getattr(structlog.get_logger("contextpipe"), method)(event, **fields)


logger = _Logger()

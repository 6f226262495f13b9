"""contextpipe: assemble the best context for an LLM request inside a hard token budget.

The public names load on first use (PEP 562): `import contextpipe` loads none of the
dependencies, and each name loads only its own module and what that module needs (a
plugin's `from contextpipe import hookimpl` loads no pipeline, store or tokenizer). A new
public name goes in three places: the `TYPE_CHECKING` imports (what type checkers read),
`_MODULES` (which module defines it) and `__all__`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backends import Backends, FragmentStore, TextBackend, TextHit
    from .budget import AllocationRequest, BudgetAllocator
    from .config import Settings, load_settings, strategy_options
    from .errors import BudgetError, ConfigError, ContextpipeError, StoreError, TokenizerError
    from .formats import OutputFormat
    from .hookspecs import hookimpl
    from .models import (
        AssembledContext,
        Candidate,
        ChatMessage,
        ContextFragment,
        ContextRequest,
        DroppedFragment,
        DroppedList,
        Provenance,
        RequestFilters,
        ResultFragment,
        SourceRef,
        StrategyReport,
        StrategySelection,
    )
    from .pipeline import Pipeline
    from .strategy import ContextStrategy
    from .tokenizers import Tokenizer, get_tokenizer

__version__ = "0.1.0"

# The public names of each module (relative to this package), as imported above.
_MODULES: dict[str, tuple[str, ...]] = {
    "backends": ("Backends", "FragmentStore", "TextBackend", "TextHit"),
    "budget": ("AllocationRequest", "BudgetAllocator"),
    "config": ("Settings", "load_settings", "strategy_options"),
    "errors": ("BudgetError", "ConfigError", "ContextpipeError", "StoreError", "TokenizerError"),
    "formats": ("OutputFormat",),
    "hookspecs": ("hookimpl",),
    "models": (
        "AssembledContext",
        "Candidate",
        "ChatMessage",
        "ContextFragment",
        "ContextRequest",
        "DroppedFragment",
        "DroppedList",
        "Provenance",
        "RequestFilters",
        "ResultFragment",
        "SourceRef",
        "StrategyReport",
        "StrategySelection",
    ),
    "pipeline": ("Pipeline",),
    "strategy": ("ContextStrategy",),
    "tokenizers": ("Tokenizer", "get_tokenizer"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    """Import the module defining a public name on first access, then keep the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AllocationRequest",
    "AssembledContext",
    "Backends",
    "BudgetAllocator",
    "BudgetError",
    "Candidate",
    "ChatMessage",
    "ConfigError",
    "ContextFragment",
    "ContextRequest",
    "ContextStrategy",
    "ContextpipeError",
    "DroppedFragment",
    "DroppedList",
    "FragmentStore",
    "OutputFormat",
    "Pipeline",
    "Provenance",
    "RequestFilters",
    "ResultFragment",
    "Settings",
    "SourceRef",
    "StoreError",
    "StrategyReport",
    "StrategySelection",
    "TextBackend",
    "TextHit",
    "Tokenizer",
    "TokenizerError",
    "__version__",
    "get_tokenizer",
    "hookimpl",
    "load_settings",
    "strategy_options",
]

"""contextpipe: assemble the best context for an LLM request inside a hard token budget."""

from .backends import Backends, FragmentStore, TextBackend, TextHit
from .budget import AllocationRequest, BudgetAllocator
from .config import Settings, load_settings, strategy_options
from .errors import BudgetError, ConfigError, ContextpipeError, StoreError, TokenizerError
from .hookspecs import hookimpl
from .models import (
    AssembledContext,
    Candidate,
    ChatMessage,
    ContextFragment,
    ContextRequest,
    DroppedFragment,
    DroppedList,
    OutputFormat,
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

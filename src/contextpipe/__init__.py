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
    from .assembly.budget import AllocationRequest, BudgetAllocator
    from .assembly.executor import RetrievalMemo
    from .config import (
        Settings,
        load_settings,
        setting_value,
        store_options,
        strategy_options,
    )
    from .contract.capabilities import (
        Backends,
        Direction,
        FragmentLookup,
        GraphView,
        SessionTiers,
        TextSearch,
        Timeline,
        VectorIndex,
        VectorSearch,
    )
    from .contract.embedding import MODEL_INSTALL_COMMAND, Embedder
    from .contract.hookspecs import hookimpl
    from .contract.proposals import (
        AT_LEAST,
        FIRST_PAGE,
        REACH,
        distinct_tokens,
        next_page,
        within_reach,
    )
    from .contract.records import (
        MEMORY_KIND,
        MEMORY_URI_PREFIX,
        CarriedMemory,
        DeclaredEdges,
        EdgeRecord,
        EdgeTarget,
        GraphEdge,
        GraphNode,
        GraphStats,
        MemoryItem,
        MemoryScope,
        NewFragment,
        NodeRecord,
        SkipReason,
        StoredFile,
        StoreStats,
        TargetForm,
        TextHit,
        VectorCoverage,
        VectorHit,
    )
    from .contract.store import (
        IndexWriter,
        Store,
        StoreBackend,
        VectorWriter,
    )
    from .contract.strategy import ContextStrategy, Preparing, Retrieved
    from .core.chat import ChatContext, ChatMetadata, ChatRequest, ChatTurn
    from .core.chunks import (
        Chunk,
        KeptChunk,
        Linkage,
        OptimizedContext,
        OptimizeRequest,
        OptimizeStats,
        Removal,
        RemovedChunk,
        Representative,
    )
    from .core.errors import (
        BudgetError,
        ConfigError,
        ContextpipeError,
        EmbedderError,
        StoreError,
        TokenizerError,
        validation_problem,
    )
    from .core.formats import CONFIG_FILENAME, OutputFormat
    from .core.logs import configure_logging
    from .core.models import (
        AssembledContext,
        Candidate,
        ChatMessage,
        ContextFragment,
        ContextRequest,
        DroppedFragment,
        Provenance,
        RequestFilters,
        RequestScope,
        ResultFragment,
        SourceRef,
        StrategyReport,
        StrategySelection,
        content_hash,
        fragment_id,
        json_schema,
    )
    from .core.workers import DaemonWorkers
    from .faces.client import Client
    from .ingest.embedding import EmbedProgress, EmbedSummary
    from .ingest.indexer import ForgetSummary, IndexProgress, IndexSummary, Skipped
    from .pipeline import Pipeline, WarmUp
    from .plugins import EmbedderRegistry, PluginInfo, RegisteredStrategy
    from .stores.check import CheckResult, StoreCheckReport, check_store
    from .text.tokens import Tokenizer, get_tokenizer, preload_tokenizer, warm_up_tokenizer
    from .text.tokens._rank_cache import cache_dir
    from .text.words import (
        CodeLocation,
        CodeMentions,
        SourceRole,
        code_mentions,
        identifier_words,
        is_file_name,
        matched_terms,
        name_words,
        query_terms,
        source_role,
    )

__version__ = "0.1.0"

# The public names of each module (relative to this package), as imported above.
_MODULES: dict[str, tuple[str, ...]] = {
    "assembly.budget": ("AllocationRequest", "BudgetAllocator"),
    "config": ("Settings", "load_settings", "setting_value", "store_options", "strategy_options"),
    "contract.embedding": ("MODEL_INSTALL_COMMAND", "Embedder"),
    "core.errors": (
        "BudgetError",
        "ConfigError",
        "ContextpipeError",
        "EmbedderError",
        "StoreError",
        "TokenizerError",
        "validation_problem",
    ),
    "core.formats": ("CONFIG_FILENAME", "OutputFormat"),
    "contract.hookspecs": ("hookimpl",),
    "ingest.embedding": ("EmbedProgress", "EmbedSummary"),
    "ingest.indexer": ("ForgetSummary", "IndexProgress", "IndexSummary", "Skipped"),
    "core.logs": ("configure_logging",),
    "core.workers": ("DaemonWorkers",),
    "faces.client": ("Client",),
    "core.chat": ("ChatContext", "ChatMetadata", "ChatRequest", "ChatTurn"),
    "core.chunks": (
        "Chunk",
        "KeptChunk",
        "Linkage",
        "OptimizeRequest",
        "OptimizeStats",
        "OptimizedContext",
        "Removal",
        "RemovedChunk",
        "Representative",
    ),
    "core.models": (
        "AssembledContext",
        "Candidate",
        "ChatMessage",
        "ContextFragment",
        "ContextRequest",
        "DroppedFragment",
        "Provenance",
        "RequestFilters",
        "RequestScope",
        "ResultFragment",
        "SourceRef",
        "StrategyReport",
        "StrategySelection",
        "content_hash",
        "fragment_id",
        "json_schema",
    ),
    "pipeline": ("Pipeline", "WarmUp"),
    "contract.proposals": (
        "AT_LEAST",
        "FIRST_PAGE",
        "REACH",
        "distinct_tokens",
        "next_page",
        "within_reach",
    ),
    "assembly.executor": ("RetrievalMemo",),
    "plugins": ("EmbedderRegistry", "PluginInfo", "RegisteredStrategy"),
    "contract.capabilities": (
        "Backends",
        "Direction",
        "FragmentLookup",
        "GraphView",
        "SessionTiers",
        "TextSearch",
        "Timeline",
        "VectorIndex",
        "VectorSearch",
    ),
    "contract.records": (
        "MEMORY_KIND",
        "MEMORY_URI_PREFIX",
        "CarriedMemory",
        "DeclaredEdges",
        "EdgeRecord",
        "EdgeTarget",
        "GraphEdge",
        "GraphNode",
        "GraphStats",
        "MemoryItem",
        "MemoryScope",
        "NewFragment",
        "NodeRecord",
        "SkipReason",
        "StoredFile",
        "StoreStats",
        "TargetForm",
        "TextHit",
        "VectorCoverage",
        "VectorHit",
    ),
    "contract.store": (
        "IndexWriter",
        "Store",
        "StoreBackend",
        "VectorWriter",
    ),
    "contract.strategy": ("ContextStrategy", "Preparing", "Retrieved"),
    "stores.check": ("CheckResult", "StoreCheckReport", "check_store"),
    "text.words": (
        "CodeLocation",
        "CodeMentions",
        "SourceRole",
        "code_mentions",
        "identifier_words",
        "is_file_name",
        "matched_terms",
        "name_words",
        "query_terms",
        "source_role",
    ),
    "text.tokens": ("Tokenizer", "get_tokenizer", "preload_tokenizer", "warm_up_tokenizer"),
    "text.tokens._rank_cache": ("cache_dir",),
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
    "AT_LEAST",
    "CONFIG_FILENAME",
    "FIRST_PAGE",
    "MEMORY_KIND",
    "MEMORY_URI_PREFIX",
    "MODEL_INSTALL_COMMAND",
    "REACH",
    "AllocationRequest",
    "AssembledContext",
    "Backends",
    "BudgetAllocator",
    "BudgetError",
    "Candidate",
    "CarriedMemory",
    "ChatContext",
    "ChatMessage",
    "ChatMetadata",
    "ChatRequest",
    "ChatTurn",
    "CheckResult",
    "Chunk",
    "Client",
    "CodeLocation",
    "CodeMentions",
    "ConfigError",
    "ContextFragment",
    "ContextRequest",
    "ContextStrategy",
    "ContextpipeError",
    "DaemonWorkers",
    "DeclaredEdges",
    "Direction",
    "DroppedFragment",
    "EdgeRecord",
    "EdgeTarget",
    "EmbedProgress",
    "EmbedSummary",
    "Embedder",
    "EmbedderError",
    "EmbedderRegistry",
    "ForgetSummary",
    "FragmentLookup",
    "GraphEdge",
    "GraphNode",
    "GraphStats",
    "GraphView",
    "IndexProgress",
    "IndexSummary",
    "IndexWriter",
    "KeptChunk",
    "Linkage",
    "MemoryItem",
    "MemoryScope",
    "NewFragment",
    "NodeRecord",
    "OptimizeRequest",
    "OptimizeStats",
    "OptimizedContext",
    "OutputFormat",
    "Pipeline",
    "PluginInfo",
    "Preparing",
    "Provenance",
    "RegisteredStrategy",
    "Removal",
    "RemovedChunk",
    "Representative",
    "RequestFilters",
    "RequestScope",
    "ResultFragment",
    "RetrievalMemo",
    "Retrieved",
    "SessionTiers",
    "Settings",
    "SkipReason",
    "Skipped",
    "SourceRef",
    "SourceRole",
    "Store",
    "StoreBackend",
    "StoreCheckReport",
    "StoreError",
    "StoreStats",
    "StoredFile",
    "StrategyReport",
    "StrategySelection",
    "TargetForm",
    "TextHit",
    "TextSearch",
    "Timeline",
    "Tokenizer",
    "TokenizerError",
    "VectorCoverage",
    "VectorHit",
    "VectorIndex",
    "VectorSearch",
    "VectorWriter",
    "WarmUp",
    "__version__",
    "cache_dir",
    "check_store",
    "code_mentions",
    "configure_logging",
    "content_hash",
    "distinct_tokens",
    "fragment_id",
    "get_tokenizer",
    "hookimpl",
    "identifier_words",
    "is_file_name",
    "json_schema",
    "load_settings",
    "matched_terms",
    "name_words",
    "next_page",
    "preload_tokenizer",
    "query_terms",
    "setting_value",
    "source_role",
    "store_options",
    "strategy_options",
    "validation_problem",
    "warm_up_tokenizer",
    "within_reach",
]

"""The settings schema: every tunable of contextpipe in one tree of pydantic models.

Rules: values are strictly typed (a string where a number belongs is a mistake, not a
conversion) and finite; unknown keys are refused; each field's description is the comment
`contextpipe config init` writes above it (see `writing`), so the documentation of a key
cannot drift from its validation. A strategy's own `options` are validated by the
strategy's model (`strategy_options`).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.errors import ConfigError, validation_problem
from ..core.formats import TOKENIZER_NAMES

# TOML values are typed: a string where a number belongs is a mistake, not a conversion.
# TOML also has `inf` and `nan`, which no setting means: every number must be finite.
_STRICT = ConfigDict(extra="forbid", validate_assignment=True, strict=True, allow_inf_nan=False)


#: Vectors from which the embedded store searches approximately (`[store]`).
APPROXIMATE_VECTORS_ABOVE = 50_000


class StoreSettings(BaseModel):
    """Where the index lives."""

    model_config = _STRICT

    path: str = Field(
        default=".contextpipe",
        description="Directory of the embedded store, relative to the project directory.",
    )
    backend: str = Field(
        default="embedded",
        description='Storage backend, by the name its plugin registers: "embedded" (SQLite'
        " FTS5 in one folder) is built in.",
    )
    approximate_vectors_above: int = Field(
        default=APPROXIMATE_VECTORS_ABOVE,
        ge=1,
        description=(
            "The embedded store searches vectors through an approximate index (an inverted"
            " file, faiss) once it holds this many, and exactly below; set it above the"
            " store's size to always search exactly."
        ),
    )
    vector_dtype: Literal["float32", "float16"] = Field(
        default="float32",
        description=(
            'How the embedded store holds the vectors it searches: "float32", or "float16"'
            " (half the memory and disk of the search matrix and approximate index;"
            " similarities within 1e-3 of float32's). The vectors database stays float32,"
            " so changing it rewrites what is searched and loses nothing."
        ),
    )
    options: dict[str, Any] = Field(
        default_factory=dict[str, Any],
        description=(
            "The chosen backend's own settings (a server backend's address, for example),"
            " validated by the backend; see its documentation."
        ),
    )


def _known_tokenizer(value: str) -> str:
    if value not in TOKENIZER_NAMES:
        raise ValueError(f"must be one of {', '.join(TOKENIZER_NAMES)}")
    return value


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

    _known = field_validator("name")(_known_tokenizer)


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
    ask_again_share: float = Field(
        default=0.2,
        ge=0.0,
        lt=1.0,
        description="Share of the request's deadline kept for asking the strategies that"
        " delivered again, with what those that failed or timed out were allotted: every"
        " first answer is due before it.",
    )


class FusionSettings(BaseModel):
    """Reciprocal-rank fusion of the strategies' lists."""

    model_config = _STRICT

    rrf_k: int = Field(
        default=5, gt=0, description="RRF constant k: score = sum(weight / (k + rank))."
    )


class PackingSettings(BaseModel):
    """Choosing what fits in the budget."""

    model_config = _STRICT

    mmr_lambda: float = Field(
        default=1.0,
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
    paraphrase_cosine: float = Field(
        default=0.9,
        gt=0.0,
        le=1.0,
        description="Where both have vectors: the cosine from which a candidate may say what a"
        " selected item says ...",
    )
    paraphrase_overlap: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="... and the share of the shorter one's words the other must hold for it"
        " to be a paraphrase.",
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
    stop_share: float = Field(
        default=0.01,
        ge=0.0,
        lt=1.0,
        description="Packing stops once less than this share of the budget is left"
        " (0: only once nothing fits).",
    )
    stop_tokens: int = Field(
        default=64,
        ge=0,
        description="Packing never stops early with this many tokens left or more.",
    )

    def depth_values(self) -> dict[int, float]:
        """Each detail depth's value relative to full text (9), as packing and the
        strategies that propose several depths of a node weigh them.
        """
        return {9: 1.0, 4: self.depth_value_skeleton, 0: self.depth_value_listing}


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


class EmbeddingSettings(BaseModel):
    """The model that turns text into vectors for the semantic strategies."""

    model_config = _STRICT

    enabled: bool = Field(
        default=True,
        description=(
            "Compute vectors after each `contextpipe index` (the semantic strategies need"
            " them); false: text and graph only, the semantic strategies are skipped."
        ),
    )
    model: str = Field(
        default="minilm",
        description=(
            'Embedder, by the name its plugin registers: "minilm" (all-MiniLM-L6-v2, 384-d)'
            ' and "wordllama" (static word vectors, 256-d, far faster) are built in;'
            " `contextpipe model install NAME` puts the model in place. Changing it re-embeds"
            " the store."
        ),
    )
    batch_size: int = Field(
        default=64,
        ge=1,
        le=4096,
        description=(
            "Texts embedded at a time: vectors are committed after each batch, so an"
            " interrupted run loses at most one."
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
    load_timeout_ms: int = Field(
        default=5000,
        gt=0,
        description="A strategy plugin not built in that is still loading (its import and"
        " its hook) after this long is left out, reported as broken: every command loads"
        " every plugin.",
    )


class StrategySettings(BaseModel):
    """Settings common to every strategy, plus the strategy's own `options`."""

    model_config = _STRICT

    enabled: bool = Field(default=True, description="Run this strategy at all.")
    weight: float | None = Field(
        default=None,
        ge=0.0,
        description=(
            "Allocation and fusion weight (times quality). Unset: the strategy's own default"
            " weight, 1 unless it declares another (relevance: 8)."
        ),
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


#: What a memory item is searched by besides itself (see `ingest/memory.py`, rule 5).
SearchedNeighbours = Literal["none", "previous", "both"]


class MemorySettings(BaseModel):
    """Memory items, pinned items and each session's log of what it was given."""

    model_config = _STRICT

    pinned: list[str] = Field(
        default_factory=list[str],
        description="Always-relevant items: node URIs (uko://...), file paths or globs of"
        " paths (`contextpipe pin` adds more to the store).",
    )
    access_log_assemblies: int = Field(
        default=20,
        ge=0,
        le=10_000,
        description="Assemblies of each session whose delivered items the store remembers"
        " (the tiered strategy's warm tier); 0 keeps none.",
    )
    searched_neighbours: SearchedNeighbours = Field(
        default="previous",
        description="Each remembered turn is also searched (not shown) by the words of the"
        ' turn said before it ("previous": an answer is found by its question), of both'
        ' neighbours ("both"), or by its own alone ("none"); turns remembered together only.',
    )


class ModelSettings(BaseModel):
    """An LLM a chat request may name (`[models."NAME"]`): its window and how to count it.
    A model named here replaces the built-in entry of that name.
    """

    model_config = _STRICT

    window: int = Field(gt=0, description="Context window: input and output tokens together.")
    tokenizer: str = Field(
        default="approx",
        description='How its tokens are counted: "o200k_base", "cl100k_base" or "approx" (an'
        " over-estimate, for models whose vocabulary is not available offline).",
    )
    output_reserve: int = Field(
        default=4096, ge=0, description="Tokens kept free for the answer unless a request says."
    )

    _known = field_validator("tokenizer")(_known_tokenizer)


class McpSettings(BaseModel):
    """`contextpipe mcp` and `/mcp`: what one `get_context` result may hold."""

    model_config = _STRICT

    default_budget: int = Field(
        default=4000,
        gt=0,
        description="Tokens a get_context result takes when the call names none.",
    )
    max_budget: int = Field(
        default=16000,
        gt=0,
        description="Most tokens a get_context result takes, whatever the call asks: agent"
        " hosts cap tool results, and a result must fit, not be cut by the host.",
    )


class ChatSettings(BaseModel):
    """Chat requests (`/v1/chat/assemble`): the caller's messages, with context before them."""

    model_config = _STRICT

    directive: str = Field(
        default="Use the context below where it helps; it may be incomplete or out of date.",
        description="Text injected before the context (a request may give its own, or none).",
    )
    max_budget: int = Field(
        default=8000,
        gt=0,
        description="Most tokens of context a chat request injects when it names no budget"
        " (the model's window left over caps it too).",
    )


class ServiceSettings(BaseModel):
    """`contextpipe serve`: where it listens and how much it takes on at once."""

    model_config = _STRICT

    host: str = Field(
        default="127.0.0.1",
        min_length=1,
        description="Address to bind: loopback only until API tokens guard other binds.",
    )
    port: int = Field(default=8765, ge=0, le=65535, description="Port to bind (0: any free one).")
    grpc_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Port of the gRPC face on the same address (0: any free one; it needs"
        " contextpipe[grpc]); unset: no gRPC.",
    )
    index_roots: list[str] = Field(
        default_factory=list[str],
        description="Folders or files (relative to the project folder) that POST /v1/index"
        " may index; an API call reads no other path.",
    )
    max_running: int = Field(
        default=4, gt=0, le=256, description="Requests assembled at once; more wait in a queue."
    )
    max_queued: int = Field(
        default=64,
        ge=0,
        le=100_000,
        description="Requests waiting for a turn; beyond them a request gets 503 and Retry-After.",
    )
    retry_after_s: int = Field(
        default=1, gt=0, le=3600, description="Seconds a refused request is told to wait."
    )
    # 50 chunks with 3,072-dimension vectors, as JSON, are about 3 MB; 200 with 1,536, 6 MB.
    max_body_bytes: int = Field(
        default=16_777_216,
        gt=0,
        description="Largest request body accepted (413 beyond it), in bytes.",
    )
    shutdown_grace_s: int = Field(
        default=30,
        gt=0,
        le=3600,
        description="On SIGTERM, seconds the requests in flight get to finish.",
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
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    plugins: PluginSettings = Field(default_factory=PluginSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    models: dict[str, ModelSettings] = Field(default_factory=dict[str, ModelSettings])
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
    return _validated(settings.strategy(name).options, model, f"strategies.{name}.options")


def store_options(settings: Settings, model: type[_Options]) -> _Options:
    """The store backend's `[store.options]`, validated by the backend's own pydantic
    `model`, with mistakes reported as `strategy_options` reports them.
    """
    return _validated(settings.store.options, model, "store.options")


def _validated(options: dict[str, Any], model: type[_Options], section: str) -> _Options:
    try:
        return model.model_validate(options)
    except ValidationError as exc:
        where, problem = validation_problem(exc)
        key = section + (f".{where}" if where else "")
        raise ConfigError(f"{key}: {problem}", key) from None

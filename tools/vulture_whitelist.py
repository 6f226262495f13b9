"""Names vulture cannot see being used: read by pydantic, pluggy, click, Python or by plugins."""
# ruff: noqa: B018  (vulture whitelists are bare expressions by design)

import contextpipe
from contextpipe.config import TokenizerSettings
from contextpipe.config.schema import EmbeddingSettings
from contextpipe.contract.capabilities import GraphView, Timeline
from contextpipe.contract.embedding import Embedder
from contextpipe.contract.hookspecs import (
    contextpipe_embedders,
    contextpipe_stores,
    contextpipe_strategies,
)
from contextpipe.core.chat import ChatMetadata, ChatTurn
from contextpipe.core.chunks import KeptChunk, Linkage, OptimizeStats, RemovedChunk
from contextpipe.core.models import AssembledContext, ContextRequest, StrategyReport
from contextpipe.embedders import _bert, _session, minilm, wordllama
from contextpipe.faces import cli
from contextpipe.faces import grpc as grpc_face
from contextpipe.faces.cli import configuring, evaluating, indexing, serving
from contextpipe.faces.service import app
from contextpipe.stores.embedded import _vector_ann
from contextpipe.stores.embedded import backend as embedded

TokenizerSettings._known  # pydantic field validator
ContextRequest._query_not_blank  # pydantic field validator
ContextRequest._scope_in_filters  # pydantic model validator
ContextRequest.focus  # request field, read by focus-aware strategies
AssembledContext.timings_ms  # result field, serialised
StrategyReport.rejected  # report field, serialised
ChatTurn.tool_calls  # chat message fields: validated, counted and sent back as they came
ChatTurn.tool_call_id
ChatMetadata.tokens_in_messages  # chat metadata fields, serialised
ChatMetadata.tokens_injected
ChatMetadata.fragments_injected
ChatMetadata.fragments_available
ChatMetadata.truncated
ChatMetadata.directive_injected
ChatMetadata.fragment_ids
Linkage.SINGLE  # optimize request choices, taken by value from JSON
Linkage.COMPLETE
KeptChunk.cluster  # optimize result fields, serialised
KeptChunk.compressed
RemovedChunk.cluster
OptimizeStats.tokens_out
OptimizeStats.reduction_pct
OptimizeStats.embedding_ms
OptimizeStats.latency_ms
contextpipe_strategies  # pluggy hook specifications, and the embedded store's implementation
contextpipe_stores
embedded.contextpipe_stores
contextpipe_embedders  # the embedder hook, and the built-in embedders' implementations
minilm.contextpipe_embedders
wordllama.contextpipe_embedders
Embedder.space  # the embedder contract: read by the semantic strategies and the indexer
Embedder.embed
minilm.MiniLMEmbedder.space
minilm.MiniLMEmbedder.embed
wordllama.WordLlamaEmbedder.space
wordllama.WordLlamaEmbedder.embed
# protobuf fields and session options, set on onnx and onnxruntime objects
_bert.TensorProto.data_location
_bert.helper.ModelProto.ir_version
_session.BertRunner.intra_op_num_threads
_session.BertRunner.inter_op_num_threads
_session.BertRunner.graph_optimization_level
_session.BertRunner.optimized_model_filepath
_session.BertRunner._keep  # arrays kept alive for the session that reads their memory
# faiss index parameters, set on the SWIG objects faiss reads
_vector_ann.ApproximateIndex.max_points_per_centroid
_vector_ann.ApproximateIndex.nprobe
EmbeddingSettings.batch_size  # texts per batch of the indexer's embedding stage
GraphView.neighbours  # read capabilities strategy plugins call (the store contract suite too)
Timeline.recent
embedded.EmbeddedStore.recent
contextpipe.__getattr__  # module attributes on first use (PEP 562)
contextpipe.__dir__
indexing.init  # click commands
configuring.config_init
configuring.config_show
configuring.schema
configuring.model_install
configuring.model_list
indexing.graph_stats_command
indexing.graph_show
indexing.store_check
serving.token_create
serving.token_list
serving.token_revoke
evaluating.eval_beir
evaluating.eval_fileloc
evaluating.tune_beir
evaluating.eval_locomo
cli.main  # console-script entry point
app.healthz  # HTTP endpoints: FastAPI calls them by route
app.readyz
app.prometheus
app.forget_one
app.forget_all
app.graph_node
grpc_face.grpc_server.AssembleContext  # grpcio calls its servicer's method by the proto's name
BaseException.__context__  # read by Python when an error is printed; `_threads._bare` clears it
BaseException.__cause__

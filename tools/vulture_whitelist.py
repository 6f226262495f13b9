"""Names vulture cannot see being used: read by pydantic, pluggy, click, Python or by plugins."""
# ruff: noqa: B018  (vulture whitelists are bare expressions by design)

import contextpipe
from contextpipe import cli
from contextpipe.config import TokenizerSettings
from contextpipe.hookspecs import contextpipe_stores, contextpipe_strategies
from contextpipe.models import AssembledContext, ContextRequest, StrategyReport
from contextpipe.storage import GraphView, Timeline
from contextpipe.store import embedded

TokenizerSettings._known  # pydantic field validator
ContextRequest._query_not_blank  # pydantic field validator
ContextRequest.focus  # request field, read by focus-aware strategies
AssembledContext.timings_ms  # result field, serialised
StrategyReport.rejected  # report field, serialised
contextpipe_strategies  # pluggy hook specifications, and the embedded store's implementation
contextpipe_stores
embedded.contextpipe_stores
GraphView.neighbours  # read capabilities strategy plugins call (the store contract suite too)
Timeline.recent
embedded.EmbeddedStore.recent
contextpipe.__getattr__  # module attributes on first use (PEP 562)
contextpipe.__dir__
cli.init  # click commands
cli.config_init
cli.config_show
cli.schema
cli.graph_stats_command
cli.graph_show
cli.eval_beir
cli.tune_beir
cli.main  # console-script entry point

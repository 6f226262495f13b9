"""The `contextpipe` command line: a thin layer over `Pipeline`, importing nothing but the
package root. One module per command group: `indexing` (init, index, forget, graph, store),
`asking` (query, strategies, explain), `optimizing` (optimize), `remembering` (remember,
import, forget-memory, pin, unpin), `configuring` (config, model, schema), `evaluating`
(eval, tune), `serving` (serve, mcp, token); `_base` holds what every command shares,
`_progress` the progress display of the long-running ones.
"""

from __future__ import annotations

import gc
from pathlib import Path

import click

# Only plain names the decorators need are imported here (the package root loads each
# name's module on first use); each command imports the rest itself (rich, the pipeline),
# so that `--help` and `--version` load neither.
from ... import CONFIG_FILENAME, __version__, configure_logging
from . import asking, configuring, evaluating, indexing, optimizing, remembering, serving
from ._base import CliContext, fail


@click.group()
@click.version_option(__version__, prog_name="contextpipe")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Config file (default: ./{CONFIG_FILENAME} if present).",
)
@click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store directory (overrides store.path).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log one event per strategy and assembly.")
@click.pass_context
def cli(ctx: click.Context, config: Path | None, store: Path | None, verbose: bool) -> None:
    """Assemble the best context for an LLM request inside a hard token budget."""
    configure_logging("info" if verbose else None)
    if config is not None and not config.is_file():
        fail(f"{config}: config file not found")
    ctx.obj = CliContext(config, store)


for _command in (
    *(indexing.init, indexing.index, indexing.forget, indexing.graph, indexing.store),
    *(asking.query, asking.strategies, asking.explain, optimizing.optimize),
    *(remembering.remember, remembering.import_conversation, remembering.forget_memory),
    *(remembering.pin, remembering.unpin),
    *(configuring.config, configuring.model, configuring.schema),
    *(evaluating.eval_group, evaluating.tune_group),
    *(serving.serve, serving.mcp, serving.token),
):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(prog_name="contextpipe")
    finally:
        # The process ends here. Its exit would otherwise walk every object the command
        # left (modules, the vocabulary, the store's caches) in garbage collections: 0.1 s
        # of a query. Frozen objects are left out of them; exit handlers still run.
        gc.freeze()

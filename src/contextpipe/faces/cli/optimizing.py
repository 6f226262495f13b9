"""`contextpipe optimize`: a caller's own chunks (JSON Lines) in, the ones worth their
tokens out, within the budget (`Pipeline.optimize`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

# Only plain names the decorators need are imported here (see `asking`).
from ... import OutputFormat
from ._base import CliContext, errors, fail, format_option


@click.command()
@click.argument(
    "chunks_file", metavar="CHUNKS.jsonl", type=click.Path(dir_okay=False, allow_dash=True)
)
@click.option("--query", help="What the chunks were retrieved for (embedded when given).")
@click.option("--budget", type=int, required=True, help="Token budget of the output.")
@click.option("--target-k", type=int, help="Most chunks kept.")
@format_option(*(f.value for f in OutputFormat), default=OutputFormat.MARKDOWN.value)
@click.option("--tokenizer", help="Tokenizer for this request (default: tokenizer.name).")
@click.option("--namespace", help="Exact duplicates are found per namespace.")
@click.option("--representative", type=click.Choice(["auto", "centroid", "query", "longest"]))
@click.option("--linkage", type=click.Choice(["single", "complete", "average"]))
@click.option("--cluster-threshold", type=float, help="Cosine at which chunks share a topic.")
@click.option("--dedup-threshold", type=float, help="Cosine at which chunks may say the same.")
@click.option("--mmr-lambda", type=float, help="1 = relevance only, 0 = diversity only.")
@click.option("--no-mmr", is_flag=True, help="Keep the most relevant, without MMR.")
@click.option("--compress", is_flag=True, help="Shrink blanks and cut long structured text.")
@click.pass_obj
def optimize(
    obj: CliContext,
    chunks_file: str,
    query: str | None,
    budget: int,
    target_k: int | None,
    output_format: str,
    tokenizer: str | None,
    namespace: str | None,
    representative: str | None,
    linkage: str | None,
    cluster_threshold: float | None,
    dedup_threshold: float | None,
    mmr_lambda: float | None,
    no_mmr: bool,
    compress: bool,
) -> None:
    """Deduplicate, cluster, diversify and pack the chunks of CHUNKS.jsonl (one JSON
    object per line: id, text, and optionally score, embedding, metadata; `-` reads
    standard input) into the budget.

    markdown and xml print the packed context and a summary line on stderr; json prints
    the whole result (kept chunks, every removed one with its reason, stats).
    """
    chunks = _read_chunks(chunks_file)
    fields: dict[str, Any] = {
        "query": query,
        "target_k": target_k,
        "tokenizer": tokenizer,
        "namespace": namespace,
        "representative": representative,
        "cluster_linkage": linkage,
        "cluster_threshold": cluster_threshold,
        "semantic_dedup_threshold": dedup_threshold,
        "mmr_lambda": mmr_lambda,
    }
    request = {
        "chunks": chunks,
        "token_budget": budget,
        "output": output_format,
        "mmr": not no_mmr,
        "compress": compress,
        **{key: value for key, value in fields.items() if value is not None},
    }
    with errors():
        result = obj.pipeline().optimize(request)
    if output_format == OutputFormat.JSON:
        click.echo(result.model_dump_json(indent=2))
        return
    click.echo(result.text)
    stats = result.stats
    click.echo(
        f"-- {stats.output_chunks} of {stats.input_chunks} chunks, "
        f"{result.tokens_used}/{result.budget} tokens ({result.tokenizer}); removed: "
        f"{stats.exact_duplicates} exact duplicates, {stats.semantic_duplicates} paraphrases, "
        f"{stats.represented} in clusters, {stats.mmr_removed} by MMR, "
        f"{stats.budget_skipped} over budget",
        err=True,
    )


def _read_chunks(name: str) -> list[dict[str, Any]]:
    """The chunks of a JSON Lines file, or one line naming the line at fault."""
    from pydantic import ValidationError

    from ... import Chunk, validation_problem

    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{name}: cannot read it: {exc}")
    chunks: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            chunk = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(f"{name} line {number}: not JSON: {exc.msg} (column {exc.colno})")
        try:
            Chunk.model_validate(chunk)
        except ValidationError as exc:
            where, problem = validation_problem(exc)
            fail(f"{name} line {number}: {where or 'chunk'}: {problem}")
        chunks.append(chunk)
    if not chunks:
        fail(f"{name}: holds no chunk; give one JSON object per line")
    return chunks

"""Steps for the JSON form of an assembled context and its published schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from behave import then, when
from behave.runner import Context
from testkit import result

from contextpipe import AssembledContext, get_tokenizer
from contextpipe.core.models import json_schema


def _fields(listing: str) -> list[str]:
    return [name.strip() for name in listing.split(",")]


def _entries(document: Any, path: str) -> list[dict[str, Any]]:
    """Objects at `path`, where `a[].b` means "field b of every entry of list a"."""
    nodes: list[Any] = [document]
    for part in path.split("."):
        many = part.endswith("[]")
        name = part.removesuffix("[]")
        nodes = [node[name] for node in nodes]
        if many:
            nodes = [entry for node in nodes for entry in node]
    flat: list[Any] = []
    for node in nodes:
        flat.extend(cast(list[Any], node) if isinstance(node, list) else [node])
    return cast(list[dict[str, Any]], flat)


@when("I read the assembled context as JSON")
def read_json(context: Context) -> None:
    context.json = json.loads(result(context).to_json())


@when("I read the JSON back into an AssembledContext")
def read_back(context: Context) -> None:
    context.read_back = AssembledContext.model_validate_json(result(context).to_json())


@then("it equals the assembled context, with the same dropped entries in the same order")
def read_back_equal(context: Context) -> None:
    original, back = result(context), context.read_back
    assert original.dropped, "nothing was dropped: the scenario needs a smaller budget"
    assert back == original
    assert list(back.dropped) == list(original.dropped)
    assert [entry.reason for entry in back.dropped] == [d.reason for d in original.dropped]
    assert back.to_json() == original.to_json()


@when("I generate the JSON schema of the assembled context")
def generate_schema(context: Context) -> None:
    context.schema = json_schema()


@then("it is exactly docs/assembled-context.schema.json")
def schema_published(context: Context) -> None:
    published = Path(__file__).resolve().parents[2] / "docs" / "assembled-context.schema.json"
    assert json.loads(published.read_text(encoding="utf-8")) == context.schema, (
        "docs/assembled-context.schema.json is stale: run `contextpipe schema` into it"
    )


@then('the JSON has the fields "{fields}"')
def json_has_fields(context: Context, fields: str) -> None:
    missing = [name for name in _fields(fields) if name not in context.json]
    assert not missing, f"missing {missing}; the JSON has {sorted(context.json)}"


@then('the JSON field "{name}" is "{value}"')
def json_field_is_text(context: Context, name: str, value: str) -> None:
    assert context.json[name] == value, f"{name} is {context.json[name]!r}"


@then('the JSON field "{name}" is {value:d}')
def json_field_is_number(context: Context, name: str, value: int) -> None:
    assert context.json[name] == value, f"{name} is {context.json[name]!r}"


@then('the JSON field "tokens_used" is at most the budget')
def json_tokens_within_budget(context: Context) -> None:
    assert 0 < context.json["tokens_used"] <= context.json["budget"], context.json["tokens_used"]


@then('every entry of "{path}" has the fields "{fields}"')
def entries_have_fields(context: Context, path: str, fields: str) -> None:
    entries = _entries(context.json, path)
    assert entries, f"the JSON has no entry at {path}; choose a request that fills it"
    for entry in entries:
        missing = [name for name in _fields(fields) if name not in entry]
        assert not missing, f"an entry of {path} lacks {missing}: {entry}"


@then("every fragment's token_count is the token count of its text")
def token_counts_are_exact(context: Context) -> None:
    tokenizer = get_tokenizer(context.json["tokenizer"])
    for fragment in context.json["fragments"]:
        assert fragment["token_count"] == tokenizer.count(fragment["text"]), fragment["id"]


@then(
    'the first fragment was proposed by "{strategy}" of plugin "{plugin}"'
    ' with a reason mentioning "{words}"'
)
def first_fragment_provenance(context: Context, strategy: str, plugin: str, words: str) -> None:
    vote = context.json["fragments"][0]["provenance"][0]
    assert (vote["strategy"], vote["plugin"], vote["rank"]) == (strategy, plugin, 1), vote
    assert words in vote["reason"], vote


@then('the JSON report of "{name}" has status "{status}"')
def json_report_status(context: Context, name: str, status: str) -> None:
    reports = {entry["name"]: entry for entry in context.json["strategies"]}
    assert reports[name]["status"] == status, reports[name]


# -- the schema ------------------------------------------------------------------------------


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref` and single-branch `anyOf`/`allOf` to the object that describes a value."""
    while True:
        if "$ref" in node:
            name = str(node["$ref"]).removeprefix("#/$defs/")
            node = schema["$defs"][name]
        elif "allOf" in node and len(node["allOf"]) == 1:
            node = node["allOf"][0]
        else:
            return node


def _describes(schema: dict[str, Any], path: str) -> bool:
    node = schema
    for part in path.split("."):
        node = _resolve(schema, node)
        name = part.removesuffix("[]")
        properties = node.get("properties", {})
        if name not in properties:
            return False
        node = _resolve(schema, properties[name])
        if part.endswith("[]"):
            if node.get("type") != "array":
                return False
            node = node["items"]
    return True


@then("the schema describes these fields:")
def schema_describes(context: Context) -> None:
    missing = [
        row["field"] for row in context.table if not _describes(context.schema, row["field"])
    ]
    assert not missing, f"the schema does not describe {missing}"


def _paths(value: Any, prefix: str = "") -> set[str]:
    """Every field path in a JSON value, lists written as `name[]`."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, child in cast(dict[str, Any], value).items():
            path = f"{prefix}{key}"
            found.add(path)
            if isinstance(child, list):
                for entry in cast(list[Any], child):
                    found |= _paths(entry, f"{path}[].")
            elif isinstance(child, dict) and key not in {"metadata", "timings_ms"}:
                found |= _paths(child, f"{path}.")
    return found


@then("every field of the JSON output is described by the schema")
def output_fields_in_schema(context: Context) -> None:
    paths = _paths(context.json)
    undescribed = sorted(path for path in paths if not _describes(context.schema, path))
    assert not undescribed, f"the schema does not describe {undescribed}"

"""Steps for the four renderers: markdown, xml, json and chat messages."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from behave import given, then, when
from behave.runner import Context
from testkit import assemble, pipeline, result, write_files

from contextpipe import ChatMessage, ContextFragment, ContextRequest, OutputFormat, get_tokenizer
from contextpipe.assembly.rendering import Rendered, renderer_for


@then('every fragment has a markdown header "### <path>:<start>-<end>"')
def markdown_headers(context: Context) -> None:
    assembled = result(context)
    assert assembled.fragments, "the context is empty"
    lines = assembled.text.splitlines()
    for fragment in assembled.fragments:
        source = fragment.source
        header = f"### {source.path}:{source.start_line}-{source.end_line}"
        assert any(line.startswith(header) for line in lines), f"no header {header!r}"


@then('the code fragment of "{path}" is in a fenced python block')
def fenced_code(context: Context, path: str) -> None:
    assembled = result(context)
    code = [f for f in assembled.fragments if f.source.path == path and f.detail_depth == 9]
    assert code, f"no full-text fragment of {path} in the context"
    for fragment in code:
        assert f"```python\n{fragment.text}\n```" in assembled.text, fragment.uko_uri


@then("the rendered text holds every fragment's text in the context's order")
def texts_in_order(context: Context) -> None:
    assembled = result(context)
    position = 0
    for fragment in assembled.fragments:
        found = assembled.text.find(fragment.text, position)
        assert found >= 0, f"{fragment.uko_uri} is missing or out of order"
        position = found + len(fragment.text)


@then("the rendered text is well-formed XML with one document per fragment")
def xml_documents(context: Context) -> None:
    root = ET.fromstring(result(context).text)
    assert root.tag == "documents", root.tag
    context.documents = root.findall("document")
    assert len(context.documents) == len(result(context).fragments) > 0


@then("every document has the source path and lines of its fragment as attributes")
def xml_attributes(context: Context) -> None:
    for document, fragment in zip(context.documents, result(context).fragments, strict=True):
        source = fragment.source
        assert document.get("source") == source.path, document.attrib
        assert document.get("lines") == f"{source.start_line}-{source.end_line}", document.attrib


@then("""every document's text is its fragment's text, with "<" and "&" escaped""")
def xml_text(context: Context) -> None:
    escaped = 0
    for document, fragment in zip(context.documents, result(context).fragments, strict=True):
        assert document.text == f"\n{fragment.text}\n", fragment.uko_uri
        escaped += "<" in fragment.text or "&" in fragment.text
    assert escaped, "no fragment had text to escape; the sample code should"


@then("the rendered text parses as a JSON list with one object per fragment")
def json_list(context: Context) -> None:
    context.objects = json.loads(result(context).text)
    assert isinstance(context.objects, list)
    assert len(context.objects) == len(result(context).fragments) > 0


@then("every object has the source, lines and text of its fragment")
def json_objects(context: Context) -> None:
    for entry, fragment in zip(context.objects, result(context).fragments, strict=True):
        source = fragment.source
        assert entry["source"] == source.path, entry
        assert entry["lines"] == [source.start_line, source.end_line], entry
        assert entry["text"] == fragment.text, entry


@then('the rendered text contains "{first}" and "{second}" as they are')
def unicode_kept(context: Context, first: str, second: str) -> None:
    text = result(context).text
    assert first in text and second in text, "unicode was escaped or lost"


@when('I ask for "{query}" within {budget:d} tokens as messages after this conversation:')
def ask_with_conversation(context: Context, query: str, budget: int) -> None:
    context.conversation = tuple(
        ChatMessage(role=row["role"], content=row["content"])  # type: ignore[arg-type]
        for row in context.table
    )
    request = ContextRequest(
        query=query, budget=budget, output=OutputFormat.MESSAGES, messages=context.conversation
    )
    assemble(context, request)


@then("the first message is a system message carrying the context")
def system_message(context: Context) -> None:
    assembled = result(context)
    first = assembled.messages[0]
    assert first.role == "system", first
    assert assembled.fragments, "the context is empty"
    for fragment in assembled.fragments:
        assert fragment.text in first.content, fragment.uko_uri
    assert first.content == assembled.text


@then("the other messages are the conversation, in order")
def conversation_kept(context: Context) -> None:
    assert result(context).messages[1:] == context.conversation, result(context).messages[1:]


@then("the budget counts every message")
def budget_counts_messages(context: Context) -> None:
    assembled = result(context)
    counted = Rendered(assembled.text, assembled.messages).counted
    for message in assembled.messages:
        assert message.content in counted
    tokens = get_tokenizer(assembled.tokenizer).count(counted)
    assert assembled.tokens_used == tokens <= assembled.budget, (assembled.tokens_used, tokens)


@then('the last message is from the user and says "{text}"')
def last_message(context: Context, text: str) -> None:
    last = result(context).messages[-1]
    assert (last.role, last.content) == ("user", text), last


_BREAKS = {"line feed": "\n", "carriage return": "\r", "Unicode line separator": "\u2028"}


@given('a file in "{folder}" named "{first}", a {kind}, then "{second}", containing:')
def file_named_with_break(
    context: Context, folder: str, first: str, kind: str, second: str
) -> None:
    context.odd_path = f"{folder}/{first}{_BREAKS[kind]}{second}"
    context.injected = second.split(".")[0]  # the line its name would add: "### SYSTEM: ..."
    write_files(context.project, {context.odd_path: context.text + "\n"})


def _odd_fragments(context: Context) -> list[ContextFragment]:
    store = pipeline(context).store
    nodes = [node for node in store.nodes() if node.path == context.odd_path]
    assert nodes, f"{context.odd_path!r} was not indexed"
    fragments = [fragment for node in nodes for fragment in store.variants(node.uri)]
    assert {0, 9} <= {f.detail_depth for f in fragments}, "a listing and a full text expected"
    return fragments


def _no_injected_line(context: Context, text: str, where: str) -> None:
    injected = [
        line for line in text.splitlines() if line.lstrip("- ").startswith(context.injected)
    ]
    assert not injected, f"{where}: the file name added the line {injected[0]!r}"


def _rendered(context: Context, output: OutputFormat) -> Rendered:
    request = ContextRequest(query="zebra notes", budget=2000, output=output)
    return renderer_for(output).render(_odd_fragments(context), request)


@then("rendering every stored text of that file, in every format, adds no line from its name")
def no_line_from_name(context: Context) -> None:
    for output in OutputFormat:
        rendered = _rendered(context, output)
        _no_injected_line(context, rendered.counted, output.value)
        for message in rendered.messages:
            _no_injected_line(context, message.content, f"{output.value} {message.role}")


@then('markdown names the file with the {kind} written as "{written}"')
def markdown_name(context: Context, kind: str, written: str) -> None:
    shown = context.odd_path.replace(_BREAKS[kind], written)
    text = _rendered(context, OutputFormat.MARKDOWN).text
    assert f"### {shown}:1-1" in text, f"no header naming {shown!r} in {text!r}"


@then('json gives its name exactly, and xml with the {kind} written as "{written}"')
def json_and_xml_name(context: Context, kind: str, written: str) -> None:
    entries = json.loads(_rendered(context, OutputFormat.JSON).text)
    assert {entry["source"] for entry in entries} == {context.odd_path}, entries
    root = ET.fromstring(_rendered(context, OutputFormat.XML).text)
    shown = context.odd_path.replace(_BREAKS[kind], written)
    assert {document.get("source") for document in root} == {shown}, root


@then("the context holds that file, and no line from its name")
def context_without_injection(context: Context) -> None:
    assembled = result(context)
    paths = {fragment.source.path for fragment in assembled.fragments}
    assert context.odd_path in paths, f"{context.odd_path!r} not in {paths}"
    _no_injected_line(context, assembled.text, "the assembled context")

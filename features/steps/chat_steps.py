"""Steps of chat requests: messages in, the same messages with context before them out."""

from __future__ import annotations

import json
import threading
from typing import Any

from behave import given, then, when
from behave.runner import Context
from testkit import left_for_the_collector, pipeline

from contextpipe import (
    ChatContext,
    ContextpipeError,
    RequestFilters,
    RequestScope,
    get_tokenizer,
)

# What `contextpipe.pipeline.chat` counts for a message besides its content.
MESSAGE_TOKENS = 4


def _send(context: Context, body: dict[str, Any]) -> None:
    context.chat_body, context.chat, context.error = body, None, None
    try:
        context.chat = pipeline(context).assemble_chat(body)
    except ContextpipeError as exc:
        context.error = exc


def _chat(context: Context) -> ChatContext:
    assert context.error is None, f"the chat request failed: {context.error}"
    assert context.chat is not None
    return context.chat


def _sent_messages(context: Context) -> list[dict[str, Any]]:
    return context.chat_body["messages"]


def _answered(chat: ChatContext) -> list[dict[str, Any]]:
    return json.loads(chat.model_dump_json(exclude_unset=True))["messages"]


@when("I send the chat request:")
def send_chat_request(context: Context) -> None:
    _send(context, json.loads(context.text))


@when('I send a "{model}" chat request whose user message is "{words}" repeated {times:d} times')
def send_long_chat_request(context: Context, model: str, words: str, times: int) -> None:
    text = " ".join([words] * times)
    _send(context, {"model": model, "messages": [{"role": "user", "content": text}]})


@when('I send the same chat request with a tool definition of the "{name}" tool')
def send_with_tool(context: Context, name: str) -> None:
    context.before = _chat(context)
    tool = {
        "type": "function",
        "function": {
            "name": name,
            "description": "Search the project's documentation for a phrase.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    _send(context, {**context.chat_body, "tools": [tool]})


@when('I send a chat request about "{query}" for session "{session}" with a deadline of {ms:d} ms')
def send_with_deadline(context: Context, query: str, session: str, ms: int) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": query}]}
    _send(context, body | {"session": session, "deadline_ms": ms})


@when('I send {times:d} chat requests about "{query}" with the collector off')
def send_collector_off(context: Context, times: int, query: str) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": query}]}
    _send(context, body)  # what the first request loads once is not garbage

    def sending() -> None:
        for _ in range(times):
            _send(context, body)
            _chat(context)

    left_for_the_collector(context, sending)


@given("the store's checks are held until released")
def checks_held(context: Context) -> None:
    store = pipeline(context).store
    check = store.check
    context.release = threading.Event()

    def held() -> None:
        context.release.wait()
        check()

    store.check = held  # type: ignore[method-assign]
    context.add_cleanup(context.release.set)


@given("the store's checks fail with ValueError")
def checks_fail(context: Context) -> None:
    def failing() -> None:
        raise ValueError("a check that breaks")

    pipeline(context).store.check = failing  # type: ignore[method-assign]


@when("the store's checks are released and the late assembly has finished")
def release_checks(context: Context) -> None:
    context.release.set()
    for thread in threading.enumerate():
        if thread.name == "contextpipe-chat":
            thread.join()


@then("the chat answer is the injected context followed by the caller's messages, unchanged")
def context_then_messages(context: Context) -> None:
    answered = _answered(_chat(context))
    assert answered[0]["role"] == "system", answered[0]
    assert set(answered[0]) == {"role", "content"}, answered[0]
    assert answered[1:] == _sent_messages(context), answered[1:]


@then('the chat answer is the caller\'s messages, unchanged, with fallback "{reason}"')
def messages_unchanged(context: Context, reason: str) -> None:
    chat = _chat(context)
    assert _answered(chat) == _sent_messages(context), _answered(chat)
    meta = chat.metadata
    assert meta.fallback_reason == reason, meta
    assert (meta.fragments_injected, meta.tokens_injected, meta.fragment_ids) == (0, 0, ()), meta
    assert not meta.directive_injected, meta


@then('the injected message starts with "{words}"')
def injected_starts(context: Context, words: str) -> None:
    content = _chat(context).messages[0].content
    assert isinstance(content, str) and content.startswith(words), content


@then('the injected context holds the fragment "{heading}"')
def injected_holds(context: Context, heading: str) -> None:
    content = _chat(context).messages[0].content
    assert isinstance(content, str) and heading in content, content


@then("the chat metadata says no fallback, with the injected fragments' ids")
def metadata_ids(context: Context) -> None:
    chat = _chat(context)
    meta = chat.metadata
    assert meta.fallback_reason == "", meta
    assert meta.fragments_injected == len(meta.fragment_ids) > 0, meta
    content = chat.messages[0].content
    assert isinstance(content, str)
    assert meta.fragments_available >= meta.fragments_injected, meta
    assert meta.request_id, meta


@then("the injected message takes the tokens the metadata says, within the budget")
def injected_tokens(context: Context) -> None:
    chat = _chat(context)
    content = chat.messages[0].content
    assert isinstance(content, str)
    tokens = MESSAGE_TOKENS + get_tokenizer("o200k_base").count(content)
    assert chat.metadata.tokens_injected == tokens, (chat.metadata, tokens)
    directive = get_tokenizer("o200k_base").count(content.split("\n\n", 1)[0])
    assert tokens - directive - MESSAGE_TOKENS <= chat.metadata.budget, chat.metadata


@then("the chat context's budget is the window less the messages, the reserve and its own message")
def window_budget(context: Context) -> None:
    meta = _chat(context).metadata
    directive = get_tokenizer("o200k_base").count(
        pipeline(context).settings.chat.directive + "\n\n"
    )
    own = MESSAGE_TOKENS + 2 + directive  # its message, the seam, the directive
    assert meta.window == 900, meta
    assert meta.budget == 900 - meta.tokens_in_messages - 100 - own, meta
    assert meta.budget < pipeline(context).settings.chat.max_budget, meta


@then("the messages and the injected message together fit the window less the reserve")
def fits_window(context: Context) -> None:
    meta = _chat(context).metadata
    assert meta.tokens_injected > 0, meta
    assert meta.tokens_in_messages + meta.tokens_injected <= 900 - 100, meta
    assert meta.window_used == round((meta.tokens_in_messages + meta.tokens_injected) / 900, 4)


@then("the chat metadata says it was truncated")
def truncated(context: Context) -> None:
    meta = _chat(context).metadata
    assert meta.truncated and meta.fragments_available > meta.fragments_injected, meta


@then("the messages cost more and the budget is smaller by as much")
def tools_cost(context: Context) -> None:
    before, after = context.before.metadata, _chat(context).metadata
    more = after.tokens_in_messages - before.tokens_in_messages
    assert more > 20, (before, after)  # the tool's JSON definition
    assert before.budget - after.budget == more, (before, after)


@then("the chat request fails with {quoted}")
def chat_fails(context: Context, quoted: str) -> None:
    message = quoted[1:-1].replace("\\'", "'")
    assert context.error is not None, "the chat request did not fail"
    assert str(context.error) == message, str(context.error)


@then("the chat metadata says the window is not known")
def window_unknown(context: Context) -> None:
    meta = _chat(context).metadata
    assert (meta.window, meta.window_used, meta.budget) == (None, None, 200), meta


@then("the chat metadata says no directive was injected")
def no_directive(context: Context) -> None:
    meta = _chat(context).metadata
    assert not meta.directive_injected and meta.fragments_injected > 0, meta


def _recently_given(context: Context, session: str) -> list[str]:
    sessions = pipeline(context).store.backends(RequestScope(session=session)).sessions
    assert sessions is not None
    return [f.uko_uri for f in sessions.recently_used(50, RequestFilters(session=session))]


@then('session "{session}" was given nothing lately')
def given_nothing(context: Context, session: str) -> None:
    assert _recently_given(context, session) == []


@then('session "{session}" was given the injected fragments lately')
def given_injected(context: Context, session: str) -> None:
    given = _recently_given(context, session)
    assert len(given) == _chat(context).metadata.fragments_injected > 0, given

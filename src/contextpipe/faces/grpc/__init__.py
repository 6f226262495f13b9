"""The gRPC face (the optional extra `contextpipe[grpc]`, grpcio): the
`ContextAssemblyService.AssembleContext` contract of `context_assembly.proto`, served by
`contextpipe serve --grpc-port P` beside the HTTP API, over the same `Pipeline.assemble_chat`
as `POST /v1/chat/assemble`.

Rules:

1. The proto file is the contract; its message classes are built from it when the face
   starts (grpcio-tools), so no generated code is kept in the repository.
2. `session_id` is the request's session, `agent_id` its user (whose memory it may see);
   `budget` and `deadline_ms` of 0 mean the configured ones.
3. Like the HTTP chat endpoint, a failure of contextpipe's never fails the call: the
   messages come back untouched with `fallback_reason`. Bad input is INVALID_ARGUMENT
   with one line; more calls than `max_running + max_queued` at once get
   RESOURCE_EXHAUSTED.
4. Once API tokens exist (`..tokens`), a call needs one in its `authorization` metadata
   (`Bearer T`): UNAUTHENTICATED without a known one, PERMISSION_DENIED beyond its scope.
"""

from __future__ import annotations

import json
from concurrent import futures
from typing import Any

import grpc

from ... import ChatContext, ChatTurn, ContextpipeError, Pipeline, Settings
from ..tokens import Guard, ScopeError, TokenBook, UnknownTokenError, tokens_path

#: The contract, as found on the import path (beside this module in the package).
PROTO = "contextpipe/faces/grpc/context_assembly.proto"


def grpc_server(pipeline: Pipeline, settings: Settings, host: str, port: int) -> tuple[Any, int]:
    """A started gRPC server over `pipeline` on `host:port` (0: any free port), and the
    port it bound; the caller stops it.
    """
    protos, services = grpc.protos_and_services(PROTO)
    limits = settings.service
    book = TokenBook(tokens_path(pipeline))

    class Servicer(services.ContextAssemblyServiceServicer):
        def AssembleContext(self, request: Any, context: Any) -> Any:  # noqa: N802 (the contract's name)
            chat = _chat_request(request)
            try:
                chat["session"], chat["user"] = _guard(book, context).reading(
                    chat.get("session"), chat.get("user")
                )
                answer = pipeline.assemble_chat(chat)
            except ScopeError as exc:
                context.abort(grpc.StatusCode.PERMISSION_DENIED, str(exc))
                raise  # abort raised already; this keeps type checkers informed
            except ContextpipeError as exc:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
                raise
            return _response(protos, answer)

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=limits.max_running),
        maximum_concurrent_rpcs=limits.max_running + limits.max_queued,
    )
    services.add_ContextAssemblyServiceServicer_to_server(Servicer(), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    server.start()
    return server, bound


def _guard(book: TokenBook, context: Any) -> Guard:
    """Rule 4: the guard of the call's token (no limits while no tokens exist)."""
    said = dict(context.invocation_metadata()).get("authorization")
    try:
        caller = book.caller(said)
    except UnknownTokenError as exc:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, f"{exc} (metadata authorization)")
        raise  # abort raised already; this keeps type checkers informed
    return Guard(caller)


def _chat_request(request: Any) -> dict[str, Any]:
    """Rule 2: the chat request a gRPC request stands for."""
    fields: dict[str, Any] = {
        "model": request.model,
        "messages": [_turn(message) for message in request.messages],
        "session": request.session_id or None,
        "user": request.agent_id or None,
        "request_id": request.request_id or None,
        "budget": request.budget or None,
        "deadline_ms": request.deadline_ms or None,
    }
    return {key: value for key, value in fields.items() if value is not None}


def _turn(message: Any) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name:
        turn["name"] = message.name
    if message.tool_call_id:
        turn["tool_call_id"] = message.tool_call_id
    if message.tool_calls_json:
        try:
            turn["tool_calls"] = json.loads(message.tool_calls_json)
        except ValueError:
            raise ContextpipeError("messages: tool_calls_json is not JSON") from None
    return turn


def _response(protos: Any, answer: ChatContext) -> Any:
    meta = answer.metadata
    return protos.AssembleContextResponse(
        messages=[_message(protos, turn) for turn in answer.messages],
        metadata=protos.InjectionMetadata(
            directive_injected=meta.directive_injected,
            memories_injected=meta.fragments_injected,
            memories_available=meta.fragments_available,
            total_tokens_injected=meta.tokens_injected,
            context_window_used=meta.window_used or 0.0,
            was_truncated=meta.truncated,
            fallback_reason=meta.fallback_reason,
            memory_ids=list(meta.fragment_ids),
            request_id=meta.request_id,
        ),
    )


def _message(protos: Any, turn: ChatTurn) -> Any:
    return protos.ChatMessage(
        role=turn.role,
        content=turn.text,
        name=turn.name or "",
        tool_call_id=turn.tool_call_id or "",
        tool_calls_json=json.dumps(turn.tool_calls) if turn.tool_calls else "",
    )

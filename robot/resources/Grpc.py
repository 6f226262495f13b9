"""Robot keywords that call the gRPC face as a client in another language would: stubs
generated from the repository's proto file by protoc (grpcio-tools), a channel to the
running `contextpipe serve --grpc-port`.
"""

from __future__ import annotations

import atexit
import importlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc
from grpc_tools import protoc

PROTO = Path(__file__).resolve().parents[2] / "src/contextpipe/faces/grpc/context_assembly.proto"
#: A call ends long before this (ten times what a busy machine needs).
PATIENCE_S = 60.0


class Grpc:
    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._out = Path(tempfile.mkdtemp(prefix="contextpipe-grpc-stubs-"))
        atexit.register(shutil.rmtree, self._out, ignore_errors=True)  # robot runs in-process
        status = protoc.main(
            [
                "protoc",
                f"-I{PROTO.parent}",
                f"--python_out={self._out}",
                f"--grpc_python_out={self._out}",
                str(PROTO),
            ]
        )
        if status != 0:
            raise AssertionError(f"protoc failed on {PROTO}")
        sys.path.insert(0, str(self._out))
        self._pb = importlib.import_module("context_assembly_pb2")
        self._stubs = importlib.import_module("context_assembly_pb2_grpc")
        self._target = ""

    def grpc_address_of(self, lines: str) -> str:
        """The `HOST:PORT` the service said it serves gRPC on."""
        found = re.search(r"serving gRPC on (\S+)", lines)
        if not found:
            raise AssertionError(f"no gRPC address in: {lines}")
        self._target = found.group(1)
        return self._target

    def assemble_context(self, messages: str, token: str = "", **fields: Any) -> dict[str, Any]:
        """`AssembleContext` with `messages` (a JSON list of role/content/...) and `token` in
        the `authorization` metadata, if given; the answer as plain data, or `{"code": ...,
        "details": ...}` for an error status.
        """
        turns = [
            self._pb.ChatMessage(
                **{k: v for k, v in turn.items() if k != "tool_calls"},
                tool_calls_json=json.dumps(turn["tool_calls"]) if "tool_calls" in turn else "",
            )
            for turn in json.loads(messages)
        ]
        request = self._pb.AssembleContextRequest(messages=turns, **fields)
        with grpc.insecure_channel(self._target) as channel:
            stub = self._stubs.ContextAssemblyServiceStub(channel)
            try:
                metadata = (("authorization", f"Bearer {token}"),) if token else None
                answer = stub.AssembleContext(request, timeout=PATIENCE_S, metadata=metadata)
            except grpc.RpcError as exc:
                return {"code": exc.code().name, "details": exc.details()}
        meta = answer.metadata
        return {
            "messages": [
                {
                    key: value
                    for key, value in (
                        ("role", m.role),
                        ("content", m.content),
                        ("name", m.name),
                        ("tool_call_id", m.tool_call_id),
                        ("tool_calls", json.loads(m.tool_calls_json) if m.tool_calls_json else ""),
                    )
                    if value
                }
                for m in answer.messages
            ],
            "metadata": {
                "directive_injected": meta.directive_injected,
                "memories_injected": meta.memories_injected,
                "memories_available": meta.memories_available,
                "total_tokens_injected": meta.total_tokens_injected,
                "context_window_used": meta.context_window_used,
                "was_truncated": meta.was_truncated,
                "fallback_reason": meta.fallback_reason,
                "memory_ids": list(meta.memory_ids),
                "request_id": meta.request_id,
            },
        }

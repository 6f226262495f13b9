"""`contextpipe.Client`: the service (`contextpipe serve`) from Python, with the methods of
`Pipeline` an application calls per request, so that switching between in-process and
remote is one line:

    pipeline = Pipeline.open()                      # in this process
    pipeline = Client("http://127.0.0.1:8765")      # in the service

Rules:

1. Each method takes the arguments of the `Pipeline` method of the same name and returns
   what it returns, read back from the service's JSON into the same models.
2. An error the service answers (4xx, 503) raises `ContextpipeError` with its one line;
   the status and, when the service was busy, its `Retry-After` are in the message.
3. It holds one connection pool (httpx); `close` (or `with`) releases it.
4. `token` (from `contextpipe token create`) is sent as the bearer token of every call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Self, cast

import httpx
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from .. import (
    AssembledContext,
    ChatContext,
    ChatRequest,
    ContextpipeError,
    ContextRequest,
    MemoryItem,
    MemoryScope,
    OptimizedContext,
    OptimizeRequest,
)


class Client:
    def __init__(
        self,
        url: str = "http://127.0.0.1:8765",
        *,
        token: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else None
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def assemble(self, request_or_query: ContextRequest | str, **fields: Any) -> AssembledContext:
        """`Pipeline.assemble` in the service."""
        if isinstance(request_or_query, ContextRequest):
            body = request_or_query.model_dump(mode="json") | _set(fields)
        else:
            body = {"query": request_or_query, **_set(fields)}
        # Fields may be models, times or enums, as `Pipeline.assemble` takes them.
        answer = self._call("POST", "/v1/assemble", json=to_jsonable_python(body))
        return AssembledContext.model_validate_json(answer.content)

    def assemble_chat(self, request: ChatRequest | Mapping[str, Any]) -> ChatContext:
        """`Pipeline.assemble_chat` in the service."""
        answer = self._call("POST", "/v1/chat/assemble", json=_body(request))
        return ChatContext.model_validate_json(answer.content)

    def optimize(self, request: OptimizeRequest | Mapping[str, Any]) -> OptimizedContext:
        """`Pipeline.optimize` in the service."""
        answer = self._call("POST", "/v1/optimize", json=_body(request))
        return OptimizedContext.model_validate_json(answer.content)

    def remember(
        self,
        text: str,
        *,
        session: str | None = None,
        user: str | None = None,
        at: datetime | None = None,
        item_id: str | None = None,
        speaker: str = "",
    ) -> MemoryItem:
        """`Pipeline.remember` in the service."""
        note = {"text": text, "session": session, "user": user, "id": item_id}
        note |= {"at": at.isoformat() if at else None, "speaker": speaker}
        found = self._call("POST", "/v1/memory", json=_set(note)).json()
        return MemoryItem(
            id=found["id"],
            text=found["text"],
            at=datetime.fromisoformat(found["at"]),
            scope=MemoryScope(found["scope"]),
            owner=found["owner"],
            speaker=found["speaker"],
        )

    def forget_memory(
        self,
        *,
        session: str | None = None,
        user: str | None = None,
        everything_global: bool = False,
        ids: Sequence[str] = (),
    ) -> int:
        """`Pipeline.forget_memory` in the service."""
        scope = _set({"session": session, "user": user})
        if not ids:
            query = scope | ({"global": "true"} if everything_global else {})
            return int(self._call("DELETE", "/v1/memory", params=query).json()["forgotten"])
        forgotten = 0
        for item_id in ids:
            answer = self._call("DELETE", f"/v1/memory/{item_id}", params=scope, missing=True)
            forgotten += answer.json()["forgotten"] if answer.status_code == 200 else 0
        return forgotten

    def pin(self, target: str) -> None:
        """`Pipeline.pin` in the service."""
        self._call("POST", "/v1/pins", json={"target": target})

    def unpin(self, target: str) -> bool:
        """`Pipeline.unpin` in the service."""
        answer = self._call("DELETE", "/v1/pins", params={"target": target}, missing=True)
        return answer.status_code == 200

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def _call(
        self, method: str, path: str, *, missing: bool = False, **send: Any
    ) -> httpx.Response:
        """One request; its error as rule 2 says (404 returned when `missing` is expected)."""
        try:
            answer = self._http.request(method, path, **send)
        except httpx.HTTPError as exc:
            raise ContextpipeError(f"{self._http.base_url}: {exc}") from None
        if answer.is_success or (missing and answer.status_code == 404):
            return answer
        raise ContextpipeError(f"service answered {answer.status_code}: {_detail(answer)}")


def _set(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def _detail(answer: httpx.Response) -> str:
    try:
        found: Any = answer.json()
    except ValueError:
        return answer.text.strip() or answer.reason_phrase
    detail: Any = cast(dict[str, Any], found).get("detail", found)
    if isinstance(detail, list):  # FastAPI's validation errors: each field and problem
        problems = cast(list[dict[str, Any]], detail)
        detail = "; ".join(
            f"{'.'.join(str(part) for part in problem.get('loc', ()))}: {problem.get('msg')}"
            for problem in problems
        )
    retry = answer.headers.get("retry-after")
    return f"{detail} (retry after {retry} s)" if retry else str(detail)


def _body(request: BaseModel | Mapping[str, Any]) -> Any:
    """A request model's fields as the caller set them, or its fields as given, as JSON."""
    if isinstance(request, BaseModel):
        return request.model_dump(mode="json", exclude_unset=True)
    return to_jsonable_python(request)

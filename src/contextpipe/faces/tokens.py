"""API tokens: who may ask the service what.

Rules:

1. A token is made by `contextpipe token create --user U [--session S]` and shown once;
   the store's folder keeps only its SHA-256 (`tokens.json`, readable by its owner only),
   with the scope it is bound to. Tokens are long random strings, so a fast hash suffices.
2. Once a token exists, every `/v1/*` and `/mcp` call needs one (`Authorization: Bearer
   T`): 401 without a known one. Health, readiness, metrics and the schema stay open.
3. The token's scope is the request's scope: a request may name the token's user and
   session or leave them out (then they are the token's), never others (403). A token
   without a session reads no session's memory.
4. What changes every request (global memory, pins, index runs) is refused to tokens
   (403): a token speaks for one user.
5. The file is read again when it changes: a revoked token stops working at once.
6. Every face asks `Guard.current()`: the caller the service's authorization found for the
   request being served (`CALLER`), or no limits where no tokens exist (stdio, CLI).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import ContextpipeError, Pipeline

TOKENS_FILE = "tokens.json"
_PREFIX = "cp_"


class ScopeError(ContextpipeError):
    """A request reaches beyond its token's scope (403)."""


class UnknownTokenError(ContextpipeError):
    """Tokens exist and the request carries none of them (401)."""


@dataclass(frozen=True)
class TokenScope:
    """The user (and session) one token speaks for."""

    id: str
    user: str
    session: str | None = None

    def bind(self, session: str | None, user: str | None) -> tuple[str | None, str]:
        """Rule 3: the request's session and user within this token's."""
        if user is not None and user != self.user:
            raise ScopeError(f"this token speaks for user {self.user!r}, not {user!r}")
        if session is not None and session != self.session:
            bound = f"session {self.session!r}" if self.session else "no session"
            raise ScopeError(f"this token is bound to {bound}, not session {session!r}")
        return self.session, self.user


#: Rule 6: the token of the request being served (None: no tokens exist, no limits).
CALLER: ContextVar[TokenScope | None] = ContextVar("contextpipe_caller", default=None)


def tokens_path(pipeline: Pipeline) -> Path | None:
    """Where the store keeps its tokens, in its own folder (None: it keeps no folder)."""
    folders = pipeline.store.local_folders
    return folders[0] / TOKENS_FILE if folders else None


def tokens_file(pipeline: Pipeline) -> Path:
    """`tokens_path`, for the commands that make and revoke tokens."""
    path = tokens_path(pipeline)
    if path is None:
        raise ContextpipeError(f"{pipeline.store.location}: this store keeps no folder for tokens")
    return path


def create_token(path: Path, user: str, session: str | None) -> tuple[str, TokenScope]:
    """Rule 1: a new token for `user` (and `session`), kept hashed; the token itself."""
    secret = _PREFIX + secrets.token_urlsafe(32)
    scope = TokenScope(id=secrets.token_hex(4), user=user, session=session)
    rows = _read(path)
    rows.append(
        {**asdict(scope), "sha256": _digest(secret), "created": datetime.now(UTC).isoformat()}
    )
    _write(path, rows)
    return secret, scope


def list_tokens(path: Path) -> list[dict[str, Any]]:
    """Every token's id, scope and creation time (never the token)."""
    return [{k: v for k, v in row.items() if k != "sha256"} for row in _read(path)]


def revoke_token(path: Path, token_id: str) -> bool:
    rows = _read(path)
    kept = [row for row in rows if row["id"] != token_id]
    if len(kept) == len(rows):
        return False
    _write(path, kept)
    return True


class TokenBook:
    """The tokens a running service accepts, read again whenever the file changes."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._seen: float | None = None
        self._scopes: dict[str, TokenScope] = {}

    def any(self) -> bool:
        return bool(self._current())

    def caller(self, authorization: str | None) -> TokenScope | None:
        """Rule 2: the scope of the bearer token in an Authorization header, or None while
        no tokens exist (no limits); `UnknownTokenError` when tokens exist and this is none.
        """
        scopes = self._current()
        if not scopes:
            return None
        kind, _, secret = (authorization or "").partition(" ")
        known = scopes.get(_digest(secret.strip())) if kind.lower() == "bearer" else None
        if known is None:
            raise UnknownTokenError("this service needs an API token: Bearer <token>")
        return known

    def _current(self) -> dict[str, TokenScope]:
        if self._path is None:
            return {}
        try:
            changed: int | None = self._path.stat().st_mtime_ns
        except FileNotFoundError:
            changed = None
        with self._lock:
            if changed != self._seen:
                self._seen = changed
                self._scopes = {
                    row["sha256"]: TokenScope(row["id"], row["user"], row.get("session"))
                    for row in _read(self._path)
                }
            return self._scopes


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise ContextpipeError(f"{path}: not a tokens file (damaged); move it aside") from None
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_name(f".{path.name}.new")
    descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(rows, out, indent=1)
    fresh.replace(path)  # a reader sees the old file or the new one, never half of one


class Guard:
    """Rules 3-4 for the caller of the request being served (None: no tokens, no limits),
    as every face of the service applies them.
    """

    def __init__(self, caller: TokenScope | None) -> None:
        self._caller = caller

    @classmethod
    def current(cls) -> Guard:
        """Rule 6: the guard of the request being served."""
        return cls(CALLER.get())

    def reading(self, session: str | None, user: str | None) -> tuple[str | None, str | None]:
        """The scope a read (context, chat, MCP) runs in."""
        return (session, user) if self._caller is None else self._caller.bind(session, user)

    def keeping(self, session: str | None, user: str | None) -> tuple[str | None, str | None]:
        """The scope memory is kept (or forgotten) in: as the request names it within the
        token's, by default the token's narrowest (its session, else its user).
        """
        if self._caller is None:
            return session, user
        bound_session, bound_user = self._caller.bind(session, user)
        if bound_session is not None and (session is not None or user is None):
            return bound_session, None
        return None, bound_user

    def forgetting(
        self, session: str | None, user: str | None, everything_global: bool
    ) -> tuple[str | None, str | None]:
        """`keeping`, for all of a scope; global memory is not a token's to forget."""
        if self._caller is not None and everything_global:
            raise ScopeError("global memory is project-wide: a token may not forget it")
        return self.keeping(session, user)

    def project_wide(self, what: str) -> None:
        """Rule 4: refuse what changes every request to a token."""
        if self._caller is not None:
            raise ScopeError(f"{what} change every request: a token may not")

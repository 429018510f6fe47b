"""The request guard: plain ASGI middleware in front of the app that refuses, before any parsing,

* requests whose ``Host`` header names a host the server does not answer to (400), when it has a list of
  them (:func:`allowed_hosts`; ``tkgqa serve`` always has one): a web page on ``http://evil.example`` whose
  name an attacker re-points at 127.0.0.1 (DNS rebinding) still sends ``Host: evil.example``, so it cannot
  reach a server running without a token on this machine;
* requests under ``protected`` (``/api/``; the MCP endpoint for ``tkgqa mcp --http``) without the API token
  when the server has one (401, ``WWW-Authenticate: Bearer``);
* bodies over ``max_body_bytes`` (413, from ``Content-Length`` without reading, or while reading);
* bodies that are not UTF-8, or JSON nested deeper than ``max_json_depth`` (422; Python's parser would
  otherwise recurse into a ``RecursionError``).

Every refusal has the service's one error shape (:func:`tkgqa.service.errors.error_body`). The body read
here is handed on to the app unchanged; later ``receive`` calls go to the server, so the app still sees the
client disconnect.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .errors import error_body
from .policy import ServiceSettings

if TYPE_CHECKING:  # the ASGI types as Starlette (FastAPI's base) defines them
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The names of this machine a server answers to by default (``--allow-host`` adds others).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: ``--allow-host`` value that turns the check off.
ANY_HOST = "*"
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
#: ``name[:port]`` or ``[IPv6][:port]``: what a browser sends as ``Host``.
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.\-]+)(?::[0-9]{1,5})?")


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or ``--allow-host`` value, lower case, without port, brackets or
    a trailing dot: ``"[::1]:8000"`` → ``"::1"``, ``"LocalHost.:80"`` → ``"localhost"``; ``""`` for a value
    that is no host (``"a:1@b"``, spaces, a bad port), which no list allows."""
    value = value.strip().lower()
    try:
        return ipaddress.ip_address(value).compressed  # a bare IPv6 address: --host ::1
    except ValueError:
        pass
    match = _HOST.fullmatch(value)
    if match is None:
        return ""
    name = match.group(1)
    if name.startswith("["):
        try:
            return ipaddress.IPv6Address(name[1:-1]).compressed
        except ValueError:
            return ""
    return name.rstrip(".")


def allowed_hosts(bound: str, extra: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The ``Host`` names a server bound to ``bound`` answers to: the loopback names, the bound address
    (unless a wildcard such as ``0.0.0.0``) and ``extra`` (``--allow-host``; ``*`` allows any)."""
    names = [*LOOPBACK_HOSTS]
    if host_name(bound) not in _WILDCARD_BINDS:
        names.append(host_name(bound))
    names += [ANY_HOST if h.strip() == ANY_HOST else host_name(h) for h in extra if h.strip()]
    return tuple(dict.fromkeys(n for n in names if n))


def json_problem(body: bytes, max_depth: int) -> str | None:
    """Why ``body`` cannot be a JSON request (not UTF-8, nested deeper than ``max_depth``), or ``None``."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the request body is not UTF-8 text (byte 0x{body[exc.start]:02x} at offset {exc.start})"
    depth = deepest = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > max_depth:
            return f"the JSON body is nested deeper than {max_depth} levels"
    return None


async def send_error(
    send: Send, status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> None:
    """Answer with the one error shape."""
    data = json.dumps(error_body(message, kind), ensure_ascii=False).encode("utf-8")
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


class RequestGuard:
    """See the module docstring. ``settings``: the server's limits (body size, JSON depth), its API token
    (``None``: no authentication) and its allowed hosts; ``protected``: the path prefix needing the token."""

    def __init__(self, app: ASGIApp, *, settings: ServiceSettings, protected: str = "/api/") -> None:
        self.app = app
        self.protected = protected
        self.max_body_bytes = settings.max_body_bytes
        self.max_json_depth = settings.max_json_depth
        token, hosts = settings.api_token, settings.allowed_hosts
        self._token = token.strip().encode() if token else None
        self._hosts = None if hosts is None or ANY_HOST in hosts else frozenset(host_name(h) for h in hosts)

    def _host_allowed(self, scope: Scope) -> bool:
        """Every ``Host`` header names an allowed host (none at all: HTTP/1.0, which no browser sends)."""
        if self._hosts is None:
            return True
        sent = [bytes(v) for k, v in scope.get("headers") or [] if bytes(k).lower() == b"host"]
        return all(host_name(v.decode("latin-1")) in self._hosts for v in sent)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        assert self._token is not None
        sent = headers.get(b"x-api-token", b"")
        auth = headers.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            sent = auth[7:].strip()
        return hmac.compare_digest(sent, self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {bytes(k).lower(): bytes(v) for k, v in scope.get("headers") or []}
        if not self._host_allowed(scope):
            shown = headers.get(b"host", b"").decode("latin-1")[:100]
            await send_error(
                send,
                400,
                f"this server does not answer to the host name {shown!r} (a DNS-rebinding guard); use "
                "http://127.0.0.1:PORT/, or start it with --allow-host NAME for the name you use",
                "BadHost",
            )
            return
        protected = self._token is not None and str(scope.get("path", "")).startswith(self.protected)
        if protected and not self._authorized(headers):
            await send_error(
                send,
                401,
                "this server needs its API token: send the header 'Authorization: Bearer <token>'",
                "Unauthorized",
                {"WWW-Authenticate": "Bearer"},
            )
            return
        if scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await send_error(send, 400, "the Content-Length header is not a number", "BadRequest")
                return
            if size > self.max_body_bytes:
                await self._too_large(send)
                return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = bytes(message.get("body", b""))
            total += len(chunk)
            if total > self.max_body_bytes:
                await self._too_large(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = json_problem(body, self.max_json_depth) if body else None
        if problem is not None:
            await send_error(send, 422, f"invalid request: {problem}", "ValidationError")
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await send_error(
            send,
            413,
            f"the request body is larger than this server's limit of {self.max_body_bytes:,} bytes",
            "PayloadTooLarge",
            {"Connection": "close"},
        )


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (``127.0.0.0/8``, ``::1``, localhost)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Binding beyond loopback needs an API token: ConfigError saying how to give one otherwise."""
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"--host {host} exposes the API beyond this machine: set an API token first "
            "(TKGQA_API_TOKEN=… or --api-token-file FILE; 16+ characters, e.g. `openssl rand -hex 24`); "
            "clients then send 'Authorization: Bearer <token>'"
        )

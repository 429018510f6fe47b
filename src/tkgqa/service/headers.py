"""Security headers on every response: a Content-Security-Policy that allows scripts only from this server's
own files (no inline script, no ``eval``, no CDN), plus ``X-Content-Type-Options: nosniff``, a strict
referrer policy and no framing. Plain ASGI middleware; a response that already carries a CSP (``/docs``,
whose Swagger page has one inline script, allowed by its hash: :func:`csp_with_script_hashes`) keeps it.

Styles may be inline (``'unsafe-inline'`` for ``style-src`` only): the chart library positions its
tooltips with ``style`` attributes; styles cannot run code.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the ASGI types as Starlette (FastAPI's base) defines them
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The policy of every page and API response of the service.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)


def csp_with_script_hashes(html: str) -> str:
    """:data:`CSP` that also allows exactly the inline scripts of ``html`` (by their SHA-256 hashes)."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]
    return CSP.replace("script-src 'self'", " ".join(["script-src 'self'", *hashes]))


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for key, value in SECURITY_HEADERS.items():
                    if key.encode("latin-1") not in present:
                        headers.append((key.encode("latin-1"), value.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)

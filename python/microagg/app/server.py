"""Serving the app: uvicorn on 127.0.0.1 (another address only when asked, with a warning),
every response with a content security policy that allows this server alone (the app's
assets are Shiny's own, served locally: it works offline), requests for another host name
refused (no DNS rebinding), and the browser opened on the page (docs/app.md)."""

from __future__ import annotations

import socket
import sys
import threading
import webbrowser
from typing import Any, Awaitable, Callable, Optional

LOOPBACK = "127.0.0.1"

CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
"""Nothing is fetched from anywhere but this server (Shiny's page needs its inline scripts
and styles; the report's page its inline styles)."""


def free_port(host: str) -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


class Guard:
    """ASGI middleware: the content security policy header on every HTTP response, and a
    403 for a request whose ``Host`` is not one of ``hosts`` (``None``: any, for a server
    that ``--host`` opened to other machines, which reach it by names it cannot know)."""

    def __init__(self, app: Any, hosts: Optional[set[str]]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Any, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1").rsplit(":", 1)[0]
        if self.hosts is not None and host not in self.hosts:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"microagg app: unknown host name\n"})
            return

        async def with_policy(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"content-security-policy", CSP.encode()),
                                      (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
            await send(message)

        await self.app(scope, receive, with_policy)


def serve(path: Optional[str], port: Optional[int] = None, host: str = LOOPBACK, browser: bool = True) -> None:
    """Serves the app until Ctrl+C: on ``host`` (warned about unless it is 127.0.0.1) and
    ``port`` (default: a free one), opening ``path`` in every session when given."""
    import uvicorn

    from .page import create_app

    if host != LOOPBACK:
        print(f"microagg app: warning: serving on {host}, not only on this machine (127.0.0.1): anybody who "
              "can reach it can open files and read releases", file=sys.stderr)
    port = port if port is not None else free_port(host)
    url = f"http://{LOOPBACK if host in (LOOPBACK, '0.0.0.0') else host}:{port}/"
    hosts = {LOOPBACK, "localhost"} if host == LOOPBACK else None
    print(f"microagg app: serving {url} (Ctrl+C to stop)", flush=True)
    if browser:
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    uvicorn.run(Guard(create_app(path), hosts), host=host, port=port, log_level="warning")

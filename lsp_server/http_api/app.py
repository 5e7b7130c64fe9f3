"""The Starlette application: routes, the API key, and every failure as a JSON error."""

from __future__ import annotations

import hmac
import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from lsp_server.http_api import routes
from lsp_server.http_api.admission import overloaded
from lsp_server.http_api.errors import ApiError
from lsp_server.http_api.service import HttpService

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/health"})  # answered without the key: a load balancer's probe has none


class ApiKeyCheck:
    """Plain ASGI, not Starlette's BaseHTTPMiddleware: that one hands the route a wrapped
    ``receive`` through which a client's disconnect is not seen, and a gone client's work
    would run on to its deadline."""

    def __init__(self, app: ASGIApp, service: HttpService) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self.service.api_key
        if scope["type"] == "http" and key is not None and scope["path"] not in OPEN_PATHS:
            given = Request(scope).headers.get("authorization", "")
            scheme, _, token = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key.encode()):
                refused = ApiError(401, "a valid API key is needed: Authorization: Bearer <key>", "invalid_api_key",
                                   {"WWW-Authenticate": "Bearer"})
                await refused.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


class InFlightBound:
    """At most ``service.max_in_flight`` requests at once, counted from their first byte
    (each may hold a body of up to 2 MB); past it 429 with ``Retry-After`` before the body
    is read. uvicorn's own limit refuses with a plain-text 503 and counts open connections,
    so a burst of clients connecting at once had every request refused; it stays only as a
    guard on connections (``command.MAX_CONNECTIONS``). ``/health`` is never refused, so a
    probe can tell a busy server from a dead one."""

    def __init__(self, app: ASGIApp, service: HttpService) -> None:
        self.app = app
        self.service = service
        self.in_flight = 0  # the event loop is single-threaded: a counter is enough

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.service.max_in_flight:
            await overloaded(self.in_flight).response()(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message, code = f"no route {request.url.path}", "not_found"
    elif exc.status_code == 405:
        message, code = f"{request.method} is not allowed on {request.url.path}", "method_not_allowed"
    else:
        message, code = str(exc.detail), "http_error"
    return ApiError(exc.status_code, message, code, dict(exc.headers or {})).response()


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return ApiError(500, f"the server failed on this request: {exc}", "internal_error").response()


def create_app(service: HttpService) -> Starlette:
    app = Starlette(
        routes=[
            Route("/health", routes.health, methods=["GET"]),
            Route("/v1/models", routes.models, methods=["GET"]),
            Route("/v1/fim/completions", routes.fim_completions, methods=["POST"]),
            # OpenAI's SDK joins ``completions`` to its base URL: ``base_url=…/v1/fim`` lands here too.
            Route("/v1/fim/completions/", routes.fim_completions, methods=["POST"]),
            Route("/v1/edit/completions", routes.edit_completions, methods=["POST"]),
            Route("/infill", routes.infill, methods=["POST"]),
        ],
        middleware=[Middleware(InFlightBound, service=service), Middleware(ApiKeyCheck, service=service)],
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected},
    )
    app.state.service = service
    return app

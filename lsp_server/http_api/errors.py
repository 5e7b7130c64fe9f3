"""Every refusal as one JSON shape, ``{error: {message, type, code}}`` (OpenAI's), never a
traceback: a client can show ``message`` as it is."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from starlette.responses import JSONResponse

from lsp_server.engine import JobStopped, ModelUnavailable

TOTAL_TIMEOUT_S = 10.0  # model work and the wait for the worker together: past this, 504
T = TypeVar("T")


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}

    @property
    def type(self) -> str:
        if self.status == 401:
            return "authentication_error"
        if self.status == 429:
            return "rate_limit_error"
        return "invalid_request_error" if self.status < 500 else "server_error"

    def response(self) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.type, "code": self.code}}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, "invalid_request")


async def engine_reply(work: Awaitable[T]) -> T:
    """The engine's answer; its refusals as HTTP errors: 503 without a model, 504 late."""
    try:
        return await asyncio.wait_for(work, TOTAL_TIMEOUT_S)
    except ModelUnavailable as exc:
        raise ApiError(503, str(exc), "model_unavailable") from None
    except (JobStopped, TimeoutError):
        raise ApiError(504, "the model did not answer in time", "timeout") from None

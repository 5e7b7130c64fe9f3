"""Every refusal as one JSON shape, ``{error: {message, type, code}}`` (OpenAI's), never a
traceback: a client can show ``message`` as it is."""

from __future__ import annotations

from starlette.responses import JSONResponse


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

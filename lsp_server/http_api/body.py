"""Reading a request's JSON body within bounds, and its fields with their types checked:
each mistake is a 4xx that names the field, never a 500."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

from starlette.requests import Request

from lsp_server.http_api.errors import ApiError, bad_request

MAX_BODY_BYTES = 2_000_000  # a whole source file and its related snippets; nothing bigger is a FIM request
BODY_TIMEOUT_S = 10.0  # a client trickling its body a byte at a time holds a connection no longer

T = TypeVar("T")


async def read_json(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(413, f"the body is over {MAX_BODY_BYTES} bytes", "body_too_large")
    try:
        raw = await asyncio.wait_for(_read_bounded(request), BODY_TIMEOUT_S)
    except TimeoutError:
        raise ApiError(408, f"the body did not arrive within {BODY_TIMEOUT_S:.0f} s", "body_timeout") from None
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad_request(f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    return body


async def _read_bounded(request: Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, f"the body is over {MAX_BODY_BYTES} bytes", "body_too_large")
        chunks.append(chunk)
    return b"".join(chunks)


def field(body: dict[str, Any], name: str, kind: type[T] | tuple[type, ...], default: Any = ...) -> Any:
    """``body[name]`` of ``kind``; a missing field takes ``default`` (or is an error without
    one). JSON's true is not a number here."""
    if name not in body or body[name] is None:
        if default is ...:
            raise bad_request(f"'{name}' is required")
        return default
    value = body[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise bad_request(f"'{name}' must be {_names(kinds)}")
    if float in kinds and isinstance(value, int):
        return float(value)
    if not isinstance(value, kinds):
        raise bad_request(f"'{name}' must be {_names(kinds)}")
    return value


def bounded(body: dict[str, Any], name: str, kind: type[T], low: float, high: float, default: T) -> T:
    value = field(body, name, kind, default)
    if not low <= value <= high:
        raise bad_request(f"'{name}' must be between {low:g} and {high:g}")
    return value  # type: ignore[no-any-return]


def stop_strings(body: dict[str, Any]) -> list[str]:
    """OpenAI's ``stop``: a string or up to four of them."""
    value = field(body, "stop", (str, list), [])
    values = [value] if isinstance(value, str) else value
    if len(values) > 4 or not all(isinstance(v, str) and v for v in values):
        raise bad_request("'stop' must be a non-empty string or a list of up to 4 of them")
    return values


def snippets(body: dict[str, Any], name: str, path_key: str) -> dict[str, str]:
    """A list of ``{path_key: str, text: str}`` (other files the client sends), as path → text."""
    value = field(body, name, list, [])
    found: dict[str, str] = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise bad_request(f"'{name}[{index}]' must be an object with a string 'text'")
        path = item.get(path_key, "")
        found[path if isinstance(path, str) and path else f"<{name}[{index}]>"] = item["text"]
    return found


def _names(kinds: tuple[type, ...]) -> str:
    words = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
             dict: "an object"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)

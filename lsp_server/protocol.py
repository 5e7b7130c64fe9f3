"""Our JSON-RPC protocol layer: custom method names, and fixes for pygls traps.

- pygls 2.x turns a request whose parameters don't match the LSP types into an exception
  before any handler runs, and the request is never answered: the client waits forever.
  Here such a request is answered at once with InvalidParams, and the message is dropped.
- pygls keeps its own copy of every document and splits its lines with ``splitlines``,
  which also breaks at form feed, ``\x1c``–``\x1e``, ``\u2028``…; a change that its copy
  cannot apply raises before our handler runs, and the change is lost. Our documents
  (``documents.py``) are the only copy: the open/change/close notifications go straight to
  our handlers.
- pygls drops every request that arrives after ``shutdown`` without an answer; LSP says it
  must fail with InvalidRequest, and a client that sent one would otherwise wait forever.
- pygls answers requests that arrive before ``initialize`` as if the server were set up;
  LSP says they fail with ServerNotInitialized (-32002) and notifications are dropped
  (``exit`` excepted).
- lsprotocol's converter accepts ``1.5`` or ``true`` as a line or character and answers
  about another place; such a position is InvalidParams here.
- A notification with parameters of the wrong types made pygls pop up "Error in server:
  Invalid Params" in the editor, once per message; it is logged and dropped instead.
- pygls keeps the future of every notification a generator handler ran (ours for open,
  change and close are generators) for the server's life; here each goes once it is done.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from functools import partial
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, RPCRequest
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

NEXT_EDIT = "redraft/nextEdit"
FEEDBACK = "redraft/feedback"
ACCEPTED_COMMAND = "redraft.accepted"
DEBUG_STATE = "redraft/debugState"  # only with the debugRequests option
# Notification: the user's cursor has come to rest at a place (``CompletionService.warm``).
CURSOR = "redraft/cursor"

# A notification no handler exists for: what a rejected message becomes.
DROPPED_METHOD = "$/redraft/droppedMessage"

# The methods beyond LSP, announced in the initialize result (`capabilities.experimental`),
# so that a client can tell what this server offers without trying each method.
EXTENSIONS: dict[str, Any] = {
    "redraft": {"requests": [NEXT_EDIT], "notifications": [CURSOR, FEEDBACK], "acceptedCommand": ACCEPTED_COMMAND},
}


class RedraftProtocol(LanguageServerProtocol):
    _initialize_seen = False

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        # pygls builds the capabilities from the registered features, with no place for these.
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = EXTENSIONS
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._to_user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._to_user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._to_user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _to_user_handler(self, method: str, params: Any) -> Generator[Any, Any, None]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            self._initialize_seen = True
        elif not self._initialize_seen and method not in (None, types.EXIT):
            if isinstance(message, RPCRequest):
                log.warning("answered %s (id %s) with ServerNotInitialized", method, message.id)
                not_ready = JsonRpcServerNotInitialized(f"{method}: send initialize first")
                self._send_response(message.id, error=not_ready.to_response_error())
            else:
                log.warning("dropped %s notification: the server is not initialized", method)
            return
        if self._shutdown and isinstance(message, RPCRequest) and message.method != types.EXIT:
            log.warning("answered %s (id %s) with InvalidRequest: the server is shutting down",
                        message.method, message.id)
            error = JsonRpcInvalidRequest(f"{message.method}: the server is shutting down")
            self._send_response(message.id, error=error.to_response_error())
            return
        if isinstance(message, RPCRequest):
            super().handle_message(message)
            return
        # A generator handler's future (open, change, close, initialized) is filed under a
        # fresh id that only a request's answer would remove: kept once done, it held
        # ~0.6 KB a keystroke for the server's life.
        before = set(self._request_futures)
        super().handle_message(message)
        for key in self._request_futures.keys() - before:
            self._request_futures[key].add_done_callback(partial(self._forget_future, key))

    def _forget_future(self, key: Any, _done: object) -> None:
        self._request_futures.pop(key, None)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "method" in data and "jsonrpc" in data and "params" not in data:
            data = {**data, "params": None}  # JSON-RPC lets a request or notification omit params
        try:
            problem = _non_integer_position(data.get("params"))
            if problem is not None:
                raise JsonRpcInvalidParams(problem)
            return super().structure_message(data)
        except JsonRpcException as exc:
            method = data.get("method")
            if "method" not in data:
                raise  # a bad response: pygls logs it
            if "id" not in data:  # a notification: nothing to answer, and nothing to pop up
                log.warning("ignored %s notification with invalid parameters: %s", method, _reason(exc))
                return JsonRPCNotification(method=DROPPED_METHOD, params=None, jsonrpc="2.0")
            error = JsonRpcInvalidParams(f"invalid parameters for {method}: {_reason(exc)}")
            log.warning("answered %s (id %s) with InvalidParams", method, data.get("id"))
            self._send_response(data["id"], error=error.to_response_error())
            return JsonRPCNotification(method=DROPPED_METHOD, params=None, jsonrpc="2.0")


def _non_integer_position(value: Any, depth: int = 0) -> str | None:
    """What is wrong with the first position whose line or character is not an integer
    (lsprotocol's converter would turn 1.5 or true into 1 and answer about another place)."""
    if depth > 6:
        return None
    if isinstance(value, dict):
        if "line" in value and "character" in value:
            for name in ("line", "character"):
                number = value[name]
                if not isinstance(number, int) or isinstance(number, bool):
                    return f"position {name} must be an integer, got {number!r}"
        for item in value.values():
            if isinstance(item, (dict, list)) and (problem := _non_integer_position(item, depth + 1)):
                return problem
    elif isinstance(value, list):
        for item in value[:1000]:
            if isinstance(item, (dict, list)) and (problem := _non_integer_position(item, depth + 1)):
                return problem
    return None


def _reason(exc: Exception) -> str:
    cause = exc.__cause__
    text = str(cause) if cause is not None else str(exc)
    return text.splitlines()[0][:200] if text else type(exc).__name__

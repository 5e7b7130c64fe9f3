"""The server keeps nothing per notification: pygls files the future of each one a
generator handler runs (open, change, close) under a fresh id, and would hold it forever."""

import asyncio
from typing import Any

from lsp_server.server import create_server


class Sink:
    def __init__(self) -> None:
        self.written: list[Any] = []

    def write(self, data: Any) -> None:
        self.written.append(data)

    def close(self) -> None:
        pass


async def test_a_thousand_keystrokes_leave_no_future_behind() -> None:
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(Sink(), include_headers=False)

    def receive(message: dict[str, Any]) -> None:
        protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

    try:
        receive({"id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}})
        receive({"method": "initialized", "params": {}})
        uri = "untitled:typed"
        receive({"method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "\n"}}})
        for version in range(2, 1002):
            at = {"line": 0, "character": version - 2}
            receive({"method": "textDocument/didChange",
                     "params": {"textDocument": {"uri": uri, "version": version},
                                "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}})
        await asyncio.sleep(0)  # an asyncio future's done callbacks run on the next turn
        document = server.documents.get(uri)
        assert document is not None and document.text == "x" * 1000 + "\n"  # every change was applied
        receive({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        await asyncio.sleep(0)
        assert protocol._request_futures == {}
    finally:
        server.engine.shutdown()

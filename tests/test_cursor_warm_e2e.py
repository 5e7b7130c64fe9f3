"""``redraft/cursor`` through the real server: where the client's cursor comes to rest, an
Automatic request is answered ahead of the typing, and a request there is answered from it;
resting where the answer is known costs nothing; bad parameters are logged and dropped."""

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.lsp_client import LspClient

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio

URI = "file:///shapes.py"
TEXT = "".join(f"def area_{n}(width, height):\n    return width * height * {n}\n\n\n" for n in range(30))
PLACE = {"line": 61, "character": 4}  # the start of ``area_15``'s body
CURSOR = {"textDocument": {"uri": URI}, "position": PLACE}
INLINE = {"textDocument": {"uri": URI}, "position": PLACE, "context": {"triggerKind": 2}}


async def model_calls(client: LspClient) -> int:
    state = await client.request("redraft/debugState", timeout=60)
    calls: int = state["completionModelCalls"]
    return calls


async def texts(answer: Any) -> list[str]:
    return [item["insertText"] for item in (answer or {}).get("items", [])]


async def started(client: LspClient) -> None:
    await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True})
    await client.initialized()
    await client.did_open(URI, TEXT)


async def test_the_place_the_cursor_rests_at_is_answered_before_anything_is_typed_there() -> None:
    async with LspClient(SERVER, timeout=60) as cold:
        await started(cold)
        expected = await texts(await cold.request("textDocument/inlineCompletion", INLINE, timeout=60))
        assert await model_calls(cold) == 1
    assert expected  # at threshold 0 the model has something to say there
    async with LspClient(SERVER, timeout=60) as client:
        await started(client)
        await client.notify("redraft/cursor", CURSOR)
        for _ in range(600):  # the model loads, then answers the place
            if await model_calls(client) == 1:
                break
            await asyncio.sleep(0.1)
        assert await model_calls(client) == 1
        await asyncio.sleep(0.5)  # … and nothing more runs meanwhile
        answer = await client.request("textDocument/inlineCompletion", INLINE, timeout=60)
        assert await texts(answer) == expected
        await client.notify("redraft/cursor", CURSOR)  # its answer is known: nothing to do
        await asyncio.sleep(0.5)
        assert await model_calls(client) == 1


async def test_cursor_notifications_with_bad_parameters_are_logged_and_dropped(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    async with LspClient(SERVER, timeout=60, stderr_log=stderr) as client:
        await started(client)
        for params in (7, {"textDocument": {"uri": URI}}, {"textDocument": URI, "position": PLACE},
                       {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}}):
            await client.notify("redraft/cursor", params)
        await client.notify("redraft/cursor", {"textDocument": {"uri": "file:///not-open.py"}, "position": PLACE})
        await asyncio.sleep(0.5)
        assert await model_calls(client) == 0
        assert [n for n in client.notifications if n["method"] == "window/showMessage"] == []
    log = stderr.read_text()
    assert log.count("ignored a redraft/cursor notification") == 4

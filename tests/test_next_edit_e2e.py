"""redraft/nextEdit and the edit log, through the real server over LSP."""

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.bench.lsp_client import LspClient, LspError

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio

DOC = "def total(items, count):\n    s = 'é😀'\n    return sum(items) / count\n\n\nprint(total([1, 2], 2))\n"


async def started(client: LspClient, root: Path | None = None, **options: Any) -> None:
    params = {"confidenceThreshold": 0.0, "nextEditConfidenceThreshold": 0.0, "debugRequests": True, **options}
    if root is None:
        await client.initialize(params)
    else:
        result = await client.request("initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": params})
        assert result["capabilities"]
    await client.initialized()


def edit(line: int, start: int, end: int, text: str) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
            "text": text}


async def test_edits_are_logged_and_proposals_are_well_formed_with_non_ascii_text() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client)
        await client.did_open("file:///w.py", DOC)
        # Rename `count` to `n` in the signature, one keystroke at a time.
        await client.did_change("file:///w.py", 2, [edit(0, 17, 22, "")])
        await client.did_change("file:///w.py", 3, [edit(0, 17, 17, "n")])
        state = await client.request("redraft/debugState")
        assert state["documents"]["file:///w.py"]["text"].startswith("def total(items, n):")
        assert [(e["oldText"], e["newText"]) for e in state["editLog"]] == [
            ("def total(items, count):\n", "def total(items, n):\n")]
        result = await client.request("redraft/nextEdit", {"textDocument": {"uri": "file:///w.py"},
                                                           "position": {"line": 0, "character": 18}})
        text = state["documents"]["file:///w.py"]["text"]
        lines = text.split("\n")
        for item in (result or {"items": []})["items"]:
            assert item["textDocument"] == {"uri": "file:///w.py", "version": 3}
            assert 0.0 <= item["confidence"] <= 1.0 and item["id"]
            start, end = item["edit"]["range"]["start"], item["edit"]["range"]["end"]
            assert (start["line"], start["character"]) <= (end["line"], end["character"])
            assert start["line"] < len(lines) and end["line"] < len(lines)


async def test_nothing_below_the_next_edit_threshold_is_shown() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client, nextEditConfidenceThreshold=1.0)
        await client.did_open("file:///q.py", DOC)
        await client.did_change("file:///q.py", 2, [edit(0, 4, 9, "sum_of")])
        assert await client.request("redraft/nextEdit", {"textDocument": {"uri": "file:///q.py"},
                                                         "position": {"line": 0, "character": 10}}) is None


async def test_bad_next_edit_params_get_invalid_params() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client)
        with pytest.raises(LspError) as raised:
            await client.request("redraft/nextEdit", {"textDocument": {"uri": 7}, "position": {"line": -1}})
        assert raised.value.code == -32602


async def test_a_file_changed_on_disk_shows_up_in_the_edit_log(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("alpha = 1\nbeta = 2\n")
    async with LspClient(SERVER, timeout=60) as client:
        await started(client, root=tmp_path)
        events: list[dict[str, Any]] = []
        # The watcher snapshots the folder in the background: keep changing the file until
        # a change lands after the snapshot.
        for attempt in range(10):
            source.write_text(f"alpha = 1\nbeta = {attempt + 3}\n")
            for _ in range(30):  # the watcher debounces bursts of writes
                await asyncio.sleep(0.1)
                events = (await client.request("redraft/debugState"))["editLog"]
                if events:
                    break
            if events:
                break
        first = events[0]
        assert first["source"] == "disk" and first["uri"] == source.as_uri()
        assert first["oldText"].startswith("beta = ") and first["newText"].startswith("beta = ")
        assert first["oldText"] != first["newText"]


async def test_the_debug_request_is_off_by_default() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({})
        await client.initialized()
        with pytest.raises(LspError) as raised:
            await client.request("redraft/debugState")
        assert raised.value.code == -32601

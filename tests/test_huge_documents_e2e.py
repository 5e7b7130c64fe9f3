"""Huge documents and very long lines: every request is answered and the server's copy
stays exact (the context, the edit log's diff and the edit patterns are all bounded)."""

import sys

import pytest

from benchmarks.lsp_client import LspClient

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio


def insert(line: int, character: int, text: str) -> dict[str, object]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


async def test_a_10_mb_document_of_100k_lines_is_edited_and_answered() -> None:
    lines = [f"value_{i} = compute(value_{i - 1}, {i})  # ünïcode 😀\n" for i in range(100_000)]
    text = "".join(lines) + "x" * 5_000_000  # and one 5 MB line at the end
    assert len(text.encode()) > 10_000_000
    uri = "file:///huge.py"
    async with LspClient(SERVER, timeout=120) as client:
        await client.initialize({"requestTimeoutMs": 5_000, "debugRequests": True})
        await client.initialized()
        await client.did_open(uri, text)
        # Rename in the middle of the file, then type on the long last line.
        await client.did_change(uri, 2, [{"range": {"start": {"line": 50_000, "character": 0},
                                                    "end": {"line": 50_000, "character": 11}},
                                          "text": "amount_50000"}])
        text = text.replace("value_50000 = ", "amount_50000 = ", 1)
        await client.did_change(uri, 3, [insert(100_000, 2_500_000, "(")])
        text = text[: len(text) - 2_500_000] + "(" + text[len(text) - 2_500_000 :]
        state = await client.request("redraft/debugState")
        assert state["documents"][uri]["text"] == text
        event = state["editLog"][0]
        assert (event["startLine"], event["oldText"]) == (50_000, lines[50_000])
        completion = await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 100_000, "character": 2_500_001},
            "context": {"triggerKind": 2}})
        assert completion is None or isinstance(completion["items"], list)
        await client.did_change(uri, 4, [insert(100_000, 0, "y")])
        result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                           "position": {"line": 50_000, "character": 12}})
        assert result is None or all(item["textDocument"]["version"] == 4 for item in result["items"])

"""Bad input gets a clear answer, and the server keeps serving."""

import sys

import pytest

from benchmarks.lsp_client import LspClient, LspError

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio

COMPLETION = "textDocument/inlineCompletion"


def completion_params(uri: str, line: object, character: object) -> dict[str, object]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
            "context": {"triggerKind": 2}}


async def test_wrong_parameter_types_get_invalid_params_and_the_server_keeps_serving() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0})
        await client.initialized()
        await client.did_open("file:///x.py", "def f():\n    return 1\n")
        with pytest.raises(LspError) as raised:
            await client.request(COMPLETION, completion_params("file:///x.py", "one", None), timeout=10)
        assert raised.value.code == -32602
        with pytest.raises(LspError) as unknown:
            await client.request("redraft/noSuchMethod", {}, timeout=10)
        assert unknown.value.code == -32601
        # Positions past the end are clamped, and the server still answers well-formed results.
        for line, character in ((99, 99), (1, 12)):
            result = await client.request(COMPLETION, completion_params("file:///x.py", line, character), timeout=60)
            assert result is None or isinstance(result["items"], list)


async def test_changes_for_unknown_documents_are_ignored() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0})
        await client.initialized()
        await client.did_change("file:///never-opened.py", 2, [{"text": "x = 1\n"}])
        await client.did_open("file:///y.py", "a = 1\n")
        await client.did_close("file:///y.py")
        await client.did_close("file:///y.py")
        assert await client.request(COMPLETION, completion_params("file:///y.py", 0, 0), timeout=30) is None


async def test_a_request_past_its_deadline_is_abandoned_and_the_next_one_is_answered() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        # The shortest deadline allowed, with the most work a request may ask for.
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 50, "maxSteps": 64,
                                 "canvasTokens": 64, "maxCandidates": 5})
        await client.initialized()
        uri = "file:///loop.py"
        await client.did_open(uri, "def loop():\n    while True\n        pass\n")
        invoked = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 14},
                   "context": {"triggerKind": 1}}
        answers = [await client.request(COMPLETION, invoked, timeout=60) for _ in range(3)]
        assert all(a is None or isinstance(a["items"], list) for a in answers)  # answered, never hung
        await client.notify("workspace/didChangeConfiguration", {"settings": {"requestTimeoutMs": 20_000,
                                                                        "maxCandidates": 1}})
        result = await client.request(COMPLETION, invoked, timeout=60)
        assert result is not None and ":" in [item["insertText"] for item in result["items"]]

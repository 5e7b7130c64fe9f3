"""Bad input gets a clear answer, and the server keeps serving."""

import sys

import pytest

from lsp_server.bench.lsp_client import LspClient, LspError

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

"""Reliability through the real server: malformed JSON-RPC, stale and rapid document
traffic, files the model never saw or can't decode, and the safety promises (stdout is only
the protocol, the workspace is never written)."""

import asyncio
import hashlib
import json
import sys
from pathlib import Path

import pytest

from benchmarks.lsp_client import LspClient

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio


def raw(client: LspClient, body: bytes, length: int | None = None) -> None:
    """Write bytes to the server's stdin as one framed message (or a broken frame)."""
    process = client._process
    assert process is not None and process.stdin is not None
    size = len(body) if length is None else length
    process.stdin.write(b"Content-Length: %d\r\n\r\n" % size + body)


async def alive(client: LspClient, uri: str = "file:///alive.py") -> None:
    """The server still answers a well-formed request."""
    result = await client.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 0},
        "context": {"triggerKind": 2}}, timeout=60)
    assert result is None or isinstance(result["items"], list)


async def test_invalid_json_and_unknown_notifications_leave_the_server_serving() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open("file:///alive.py", "x = 1\n")
        raw(client, b"{this is not json")
        raw(client, json.dumps({"jsonrpc": "2.0", "method": "custom/unknownNotification"}).encode())
        raw(client, json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": 7}).encode())
        raw(client, json.dumps([1, 2, 3]).encode())
        await alive(client)


async def test_a_frame_whose_length_overruns_is_survived_by_the_next_frames() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000})
        await client.initialized()
        # A header that claims fewer bytes than follow: the rest is garbage to the reader.
        raw(client, b'{"jsonrpc": "2.0", "method": "x"}', length=10)
        raw(client, b"\r\n")
        await client.did_open("file:///alive.py", "x = 1\n")
        await alive(client)


async def test_stale_versions_rapid_open_close_and_an_unknown_language() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000, "debugRequests": True})
        await client.initialized()
        uri = "file:///doc.xyz"
        for _ in range(20):  # rapid open/close of the same document
            await client.did_open(uri, "first\n", language_id="brainfudge")
            await client.did_close(uri)
        await client.did_open(uri, "+++[>++<-]\n", language_id="brainfudge", version=5)
        change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "-"}
        await client.did_change(uri, 6, [change])
        await client.did_change(uri, 3, [change])  # older than what we have: applied? never a crash
        state = await client.request("redraft/debugState")
        assert state["documents"][uri]["text"] in ("-+++[>++<-]\n", "--+++[>++<-]\n")
        await alive(client, uri)
        result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                           "position": {"line": 0, "character": 1}})
        assert result is None or isinstance(result["items"], list)


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


async def test_the_workspace_is_never_written_and_stdout_carries_only_the_protocol(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "code.py").write_text("def f(value):\n    return value\n")
    (workspace / "nul.py").write_bytes(b"x = 1\x00\x00\ny = 2\n")
    (workspace / "latin1.py").write_bytes("caf\xe9 = 1\n".encode("latin-1"))  # invalid UTF-8
    (workspace / ".gitignore").write_text("build/\n")
    before = digest(workspace)
    async with LspClient(SERVER, timeout=60) as client:
        result = await client.request("initialize", {
            "processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"requestTimeoutMs": 20_000, "debugRequests": True}})
        assert result["capabilities"]
        await client.initialized()
        uri = (workspace / "code.py").as_uri()
        await client.did_open(uri, (workspace / "code.py").read_text())
        await client.did_change(uri, 2, [{"range": {"start": {"line": 0, "character": 6},
                                                    "end": {"line": 0, "character": 11}}, "text": "amount"}])
        proposals = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                              "position": {"line": 0, "character": 12}})
        assert proposals is not None  # a proposal is only a proposal: the file stays as it is
        # Files changed on disk, with NUL bytes and invalid UTF-8: logged or skipped, no crash.
        (workspace / "nul.py").write_bytes(b"x = 3\x00\n")
        (workspace / "latin1.py").write_bytes("caf\xe9 = 2\n".encode("latin-1"))
        before["nul.py"] = hashlib.sha256(b"x = 3\x00\n").hexdigest()
        before["latin1.py"] = hashlib.sha256("caf\xe9 = 2\n".encode("latin-1")).hexdigest()
        await asyncio.sleep(1.0)  # give the watcher its debounce; then the server must still answer
        await alive(client, uri)
    # Every byte the server wrote to stdout was a framed JSON-RPC message (the client parsed
    # them all: a stray print would have failed its reader), and the workspace is unchanged.
    assert digest(workspace) == before

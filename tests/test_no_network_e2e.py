"""The server opens no network connection and unpickles nothing: a whole session (workspace
watched, edits, completions, next edits, a file changed on disk) under Python audit hooks."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from lsp_server.bench.lsp_client import LspClient

WATCHED_EVENTS = ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
                  "socket.gethostbyaddr", "socket.sendto", "urllib.Request", "http.client.connect",
                  "pickle.find_class", "ftplib.connect", "smtplib.connect")

# Started with `python -c`: install the hook first, then run the real command line.
HOOKED_SERVER = """
import json, sys
watched, report = set(json.loads(sys.argv[1])), open(sys.argv[2], "a")
def hook(event, args):
    if event in watched:
        report.write(json.dumps([event, repr(args)[:200]]) + "\\n"); report.flush()
sys.addaudithook(hook)
sys.argv = ["redraft", "serve"]
from lsp_server.cli import main
sys.exit(main())
"""


@pytest.mark.asyncio
async def test_a_full_session_makes_no_network_call_and_unpickles_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    module = workspace / "shapes.py"
    module.write_text("def area(width, height):\n    return width * height\n")
    report = tmp_path / "events.jsonl"
    command = [sys.executable, "-c", HOOKED_SERVER, json.dumps(WATCHED_EVENTS), str(report)]
    async with LspClient(command, timeout=60) as client:
        await client.request("initialize", {
            "processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000}})
        await client.initialized()
        uri = module.as_uri()
        await client.did_open(uri, module.read_text())
        change = {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "text": "w"}
        await client.did_change(uri, 2, [change])
        await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 4},
            "context": {"triggerKind": 1}})
        await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                  "position": {"line": 0, "character": 10}})
        (workspace / "other.py").write_text("import shapes\n\nprint(shapes.area(2, 3))\n")
        await asyncio.sleep(1.5)  # let the watcher see the new file
        state = await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 4},
            "context": {"triggerKind": 2}})
        assert state is None or isinstance(state["items"], list)
    events = report.read_text().splitlines() if report.exists() else []
    assert events == [], "network or pickle use: " + "; ".join(events)
    # The weights on disk are safetensors only: nothing that torch.load would unpickle.
    weights = Path(__file__).resolve().parent.parent / "model" / "weights"
    assert sorted(p.suffix for p in weights.iterdir()) == [".json", ".json", ".safetensors"]

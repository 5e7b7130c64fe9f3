"""The server opens no network connection and unpickles nothing: a whole session (workspace
watched, edits, completions, next edits, a file changed on disk) under Python audit hooks."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from benchmarks.lsp_client import LspClient

WATCHED_EVENTS = ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
                  "socket.gethostbyaddr", "socket.sendto", "urllib.Request", "http.client.connect",
                  "pickle.find_class", "ftplib.connect", "smtplib.connect")

# Started with `python -c`: install the hook first, then run the real command line. Besides
# the watched audit events it records, as a proof that the hook saw the session, the import
# of the module that loads the model, any import of torch (the server serves without it, so
# torch.load, which raises no audit event and whose weights-only unpickler bypasses
# pickle.find_class, can't run) and every call of safetensors' loader.
HOOKED_SERVER = """
import json, sys
watched, report = set(json.loads(sys.argv[1])), open(sys.argv[2], "a")
def note(kind, detail):
    report.write(json.dumps([kind, detail[:200]]) + "\\n"); report.flush()
def hook(event, args):
    if event in watched:
        note(event, repr(args))
    elif event == "import" and args[0] in ("model.runtime.serving", "torch"):
        note("import", args[0])
sys.addaudithook(hook)
import safetensors.numpy
def recorded(name, real):
    def call(*args, **kwargs):
        note(name, repr(args))
        return real(*args, **kwargs)
    return call
safetensors.numpy.load_file = recorded("safetensors.load_file", safetensors.numpy.load_file)
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
            "initializationOptions": {"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000,
                                      "debugRequests": True}})
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
        other = workspace / "other.py"
        # The watcher snapshots the folder in the background: keep changing the file until
        # the change shows up in the edit log (the watcher ran, under the hook).
        disk_events: list[dict[str, str]] = []
        for attempt in range(10):
            other.write_text(f"import shapes\n\nprint(shapes.area(2, {attempt}))\n")
            for _ in range(30):  # the watcher debounces bursts of writes
                await asyncio.sleep(0.1)
                log = (await client.request("redraft/debugState"))["editLog"]
                disk_events = [e for e in log if e["source"] == "disk" and e["uri"] == other.as_uri()]
                if disk_events:
                    break
            if disk_events:
                break
        assert disk_events
        state = await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 4},
            "context": {"triggerKind": 2}})
        assert state is None or isinstance(state["items"], list)
    events = [json.loads(line) for line in report.read_text().splitlines()]
    forbidden = [e for e in events if e[0] in WATCHED_EVENTS or e == ["import", "torch"]]
    assert forbidden == [], f"network, pickle or torch use: {forbidden}"
    # The hook was there when the model loaded, and the weights, their int8 scales and the
    # phrase table came through safetensors.
    assert ["import", "model.runtime.serving"] in events
    loads = [detail for kind, detail in events if kind == "safetensors.load_file"]
    assert len(loads) == 3 and "model.safetensors" in loads[0] and "int8_scales.safetensors" in loads[1] \
        and "phrases.safetensors" in loads[2], events
    # The weights on disk are safetensors only: nothing that torch.load would unpickle.
    weights = Path(__file__).resolve().parent.parent / "model" / "weights"
    assert sorted(p.suffix for p in weights.iterdir()) == [".json", ".json", *[".safetensors"] * 3]
    assert not [p for p in weights.rglob("*") if p.suffix in (".pt", ".pth", ".bin", ".pkl", ".ckpt")]

"""A failure inside one request never affects the next: faults injected into the real
server (``REDRAFT_FAULTS``, lsp_server/faults.py) at the model job and in the handler."""

import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.lsp_client import LspClient, LspError
from lsp_server.faults import FaultPlan, InjectedFault

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
VERBOSE_SERVER = [sys.executable, "-m", "lsp_server", "-v", "serve"]
WHILE_LOOP = "def loop():\n    while True\n        pass\n"
RENAME_DOC = "def area(width, height):\n    half = width / 2\n    return half * height\n"


async def inline(client: LspClient, uri: str, line: int, character: int) -> Any:
    return await client.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 1}}, timeout=60)  # Invoked: no speculative follow-up job


def insert(line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


def texts(result: Any) -> list[str]:
    return [] if result is None else [item["insertText"] for item in result["items"]]


@pytest.mark.asyncio
async def test_a_failed_model_job_or_handler_leaves_the_next_request_unharmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDRAFT_FAULTS", "fim:1,handler:3")
    stderr = tmp_path / "stderr.log"
    async with LspClient(SERVER, timeout=60, stderr_log=stderr) as client:
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open("file:///loop.py", WHILE_LOOP)
        assert await inline(client, "file:///loop.py", 1, 14) is None  # the model job raised
        assert ":" in texts(await inline(client, "file:///loop.py", 1, 14))  # the next one is whole
        with pytest.raises(LspError):  # the handler raised: a JSON-RPC error, not silence
            await inline(client, "file:///loop.py", 1, 14)
        assert ":" in texts(await inline(client, "file:///loop.py", 1, 14))
    log = stderr.read_text()
    # One traceback per fault, on stderr (stdout is the protocol: the client parsed every
    # byte of it as framed JSON-RPC), and nothing popped up in the editor.
    assert log.count("Traceback (most recent call last)") == 2, log
    assert log.count("InjectedFault: injected fault: fim #1") == 1, log
    assert log.count("InjectedFault: injected fault: handler #3") == 1, log
    assert not [n for n in client.notifications if n["method"] == "window/showMessage"]


@pytest.mark.asyncio
async def test_a_failed_next_edit_job_leaves_the_next_proposal_unharmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDRAFT_FAULTS", "next_edit:1")
    stderr = tmp_path / "stderr.log"
    async with LspClient(SERVER, timeout=60, stderr_log=stderr) as client:
        await client.initialize({"requestTimeoutMs": 20_000})
        await client.initialized()
        uri = "file:///area.py"
        await client.did_open(uri, RENAME_DOC)
        change = {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "text": "w"}
        await client.did_change(uri, 2, [change])
        ask = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 10}}
        assert await client.request("redraft/nextEdit", ask) is None  # the job raised: no proposal
        result = await client.request("redraft/nextEdit", ask)
        assert result is not None
        edit = result["items"][0]["edit"]  # the smallest edit turning `half = width` into `half = w`
        line = RENAME_DOC.split("\n")[edit["range"]["start"]["line"]]
        start, end = edit["range"]["start"]["character"], edit["range"]["end"]["character"]
        assert line[:start] + edit["newText"] + line[end:] == "    half = w / 2"
    log = stderr.read_text()
    assert log.count("Traceback (most recent call last)") == 1, log
    assert log.count("InjectedFault: injected fault: next_edit #1") == 1, log


@pytest.mark.asyncio
async def test_a_change_that_fails_in_the_document_layer_is_not_half_applied_and_the_next_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDRAFT_FAULTS", "change:1")
    stderr = tmp_path / "stderr.log"
    uri = "file:///loop.py"
    async with LspClient(SERVER, timeout=60, stderr_log=stderr) as client:
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000, "debugRequests": True})
        await client.initialized()
        await client.did_open(uri, WHILE_LOOP)
        # Two content changes; the layer fails after applying the first to its scratch copy.
        await client.did_change(uri, 2, [insert(0, 0, "# one\n"), insert(0, 0, "# two\n")])
        state = await client.request("redraft/debugState")
        assert state["documents"][uri] == {"version": 1, "text": WHILE_LOOP}
        assert state["editLog"] == []
        await client.did_change(uri, 3, [insert(3, 0, "# end\n")])
        state = await client.request("redraft/debugState")
        assert state["documents"][uri] == {"version": 3, "text": WHILE_LOOP + "# end\n"}
        assert [e["newText"] for e in state["editLog"]] == ["# end\n"]
        assert ":" in texts(await inline(client, uri, 1, 14))
        assert not [n for n in client.notifications if n["method"] == "window/showMessage"]
    log = stderr.read_text()
    assert log.count("Traceback (most recent call last)") == 1, log
    assert log.count("InjectedFault: injected fault: change #1") == 1, log
    assert "not applied; the document stays at version 1" in log


@pytest.mark.asyncio
async def test_model_work_past_its_deadline_is_abandoned_and_frees_the_worker_for_the_next_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The 2nd FIM job stalls until its stop flag or deadline: only the deadline can end it
    # (nothing cancels it), so if the deadline did not abandon it, the requests would hang.
    monkeypatch.setenv("REDRAFT_FAULTS", "fim_stall:2")
    stderr = tmp_path / "stderr.log"
    uri = "file:///loop.py"
    async with LspClient(VERBOSE_SERVER, timeout=60, stderr_log=stderr) as client:
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open(uri, WHILE_LOOP)
        assert ":" in texts(await inline(client, uri, 1, 14))  # job 1: the model is loaded
        await client.notify("workspace/didChangeConfiguration", {"settings": {"requestTimeoutMs": 300}})
        assert await inline(client, uri, 1, 14) is None  # job 2 stalled: abandoned at 300 ms
        # Other options, so the answer can't come from the cache: the model must run again.
        await client.notify("workspace/didChangeConfiguration",
                            {"settings": {"requestTimeoutMs": 20_000, "maxCandidates": 2}})
        assert ":" in texts(await inline(client, uri, 1, 14))
    log = stderr.read_text()
    assert log.count("injected stall: fim_stall #2") == 1, log
    assert log.count("model work abandoned at its deadline (300 ms)") == 1, log
    assert "Traceback" not in log


def test_the_fault_plan_counts_per_kind_and_ignores_bad_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDRAFT_FAULTS", "fim:2, bogus:1, fim:x, handler:1")
    plan = FaultPlan.from_environment()
    plan.check("fim")
    with pytest.raises(InjectedFault):
        plan.check("fim")
    plan.check("fim")
    plan.check("next_edit")  # not planned: never raises
    plan.stall("fim_stall", lambda: False)  # not planned: returns at once
    with pytest.raises(InjectedFault):
        plan.check("handler")
    monkeypatch.delenv("REDRAFT_FAULTS")
    quiet = FaultPlan.from_environment()
    for _ in range(3):
        quiet.check("fim")

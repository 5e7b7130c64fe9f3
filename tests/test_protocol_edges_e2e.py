"""Protocol edges through the real server: wrong parameter types for each of our request
methods and for the notifications, unknown methods, positions out of range, requests after
shutdown, requests before initialize, and the characters Python's ``splitlines`` breaks at but LSP does not."""

import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fuzz import apply_reference
from benchmarks.lsp_client import LspClient, LspError

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio

INVALID_PARAMS, METHOD_NOT_FOUND, INVALID_REQUEST, SERVER_NOT_INITIALIZED = -32602, -32601, -32600, -32002
URI = "file:///x.py"
TEXT = "def f():\n    return 1\n"


def at(line: Any, character: Any) -> dict[str, Any]:
    return {"line": line, "character": character}


def inline(position: Any, trigger: Any = 1, uri: Any = URI) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": position, "context": {"triggerKind": trigger}}


def next_edit(position: Any, uri: Any = URI) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": position}


WRONG_TYPES: list[tuple[str, Any]] = [
    ("textDocument/inlineCompletion", 7),
    ("textDocument/inlineCompletion", []),
    ("textDocument/inlineCompletion", None),
    ("textDocument/inlineCompletion", inline(at("one", None))),
    ("textDocument/inlineCompletion", inline(at(-1, 0))),
    ("textDocument/inlineCompletion", inline(at(2**40, 0))),  # past LSP's uinteger
    ("textDocument/inlineCompletion", inline(at(1.5, 0))),
    ("textDocument/inlineCompletion", inline(at(0, True))),
    ("textDocument/inlineCompletion", inline(at(0, 0), trigger=99)),
    ("textDocument/inlineCompletion", {"textDocument": {"uri": URI}, "position": at(0, 0)}),  # no context
    ("redraft/nextEdit", 7),
    ("redraft/nextEdit", []),
    ("redraft/nextEdit", None),
    ("redraft/nextEdit", "file:///x.py"),
    ("redraft/nextEdit", next_edit(at(1.5, 0))),
    ("redraft/nextEdit", next_edit(at(True, 0))),
    ("redraft/nextEdit", next_edit(at(0, -1))),
    ("redraft/nextEdit", next_edit(at(0, 0), uri=7)),
    ("redraft/nextEdit", {"textDocument": URI, "position": at(0, 0)}),
    ("redraft/nextEdit", {"textDocument": {"uri": URI}}),
    ("workspace/executeCommand", 7),
    ("workspace/executeCommand", {"command": "redraft.noSuchCommand"}),
]


async def state(client: LspClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.request("redraft/debugState", timeout=60)
    return result


async def test_each_request_method_answers_wrong_parameter_types_with_invalid_params() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True})
        await client.initialized()
        await client.did_open(URI, TEXT)
        codes = []
        for method, params in WRONG_TYPES:
            with pytest.raises(LspError) as raised:
                await client.request(method, params, timeout=30)
            reason = str(raised.value).split(f"code {raised.value.code}: ", 1)[-1]  # the server's words
            codes.append((method, params, raised.value.code, reason))
        assert [c for c in codes if c[2] != INVALID_PARAMS] == []
        assert all(str(method) in message or "Command name" in message for method, _, _, message in codes)
        for method in ("redraft/noSuchMethod", "textDocument/noSuchMethod", "$/redraft/noSuchRequest"):
            with pytest.raises(LspError) as unknown:
                await client.request(method, {}, timeout=30)
            assert unknown.value.code == METHOD_NOT_FOUND
        # Still serving, with its copy of the document untouched.
        assert (await state(client))["documents"][URI] == {"version": 1, "text": TEXT}
        answer = await client.request("redraft/nextEdit", next_edit(at(0, 0)), timeout=60)
        assert answer is None or isinstance(answer["items"], list)


async def test_notifications_with_wrong_parameter_types_are_logged_and_dropped_without_a_popup(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr.log"
    bad = [
        ("textDocument/didOpen", {"textDocument": {"uri": "file:///y.py", "text": 7}}),
        ("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                    "contentChanges": [{"range": "everything", "text": "a"}]}),
        ("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                    "contentChanges": [{"range": {"start": at(-3, 0), "end": at(0, 0)}, "text": "a"}]}),
        ("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                    "contentChanges": [{"range": {"start": at(0, 0.5), "end": at(0, 0)},
                                                        "text": "a"}]}),
        ("textDocument/didClose", 7),
        ("workspace/didChangeConfiguration", 7),
    ]
    async with LspClient(SERVER, timeout=60, stderr_log=stderr) as client:
        await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True})
        await client.initialized()
        await client.did_open(URI, TEXT)
        for method, params in bad:
            await client.notify(method, params)
        await client.notify("redraft/feedback", {"id": 7, "accepted": "yes"})  # typed by us: a warning
        assert (await state(client))["documents"] == {URI: {"version": 1, "text": TEXT}}
        # No "Error in server" in the editor for any of them.
        assert [n for n in client.notifications if n["method"] == "window/showMessage"] == []
    log = stderr.read_text()
    for method, _ in bad:
        assert f"ignored {method} notification with invalid parameters" in log
    assert "redraft/feedback needs {id: string, accepted: boolean}" in log


async def test_requests_after_shutdown_get_invalid_request_instead_of_silence() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({})
        await client.initialized()
        await client.did_open(URI, TEXT)
        assert await client.request("shutdown", timeout=60) is None
        for method, params in (("redraft/nextEdit", next_edit(at(0, 0))),
                               ("textDocument/inlineCompletion", inline(at(0, 0))),
                               ("shutdown", None)):
            with pytest.raises(LspError) as raised:
                await client.request(method, params, timeout=30)
            assert raised.value.code == INVALID_REQUEST and "shutting down" in str(raised.value)


async def test_requests_before_initialize_get_server_not_initialized_and_notifications_are_dropped() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.did_open(URI, TEXT)  # dropped: the server is not set up yet
        for method, params in (("textDocument/inlineCompletion", inline(at(1, 12))),
                               ("redraft/nextEdit", next_edit(at(0, 0))), ("shutdown", None)):
            with pytest.raises(LspError) as raised:
                await client.request(method, params, timeout=30)
            assert raised.value.code == SERVER_NOT_INITIALIZED and "initialize first" in str(raised.value)
        await client.initialize({"debugRequests": True})
        await client.initialized()
        assert (await state(client))["documents"] == {}  # the early didOpen never happened
        await client.did_open(URI, TEXT)
        assert (await state(client))["documents"][URI] == {"version": 1, "text": TEXT}


async def test_positions_out_of_range_clamp_in_requests_and_changes() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True, "requestTimeoutMs": 20_000})
        await client.initialized()
        text = "def loop():\n    while True\n"
        await client.did_open(URI, text)
        # A character past the end of its line means the line end; a line past the end, the end.
        answer = await client.request("textDocument/inlineCompletion", inline(at(1, 10_000)), timeout=60)
        assert answer is not None
        assert {item["range"]["start"]["line"] for item in answer["items"]} == {1}
        assert {item["range"]["start"]["character"] for item in answer["items"]} == {14}
        answer = await client.request("textDocument/inlineCompletion", inline(at(10_000, 3)), timeout=60)
        assert answer is None or {i["range"]["start"]["line"] for i in answer["items"]} == {2}
        answer = await client.request("redraft/nextEdit", next_edit(at(2**31, 2**31)), timeout=60)
        assert answer is None or isinstance(answer["items"], list)
        changes = [((1, 500), (1, 900), ":"), ((99, 0), (120, 4), "# end\n"), ((0, 7), (0, 4), "")]
        for version, (start, end, new) in enumerate(changes, start=2):
            await client.did_change(URI, version, [{"range": {"start": at(*start), "end": at(*end)}, "text": new}])
            text = apply_reference(text, start, end, new)
        assert (await state(client))["documents"][URI] == {"version": 4, "text": text}
        assert text == "def p():\n    while True:\n# end\n"


ODD_BREAKS = "\x0c\x0b\x1c\x1d\x1e\x85\u2028\u2029"


async def test_characters_python_splits_lines_at_do_not_move_lsp_positions() -> None:
    # The odd characters in the renamed line, in a string before the use and in a comment
    # further down: splitlines would see 21 lines here, LSP (and the server) 6.
    text = (f"def area(width, height, unit='{ODD_BREAKS}'):\n    half = '{ODD_BREAKS}' and width / 2\n"
            f"    return half * height\n\n\n# {ODD_BREAKS} odd 😀\n")
    assert len(text.split("\n")) == 7 and len(text.splitlines()) > 7
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"debugRequests": True, "requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open(URI, text)
        # An edit after the odd characters on their own line lands where the editor put it.
        await client.did_change(URI, 2, [{"range": {"start": at(5, 14), "end": at(5, 14)}, "text": "!"}])
        text = apply_reference(text, (5, 14), (5, 14), "!")
        assert text.split("\n")[5] == f"# {ODD_BREAKS} odd! 😀"
        # Rename `width` → `w` in the signature: the proposal at its use, after the odd
        # characters of the string, is positioned in LSP's lines and UTF-16 units.
        await client.did_change(URI, 3, [{"range": {"start": at(0, 9), "end": at(0, 14)}, "text": "w"}])
        text = apply_reference(text, (0, 9), (0, 14), "w")
        assert (await state(client))["documents"][URI] == {"version": 3, "text": text}
        answer = await client.request("redraft/nextEdit", next_edit(at(0, 10)), timeout=60)
        assert answer is not None
        edit = answer["items"][0]["edit"]
        start, end = edit["range"]["start"], edit["range"]["end"]
        after = apply_reference(text, (start["line"], start["character"]), (end["line"], end["character"]),
                                edit["newText"])
        assert after == text.replace(f"'{ODD_BREAKS}' and width", f"'{ODD_BREAKS}' and w")

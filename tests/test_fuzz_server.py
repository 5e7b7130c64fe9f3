"""A hypothesis state machine drives the real server over LSP with random sequences of
open / change / inline completion / next edit / cancel / close, including non-ASCII and
surrogate-pair text, and checks after every step that the server is alive and that its
copy of every document equals a reference copy kept here (UTF-16 positions)."""

import asyncio
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from benchmarks.fuzz import apply_reference, char_boundary_positions, format_fuzz, run_fuzz_bench
from benchmarks.lsp_client import LspClient, LspError

T = TypeVar("T")
SERVER = [sys.executable, "-m", "lsp_server", "serve"]
ALPHABET = st.sampled_from([*list("ab_ ():=\n\r\t"), "é", "ß", "中", "😀", "\x0c", "\u2028", "\r\n"])
TEXT = st.lists(ALPHABET, max_size=30).map("".join)


class Loop:
    """One event loop in a thread, so hypothesis's synchronous rules can await."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)


LOOP = Loop()


class ServerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.client = LspClient(SERVER, timeout=60)
        LOOP.run(self.client.start())
        LOOP.run(self.client.initialize({"confidenceThreshold": 0.0, "debugRequests": True,
                                         "requestTimeoutMs": 500}))
        LOOP.run(self.client.initialized())
        self.documents: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.opened = 0

    def teardown(self) -> None:
        LOOP.run(self.client.close())

    @rule(text=TEXT)
    def open_document(self, text: str) -> None:
        self.opened += 1
        uri = f"file:///fuzz/{self.opened}.py"
        LOOP.run(self.client.did_open(uri, text))
        self.documents[uri], self.versions[uri] = text, 1

    @precondition(lambda self: self.documents)
    @rule(data=st.data(), new=TEXT)
    def change(self, data: st.DataObject, new: str) -> None:
        uri = data.draw(st.sampled_from(sorted(self.documents)))
        positions = char_boundary_positions(self.documents[uri])
        start, end = sorted((data.draw(st.sampled_from(positions)), data.draw(st.sampled_from(positions))))
        self.versions[uri] += 1
        LOOP.run(self.client.did_change(uri, self.versions[uri], [{
            "range": {"start": {"line": start[0], "character": start[1]},
                      "end": {"line": end[0], "character": end[1]}}, "text": new}]))
        self.documents[uri] = apply_reference(self.documents[uri], start, end, new)

    @precondition(lambda self: self.documents)
    @rule(data=st.data(), cancel=st.booleans(), method=st.sampled_from(["inline", "next"]))
    def ask(self, data: st.DataObject, cancel: bool, method: str) -> None:
        uri = data.draw(st.sampled_from(sorted(self.documents)))
        line, character = data.draw(st.sampled_from(char_boundary_positions(self.documents[uri])))
        params: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        if method == "inline":
            params["context"] = {"triggerKind": data.draw(st.sampled_from([1, 2]))}
        name = "textDocument/inlineCompletion" if method == "inline" else "redraft/nextEdit"

        async def send() -> Any:
            request_id, future = self.client.send_request(name, params)
            if cancel:
                await self.client.cancel(request_id)
            try:
                return await asyncio.wait_for(future, 60)
            except LspError as exc:
                assert exc.code == -32800, exc  # only "cancelled" is an acceptable error
                return None

        result = LOOP.run(send())
        assert result is None or isinstance(result.get("items"), list)

    @precondition(lambda self: self.documents)
    @rule(data=st.data())
    def close(self, data: st.DataObject) -> None:
        uri = data.draw(st.sampled_from(sorted(self.documents)))
        LOOP.run(self.client.did_close(uri))
        del self.documents[uri]

    @invariant()
    def server_copy_equals_the_reference(self) -> None:
        state = LOOP.run(self.client.request("redraft/debugState", timeout=30))
        assert {uri: d["text"] for uri, d in state["documents"].items()} == self.documents


ServerMachine.TestCase.settings = settings(
    max_examples=6, stateful_step_count=15, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestServerAgainstReference = ServerMachine.TestCase


def test_the_fuzz_bench_runs_sessions_and_finds_no_divergence() -> None:
    report = run_fuzz_bench(sessions=3, steps=12, command=SERVER, seed=5)
    assert (report.sessions, report.steps) == (3, 36) and report.requests > 0
    assert (report.crashes, report.divergences, report.errors) == (0, 0, 0)
    assert "document divergences" in format_fuzz(report)


def test_the_reference_applies_lsp_ranges_in_utf16_with_lsp_line_breaks() -> None:
    text = "a😀b\x0cc\r\nd"
    assert apply_reference(text, (0, 1), (0, 3), "X") == "aXb\x0cc\r\nd"  # the pair is 2 units
    assert apply_reference(text, (1, 0), (1, 9), "") == "a😀b\x0cc\r\n"  # past the end: clamped
    assert (0, 5) in char_boundary_positions(text) and (0, 2) not in char_boundary_positions(text)

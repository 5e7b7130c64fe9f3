"""``redraft bench fuzz --sessions N``: random editing sessions against the real server.

Each session opens a few documents and sends a random sequence of incremental changes
(non-ASCII, surrogate pairs, every kind of line break, form feeds), inline-completion and
next-edit requests (some cancelled at once), and closes; a reference copy of every document
is kept here with LSP's own rules (UTF-16 positions, lines end only at \\n, \\r\\n, \\r).
After each session the server's copies (``redraft/debugState``) must equal the references.
Counted: crashes (the server process died; it is restarted), document divergences, and
errors (any JSON-RPC error other than "request cancelled").

The hypothesis state machine in tests/test_fuzz_server.py drives the same reference
functions with shrinking; this bench runs many more sessions than CI can.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.latency import rss_mb
from benchmarks.lsp_client import LspClient, LspError

PIECES = [*list("ab_ ():=\n\r\t"), "é", "ß", "中", "😀", "\x0c", "\u2028", "\r\n", "\x00", "def f(x):\n    "]
REQUEST_CANCELLED = -32800
_BREAK = re.compile(r"\r\n|\r|\n")


def utf16_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each LSP line's content, in UTF-16 code units."""
    spans, start = [], 0
    for match in _BREAK.finditer(text):
        spans.append((start, _units(text[: match.start()])))
        start = _units(text[: match.end()])
    spans.append((start, _units(text)))
    return spans


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def apply_reference(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> str:
    """``text`` after replacing the LSP range start..end (UTF-16, clamped to lines) by ``new``."""
    lines = utf16_lines(text)
    units = text.encode("utf-16-le", "surrogatepass")

    def offset(position: tuple[int, int]) -> int:
        line, character = position
        if line >= len(lines):
            return len(units) // 2
        begin, finish = lines[line]
        return min(begin + character, finish)

    a, b = sorted((offset(start), offset(end)))
    return (units[: 2 * a] + new.encode("utf-16-le", "surrogatepass") + units[2 * b :]).decode(
        "utf-16-le", "surrogatepass")


def char_boundary_positions(text: str) -> list[tuple[int, int]]:
    """Every position between two characters (never inside a surrogate pair)."""
    positions = []
    for line_no, line in enumerate(_BREAK.split(text)):
        units = 0
        positions.append((line_no, 0))
        for ch in line:
            units += 2 if ord(ch) > 0xFFFF else 1
            positions.append((line_no, units))
    return positions


@dataclass
class FuzzReport:
    sessions: int = 0
    steps: int = 0
    requests: int = 0
    crashes: int = 0
    divergences: int = 0
    errors: int = 0
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    seconds: float = 0.0


class _Session:
    def __init__(self, client: LspClient, rng: random.Random, report: FuzzReport, session: int) -> None:
        self.client, self.rng, self.report = client, rng, report
        self.documents: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.prefix = f"file:///fuzz/{session}/"

    def _text(self) -> str:
        return "".join(self.rng.choice(PIECES) for _ in range(self.rng.randint(0, 20)))

    async def step(self) -> None:
        rng, documents = self.rng, self.documents
        action = rng.choice(["open", "change", "change", "change", "ask", "ask", "close"]) if documents else "open"
        if action == "open":
            uri = f"{self.prefix}{len(self.versions)}.py"
            documents[uri], self.versions[uri] = self._text(), 1
            await self.client.did_open(uri, documents[uri])
            return
        uri = rng.choice(sorted(documents))
        if action == "close":
            await self.client.did_close(uri)
            del documents[uri]
        elif action == "change":
            positions = char_boundary_positions(documents[uri])
            start, end = sorted((rng.choice(positions), rng.choice(positions)))
            new = self._text()
            self.versions[uri] += 1
            await self.client.did_change(uri, self.versions[uri], [{
                "range": {"start": {"line": start[0], "character": start[1]},
                          "end": {"line": end[0], "character": end[1]}}, "text": new}])
            documents[uri] = apply_reference(documents[uri], start, end, new)
        else:
            await self._ask(uri)

    async def _ask(self, uri: str) -> None:
        line, character = self.rng.choice(char_boundary_positions(self.documents[uri]))
        params: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        method = "redraft/nextEdit"
        if self.rng.random() < 0.6:
            method = "textDocument/inlineCompletion"
            params["context"] = {"triggerKind": self.rng.choice([1, 2])}
        request_id, answer = self.client.send_request(method, params)
        if self.rng.random() < 0.3:
            await self.client.cancel(request_id)
        self.report.requests += 1
        try:
            result = await asyncio.wait_for(answer, 60)
            if result is not None and not isinstance(result.get("items"), list):
                self.report.errors += 1
        except LspError as exc:
            if exc.code != REQUEST_CANCELLED:
                self.report.errors += 1

    async def check(self) -> None:
        state = await self.client.request("redraft/debugState", timeout=60)
        seen = {uri: d["text"] for uri, d in state["documents"].items() if uri.startswith(self.prefix)}
        if seen != self.documents:
            self.report.divergences += 1
        for uri in list(self.documents):  # leave nothing open for the next session
            await self.client.did_close(uri)


async def _run(sessions: int, steps: int, command: list[str], seed: int) -> FuzzReport:
    rng = random.Random(seed)
    report = FuzzReport()
    started = time.perf_counter()
    client: LspClient | None = None
    try:
        for session in range(sessions):
            if client is None:
                client = LspClient(command, timeout=120)
                await client.start()
                await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True,
                                         "requestTimeoutMs": 300})
                await client.initialized()
            run = _Session(client, rng, report, session)
            try:
                for _ in range(steps):
                    await run.step()
                    report.steps += 1
                await run.check()
                if not report.rss_start_mb:  # after the first session: the model has loaded
                    report.rss_start_mb = rss_mb(client.pid)
            except LspError:
                report.errors += 1  # debugState itself failed
            except (TimeoutError, ConnectionError):
                report.crashes += 1
                await client.close(graceful=False)
                client = None
            report.sessions += 1
        if client is not None:
            report.rss_end_mb = rss_mb(client.pid)
    finally:
        if client is not None:
            await client.close()
    report.seconds = time.perf_counter() - started
    return report


def run_fuzz_bench(sessions: int, steps: int, command: list[str], seed: int = 0) -> FuzzReport:
    return asyncio.run(_run(sessions, steps, command, seed))


def format_fuzz(report: FuzzReport) -> str:
    rows = [
        ("sessions", f"{report.sessions} × {report.steps // max(1, report.sessions)} steps"),
        ("requests (30% cancelled at once)", str(report.requests)),
        ("crashes", str(report.crashes)),
        ("document divergences", str(report.divergences)),
        ("errors", str(report.errors)),
        ("server RSS after the first session → end", f"{report.rss_start_mb:.0f} → {report.rss_end_mb:.0f} MB"),
        ("wall time", f"{report.seconds:.0f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)

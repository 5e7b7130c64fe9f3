"""``redraft bench http``: many clients at once against ``redraft http``.

Each request is a single-line FIM completion on a real file: a code line of the file is cut
after a random number of its characters and the rest of the line is asked for, with the
window of text around it that llama.vim sends (256 lines before the cursor, 64 after).
N clients, each with its own connection, send the requests one after another as fast as
the answers come; a row per client count reports throughput (answered requests a second),
latency percentiles of the answered requests, refusals (429) and errors by status.

``--burst`` instead starts every request at the same moment, spread over the clients, and
checks what the server promises under a flood: every request is answered (200) or refused
with 429, none lost to another status or a dropped connection, and the server still
answers ``/health`` afterwards.

The server is started on a free loopback port as a subprocess, or ``--url`` names one
running. The clients share the machine with it: on a small machine their own work is part
of what the figures measure.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from benchmarks.latency import typing_spots
from benchmarks.scoring import percentile

PREFIX_LINES = 256  # llama.vim's n_prefix and n_suffix: the window an HTTP client sends
SUFFIX_LINES = 64
WARM_UP_REQUESTS = 3  # before the first row: the first answers fill caches that every later one finds
START_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class FimCase:
    prompt: str
    suffix: str


@dataclass
class HttpRow:
    clients: int
    sent: int = 0
    answered: int = 0  # 200
    with_text: int = 0  # … whose answer cleared the threshold
    refused: int = 0  # 429
    errors: Counter[str] = field(default_factory=Counter)  # any other status, or what the connection raised
    latencies_ms: list[float] = field(default_factory=list)  # of the answered requests
    seconds: float = 0.0

    @property
    def throughput(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0


@dataclass
class HttpReport:
    url: str
    rows: list[HttpRow]
    burst: bool
    alive: bool  # /health answered 200 after the last row
    cases: int
    max_tokens: int


def fim_cases(files: Sequence[Path], count: int, seed: int = 0) -> list[FimCase]:
    """``count`` distinct single-line holes in ``files`` where they hold that many (the
    spots ``bench latency`` types at), else as many as they hold."""
    per_file = max(1, -(-count // max(1, len(files))))
    rng = random.Random(seed)
    cases = []
    for _, text, start, end in typing_spots(files, per_file, seed):
        line = text[start:end]
        indent = len(line) - len(line.lstrip())
        cursor = start + indent + rng.randint(1, max(1, len(line) - indent - 1))
        window_start = _line_start_before(text, cursor, PREFIX_LINES)
        window_end = _line_end_after(text, end, SUFFIX_LINES)
        cases.append(FimCase(text[window_start:cursor], text[end:window_end]))
    rng.shuffle(cases)
    return cases[:count]


def _line_start_before(text: str, at: int, lines: int) -> int:
    start = text.rfind("\n", 0, at)
    for _ in range(lines):
        if start <= 0:
            return 0
        start = text.rfind("\n", 0, start)
    return max(0, start + 1)


def _line_end_after(text: str, at: int, lines: int) -> int:
    end = at
    for _ in range(lines):
        end = text.find("\n", end + 1)
        if end < 0:
            return len(text)
    return end + 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def served(url: str | None, command: list[str], max_pending: int | None, workers: int | None = None) -> Iterator[str]:
    """``url``, or a ``redraft http`` started for the bench (``command`` + ``http …``)."""
    if url is not None:
        yield url.rstrip("/")
        return
    port = _free_port()
    extra = ["--max-pending", str(max_pending)] if max_pending is not None else []
    extra += ["--workers", str(workers)] if workers is not None else []
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([*command, "http", "--port", str(port), *extra], stdout=log, stderr=log)
        started = f"http://127.0.0.1:{port}"
        try:
            _wait_until_loaded(started, process, log)
            yield started
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_until_loaded(url: str, process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            said = log.read().decode(errors="replace").strip()[-2000:]
            raise RuntimeError(f"redraft http exited with {process.returncode} before it answered: {said}")
        try:
            if httpx.get(url + "/health", timeout=1).json().get("model_loaded"):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"redraft http did not load its model within {START_TIMEOUT_S:.0f} s")


def _body(case: FimCase, max_tokens: int) -> dict[str, object]:
    return {"model": "redraft", "prompt": case.prompt, "suffix": case.suffix, "max_tokens": max_tokens,
            "stop": ["\n"]}


async def _send(client: httpx.AsyncClient, case: FimCase, max_tokens: int, row: HttpRow) -> None:
    row.sent += 1
    sent = time.perf_counter()
    try:
        reply = await client.post("/v1/fim/completions", json=_body(case, max_tokens))
    except httpx.HTTPError as exc:
        row.errors[type(exc).__name__] += 1
        return
    if reply.status_code == 200:
        row.answered += 1
        row.latencies_ms.append((time.perf_counter() - sent) * 1000)
        row.with_text += bool(reply.json()["choices"][0]["text"])
    elif reply.status_code == 429:
        row.refused += 1
    else:
        row.errors[str(reply.status_code)] += 1


async def _row(url: str, cases: list[FimCase], clients: int, requests: int, max_tokens: int, burst: bool) -> HttpRow:
    row = HttpRow(clients)
    shares = [[cases[i % len(cases)] for i in range(n, requests, clients)] for n in range(clients)]

    async def one_client(share: list[FimCase]) -> None:
        # One client per editor: its own connections, so the server sees N peers, not one.
        limits = httpx.Limits(max_connections=len(share) if burst else 1)
        async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
            if burst:
                await asyncio.gather(*(_send(client, case, max_tokens, row) for case in share))
            else:
                for case in share:
                    await _send(client, case, max_tokens, row)

    started = time.perf_counter()
    await asyncio.gather(*(one_client(share) for share in shares if share))
    row.seconds = time.perf_counter() - started
    return row


async def _bench(url: str, cases: list[FimCase], clients: list[int], requests: int, max_tokens: int,
                 burst: bool) -> HttpReport:
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S) as warm:
        for case in cases[:WARM_UP_REQUESTS]:
            await warm.post("/v1/fim/completions", json=_body(case, max_tokens))
    rows = [await _row(url, cases, n, requests, max_tokens, burst) for n in clients]
    try:
        async with httpx.AsyncClient(base_url=url, timeout=10) as probe:
            alive = (await probe.get("/health")).status_code == 200
    except httpx.HTTPError:
        alive = False
    return HttpReport(url, rows, burst, alive, len(cases), max_tokens)


def run_http_bench(files: Sequence[Path], clients: list[int], requests: int, command: list[str],
                   url: str | None = None, burst: bool = False, max_tokens: int = 24,
                   max_pending: int | None = None, workers: int | None = None) -> HttpReport:
    cases = fim_cases(files, requests)
    if not cases:
        raise ValueError("the files hold no code line to complete (each needs 1,000 characters before a line of "
                         "12 or more)")
    with served(url, command, max_pending, workers) as base:
        return asyncio.run(_bench(base, cases, clients, requests, max_tokens, burst))


def parse_clients(text: str) -> list[int]:
    """``--clients``: a count or a list of counts, ``1,4,8``."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--clients takes whole numbers separated by commas, not {text!r}") from None
    if not counts or min(counts) < 1:
        raise ValueError(f"--clients takes counts of 1 or more, not {text!r}")
    return counts


def format_http(report: HttpReport) -> str:
    head = (f"redraft http at {report.url}: single-line FIM requests (max_tokens {report.max_tokens}, stop at the "
            f"line's end) on {report.cases} distinct holes in real files"
            + (", every request sent at once" if report.burst else ", each client sending as answers come"))
    columns = ("clients", "sent", "answered", "shown", "429", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms")
    lines = [head, "", "  ".join(f"{c:>8}" for c in columns)]
    for row in report.rows:
        errors = ",".join(f"{k}:{v}" for k, v in sorted(row.errors.items())) or "0"
        cells = (row.clients, row.sent, row.answered, row.with_text, row.refused, errors, f"{row.throughput:.1f}",
                 *(f"{percentile(row.latencies_ms, q):.1f}" for q in (50, 95, 99)))
        lines.append("  ".join(f"{cell:>8}" for cell in cells))
    lines += ["", f"server alive after the last row: {'yes' if report.alive else 'NO'}"]
    if report.burst:
        lost = sum(sum(row.errors.values()) for row in report.rows)
        lines.append(f"burst: every request answered or refused with 429: {'yes' if not lost else f'NO ({lost} not)'}")
    return "\n".join(lines)

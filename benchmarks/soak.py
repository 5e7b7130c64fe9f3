"""``redraft bench soak``: many requests with cancellations against real files, one server.

Real Python files are opened one after another; at random places a few characters are
typed (incremental ``didChange``) and an Automatic inline completion is asked — 30% of
them cancelled at once, as editors do when the user types on — with a next-edit request
every fifth step. The table: requests, errors (JSON-RPC errors other than "cancelled",
timeouts), crashes, server RSS after the first answer, after the first tenth of the
requests (caches and allocator pools filled: the growth figure starts there) and at the
end, and latency drift (p50 of the first vs. the last tenth of the answered requests).
"""

from __future__ import annotations

import asyncio
import random
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.fuzz import REQUEST_CANCELLED
from benchmarks.latency import rss_mb
from benchmarks.lsp_client import LspClient, LspError, LspPosition
from benchmarks.scoring import percentile

MAX_FILE_CHARS = 200_000


@dataclass
class SoakReport:
    requests: int = 0
    cancelled: int = 0
    errors: int = 0
    crashes: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    rss_start_mb: float = 0.0
    rss_warm_mb: float = 0.0
    rss_end_mb: float = 0.0
    seconds: float = 0.0


def default_files(limit: int = 200) -> list[Path]:
    """Standard-library modules: real code any machine with Python has."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if 1_000 < p.stat().st_size < MAX_FILE_CHARS)
    return files[:limit]


async def _request(client: LspClient, method: str, params: dict[str, object], cancel: bool,
                   report: SoakReport) -> None:
    started = time.perf_counter()
    request_id, answer = client.send_request(method, params)
    if cancel:
        await client.cancel(request_id)
    report.requests += 1
    try:
        await asyncio.wait_for(answer, 60)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
    except LspError as exc:
        if exc.code == REQUEST_CANCELLED:
            report.cancelled += 1
        else:
            report.errors += 1
    except TimeoutError:
        report.errors += 1


async def _run(requests: int, files: list[Path], command: list[str], seed: int) -> SoakReport:
    rng = random.Random(seed)
    report = SoakReport()
    started = time.perf_counter()
    async with LspClient(command, timeout=120) as client:
        await client.initialize({"requestTimeoutMs": 2_000})
        await client.initialized()
        try:
            await _soak(client, requests, files, rng, report)
        except ConnectionError:  # the server died: the soak ends there
            report.crashes += 1
            return report
        report.rss_end_mb = rss_mb(client.pid)
    report.seconds = time.perf_counter() - started
    return report


async def _soak(client: LspClient, requests: int, files: list[Path], rng: random.Random, report: SoakReport) -> None:
    step = opened = 0
    while report.requests < requests:
        path = files[opened % len(files)]
        opened += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        uri = path.as_uri()
        await client.did_open(uri, text)
        lines = text.split("\n")
        version = 1
        for _ in range(20):  # twenty edits per file, then the next file
            line = rng.randrange(len(lines))
            character = rng.randint(0, len(lines[line]))  # ASCII mostly: UTF-16 = code points here
            typed = rng.choice(["x", " = ", "(", "self.", "\n    "])
            version += 1
            at = LspPosition(line=line, character=character)
            await client.did_change(uri, version, [{"range": {"start": at, "end": at}, "text": typed}])
            lines[line : line + 1] = (lines[line][:character] + typed + lines[line][character:]).split("\n")
            where = {"line": line, "character": character + len(typed.split("\n")[-1])}
            if "\n" in typed:
                where = {"line": line + 1, "character": len(typed.split("\n")[-1])}
            params: dict[str, object] = {"textDocument": {"uri": uri}, "position": where,
                                         "context": {"triggerKind": 2}}
            await _request(client, "textDocument/inlineCompletion", params, rng.random() < 0.3, report)
            if not report.rss_start_mb and report.latencies_ms:  # after the model has loaded
                report.rss_start_mb = rss_mb(client.pid)
            if not report.rss_warm_mb and report.requests >= max(1, requests // 10):
                report.rss_warm_mb = rss_mb(client.pid)
            step += 1
            if step % 5 == 0:
                await _request(client, "redraft/nextEdit", {"textDocument": {"uri": uri}, "position": where},
                               False, report)
            if report.requests >= requests:
                break
        await client.did_close(uri)


def run_soak_bench(requests: int, files: list[Path] | None, command: list[str], seed: int = 0) -> SoakReport:
    return asyncio.run(_run(requests, files or default_files(), command, seed))


def format_soak(report: SoakReport) -> str:
    latencies = report.latencies_ms
    tenth = max(1, len(latencies) // 10)
    warm = report.rss_warm_mb or report.rss_start_mb
    growth = (report.rss_end_mb - warm) / max(1e-9, warm)
    rows = [
        ("requests", f"{report.requests} ({report.cancelled} cancelled)"),
        ("errors", str(report.errors)),
        ("crashes", str(report.crashes)),
        ("server RSS first answer / first tenth → end",
         f"{report.rss_start_mb:.0f} / {warm:.0f} → {report.rss_end_mb:.0f} MB ({growth:+.1%} after the first tenth)"),
        ("latency p50 first → last tenth", f"{percentile(latencies[:tenth], 50):.0f} → "
                                           f"{percentile(latencies[-tenth:], 50):.0f} ms"),
        ("latency p50 / p95 overall", f"{percentile(latencies, 50):.0f} / {percentile(latencies, 95):.0f} ms"),
        ("wall time", f"{report.seconds:.0f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)

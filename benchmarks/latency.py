"""``redraft bench latency``: simulated typing through the real server.

For each sampled line of real files, the line's tail is removed and then typed back one
character per keystroke: an incremental ``didChange`` and an Automatic
``inlineCompletion`` per keystroke, at a fixed typing interval. A request still unanswered
when the next keystroke comes is cancelled (``$/cancelRequest``), as an editor does; it
counts as dropped. Latency is measured on answered requests (a null answer is an answer).

The server runs at the confidence threshold users get unless told otherwise: below it the
server stops refining candidates that can't be shown, so threshold 0 (every candidate
scored in full) is the slowest setting, not the served one.

Each shown suggestion is judged against the line the typing goes on to write (``judged``):
right as far as it reaches, and whether it also ends the line as the file does. A
suggestion that stays shown while the typing agrees with it (type-through) is counted at
every keystroke, and once among the distinct suggestions.

It also reports the server's CPU time: per keystroke while typing, and over a quiet
second after the last one (``IDLE_CHECK_S``), since a fast answer bought by keeping the
editor's cores busy is no gift to the user.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.lsp_client import LspClient, LspError
from benchmarks.lsp_text import apply_item, first_item, item_text, offset_to_position, position_to_offset
from benchmarks.scoring import percentile
from lsp_server.options import ServerOptions
from lsp_server.protocol import CURSOR

log = logging.getLogger(__name__)

MIN_CONTEXT_CHARS = 1_000
IDLE_CHECK_S = 1.0  # how long the server's CPU is watched once typing stops


@dataclass(frozen=True)
class Typing:
    """How the bench types, besides its pace (``redraft bench latency``'s flags)."""

    back_and_forth: bool = False  # the lines of two files at a time, in halves, A B A B (``_type_lines``)
    rest_ms: float = 0.0  # before typing at a place, the cursor rests there this long, told with redraft/cursor
    auto_close: bool = False  # brackets as editors close them: ( [ { bring their closer, typed over later
    # Lines of any length, comments too, not only code lines of 12 characters or more: a
    # short line's guess (``else:`` after ``e``) is never right among long lines alone.
    every_line: bool = False
    # Each line typed at the end of its file, the text after it gone: code written top down,
    # new, whose blocks have no body yet when their header is typed.
    at_end: bool = False

    def describe(self) -> str:
        parts = ["back and forth" if self.back_and_forth else "",
                 f"the cursor rests {self.rest_ms:.0f} ms first (redraft/cursor)" if self.rest_ms else "",
                 "brackets closed as typed" if self.auto_close else "",
                 "every line (short ones and comments too)" if self.every_line else "",
                 "at the end of the file (new code)" if self.at_end else ""]
        return ", ".join(part for part in parts if part) or "plain"


CLOSERS = {"(": ")", "[": "]", "{": "}"}


@dataclass
class LatencyReport:
    latencies_ms: list[float] = field(default_factory=list)
    shown: int = 0
    dropped: int = 0
    errors: int = 0
    cold_start_ms: float = 0.0
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    typing_cpu_s: float = 0.0  # the server's CPU time from the first keystroke to the last answer
    idle_cpu_s: float = 0.0  # … and over IDLE_CHECK_S after it
    threshold: float = ServerOptions.confidence_threshold  # confidenceThreshold sent to the server
    runs: list[LatencyReport] = field(default_factory=list)  # each run's own, when several were pooled
    typing: Typing = Typing()
    back_ms: list[float] = field(default_factory=list)  # the answered first keystrokes back at a place
    first_ms: list[float] = field(default_factory=list)  # the answered first keystrokes at a new place
    right: int = 0  # shown suggestions that the typing goes on to write, as far as they go (``judged``)
    whole_line: int = 0  # … of which those that end the line as it ends
    # Each suggestion once, however many keystrokes it stayed shown: (uri, line start, shown line) → right.
    distinct: dict[tuple[str, int, str], bool] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return len(self.latencies_ms) + self.dropped + self.errors


def pooled(reports: Sequence[LatencyReport]) -> LatencyReport:
    """Several runs as one: every answered request's latency, counts and CPU summed, the
    median cold start, the lowest RSS at the start and the highest at the end."""
    if len(reports) == 1:
        return reports[0]
    cold = sorted(r.cold_start_ms for r in reports)
    return LatencyReport(
        latencies_ms=[ms for r in reports for ms in r.latencies_ms],
        shown=sum(r.shown for r in reports), dropped=sum(r.dropped for r in reports),
        errors=sum(r.errors for r in reports), cold_start_ms=cold[len(cold) // 2],
        rss_start_mb=min(r.rss_start_mb for r in reports), rss_end_mb=max(r.rss_end_mb for r in reports),
        typing_cpu_s=sum(r.typing_cpu_s for r in reports), idle_cpu_s=max(r.idle_cpu_s for r in reports),
        threshold=reports[0].threshold, runs=list(reports), typing=reports[0].typing,
        right=sum(r.right for r in reports), whole_line=sum(r.whole_line for r in reports),
        distinct={key: right for r in reports for key, right in r.distinct.items()},
        back_ms=[ms for r in reports for ms in r.back_ms], first_ms=[ms for r in reports for ms in r.first_ms])


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and all its threads, from /proc (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime in ticks


def typing_spots(files: Sequence[Path], lines_per_file: int, seed: int,
                 every_line: bool = False) -> list[tuple[Path, str, int, int]]:
    """(file, text, line start, line end) of lines worth typing: ≥ 1,000 characters before
    them, and unless ``every_line``, code lines of 12 characters or more."""
    rng = random.Random(seed)
    spots: list[tuple[Path, str, int, int]] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        starts = [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        candidates = []
        for start in starts:
            end = text.find("\n", start)
            line = text[start:end] if end >= 0 else ""
            worth = line.strip() != "" if every_line else len(line.strip()) >= 12 and not line.strip().startswith("#")
            if start >= MIN_CONTEXT_CHARS and worth:
                candidates.append((start, end))
        for start, end in rng.sample(candidates, min(lines_per_file, len(candidates))):
            spots.append((path, text, start, end))
    return spots


@dataclass
class _Line:
    """A document whose line's tail was removed, typed back from its indentation on."""

    uri: str
    text: str
    end: int
    document: str = ""
    offset: int = 0  # the next character of ``text`` to type

    @classmethod
    def of(cls, uri: str, text: str, start: int, end: int, at_end: bool = False) -> _Line:
        """``at_end``: the text after the line is gone, but for its line break."""
        line = text[start:end]
        column = start + len(line) - len(line.lstrip())
        if at_end:
            text = text[:end] + "\n"
        return cls(uri, text, end, text[:column] + text[end:], column)


async def _type(
    client: LspClient, line: _Line, upto: int, interval_s: float, report: LatencyReport, version: int,
    back: bool = False,
) -> int:
    """Type ``line.text[line.offset:upto]``, one request per keystroke, as ``report.typing``
    says; ``back``: the server was at another place before this one's first keystroke."""
    pending: tuple[int, asyncio.Future[Any], float] | None = None
    tasks: list[asyncio.Task[None]] = []
    typing = report.typing
    if typing.rest_ms > 0:
        line_no, character = offset_to_position(line.document, line.offset)
        await client.notify(CURSOR, {"textDocument": {"uri": line.uri},
                                     "position": {"line": line_no, "character": character}})
        await asyncio.sleep(typing.rest_ms / 1000)

    async def settle(request_id: int, future: asyncio.Future[Any], sent: float, first: bool,
                     document: str, cursor: int) -> None:
        try:
            result = await asyncio.wait_for(future, 60)
        except LspError as exc:
            if exc.code == -32800:  # RequestCancelled: the next keystroke came first
                report.dropped += 1
            else:
                report.errors += 1
            return
        except (TimeoutError, ConnectionError):
            report.errors += 1
            return
        report.latencies_ms.append((time.perf_counter() - sent) * 1000)
        if first:
            (report.back_ms if back else report.first_ms).append(report.latencies_ms[-1])
        item = first_item(result)
        if item is not None and item_text(item):
            report.shown += 1
            judgement = judged(line.text, document, cursor, item)
            report.right += judgement.right
            report.whole_line += judgement.whole
            report.distinct[line.uri, judgement.line_start, judgement.shown] = judgement.right
            log.debug("shown, %s: %r + %r (the line: %r)", "right" if judgement.right else "wrong",
                      document[judgement.line_start:cursor], item_text(item),
                      line.text[judgement.line_start:line.end])

    for cursor in range(line.offset, upto):
        typed = line.text[cursor]
        if typing.auto_close and typed in CLOSERS.values() and line.document[cursor:cursor + 1] == typed:
            pass  # typed over the closer the editor put there: the text stays, the cursor moves on
        else:
            inserted = typed + CLOSERS[typed] if typing.auto_close and typed in CLOSERS else typed
            version += 1
            line_no, character = offset_to_position(line.document, cursor)
            await client.did_change(line.uri, version, [{
                "range": {"start": {"line": line_no, "character": character},
                          "end": {"line": line_no, "character": character}},
                "text": inserted,
            }])
            line.document = line.document[:cursor] + inserted + line.document[cursor:]
        if pending is not None and not pending[1].done():
            await client.cancel(pending[0])
        line_no, character = offset_to_position(line.document, cursor + 1)
        request_id, future = client.send_request("textDocument/inlineCompletion", {
            "textDocument": {"uri": line.uri}, "position": {"line": line_no, "character": character},
            "context": {"triggerKind": 2}})
        pending = (request_id, future, time.perf_counter())
        tasks.append(asyncio.create_task(settle(*pending, cursor == line.offset, line.document, cursor + 1)))
        await asyncio.sleep(interval_s)
    await asyncio.gather(*tasks)
    line.offset = max(line.offset, upto)
    return version


@dataclass(frozen=True)
class Judged:
    """A shown suggestion against how the file goes on."""

    line_start: int  # where the suggestion's first line starts
    shown: str  # that line, as typed so far, with the suggestion applied, through the suggestion's last line
    right: bool  # the shown text, as far as the suggestion reaches, is how the file goes on
    whole: bool  # … and the rest of the line it ends on is too


def judged(final: str, document: str, cursor: int, item: dict[str, Any]) -> Judged:
    """``item`` shown at ``cursor`` in ``document``, judged against ``final``, the text
    the typing goes on to make (``document`` and ``final`` agree up to the cursor's line)."""
    edit_range = item.get("range")
    replaced_from = cursor
    if isinstance(edit_range, dict):
        replaced_from = position_to_offset(document, edit_range["start"]["line"], edit_range["start"]["character"])
    applied = apply_item(document, cursor, item)
    start = document.rfind("\n", 0, replaced_from) + 1
    reach = replaced_from + len(item_text(item))
    line_end = applied.find("\n", reach)
    shown = applied[start:line_end if line_end >= 0 else None]
    right = final.startswith(applied[start:reach], start)
    whole = right and final.startswith(shown, start) and final[start + len(shown):][:1] in ("", "\n")
    return Judged(start, shown, right, whole)


async def _type_lines(
    client: LspClient, lines: Sequence[_Line], interval_s: float, report: LatencyReport, version: int,
) -> int:
    """Each line typed whole in its open document; or, two lines (``Typing.back_and_forth``),
    both documents open at once and typed in halves, A B A B, so that each second half starts
    where the server was two places ago (a function and its caller, two files)."""
    halves = len(lines) == 2
    for line in lines:
        await client.did_open(line.uri, line.document, version=version)
    for line in lines if halves else ():
        version = await _type(client, line, line.offset + (line.end - line.offset) // 2, interval_s, report, version)
    for line in lines:
        version = await _type(client, line, line.end, interval_s, report, version, back=halves)
    for line in lines:
        await client.did_close(line.uri)
    return version


def _pairs(paths: Sequence[Path], lines: Sequence[_Line]) -> list[list[_Line]]:
    """The lines of two files at a time, each with the other file's line of the same rank
    (two places of one file can't be two open documents); an odd file's lines alone."""
    files: dict[Path, list[_Line]] = {}
    for path, line in zip(paths, lines, strict=True):
        files.setdefault(path, []).append(line)
    groups = list(files.values())
    batches: list[list[_Line]] = []
    for first, second in zip(groups[::2], groups[1::2] + [[]] * (len(groups) % 2), strict=True):
        batches.extend([a, b] for a, b in zip(first, second, strict=False))
        batches.extend([line] for line in first[len(second):] + second[len(first):])
    return batches


async def _run(files: Sequence[Path], lines_per_file: int, interval_ms: float, command: list[str],
               seed: int, workspace: Path | None, threshold: float, typing: Typing) -> LatencyReport:
    report = LatencyReport(threshold=threshold, typing=typing)
    spots = typing_spots(files, lines_per_file, seed, typing.every_line)
    if not spots:
        raise ValueError("no line with 1,000 characters of context before it in the given files")
    started = time.perf_counter()
    async with LspClient(command, timeout=120) as client:
        await client.initialize({"confidenceThreshold": threshold}, workspace_folders=[workspace] if workspace else [])
        await client.initialized()
        _, text, start, _ = spots[0]
        await client.did_open("file:///bench/cold.py", text[:start])
        line, character = offset_to_position(text[:start], start)
        await client.inline_completion("file:///bench/cold.py", line, character)
        report.cold_start_ms = (time.perf_counter() - started) * 1000
        await client.did_close("file:///bench/cold.py")
        pid = client.pid
        report.rss_start_mb = rss_mb(pid)
        cpu_start = cpu_seconds(pid)
        version = 1
        # In a workspace, each document is its file (which the server must not copy from).
        lines = [_Line.of(path.absolute().as_uri() if workspace else f"file:///bench/typing-{n}.py", text, start, end,
                          typing.at_end)
                 for n, (path, text, start, end) in enumerate(spots)]
        batches = _pairs([path for path, *_ in spots], lines) if typing.back_and_forth else [[line] for line in lines]
        for batch in batches:
            version = await _type_lines(client, batch, interval_ms / 1000, report, version)
        report.rss_end_mb = rss_mb(pid)
        typed = cpu_seconds(pid)
        report.typing_cpu_s = typed - cpu_start
        await asyncio.sleep(IDLE_CHECK_S)
        report.idle_cpu_s = cpu_seconds(pid) - typed
    return report


def run_latency_bench(files: Sequence[Path], lines_per_file: int, interval_ms: float, command: list[str],
                      seed: int = 0, workspace: Path | None = None,
                      threshold: float = ServerOptions.confidence_threshold, runs: int = 1,
                      typing: Typing = Typing()) -> LatencyReport:
    """``workspace``: a folder the server gets as its workspace (it scans and indexes it
    while the first answer is awaited, as in an editor); ``threshold``: the
    confidenceThreshold the server is started with; ``runs``: how many times the same
    typing is replayed, each against a server of its own, pooled (``pooled``): one run's
    p95 moves by ±6 ms from run to run on a 2-core machine; ``typing``: how
    the lines are typed (``Typing``)."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, not {runs}")
    return pooled([asyncio.run(_run(files, lines_per_file, interval_ms, command, seed, workspace, threshold,
                                    typing)) for _ in range(runs)])


def _p50_p95(latencies: list[float]) -> str:
    if not latencies:
        return "n/a"
    return f"{percentile(latencies, 50):.1f} / {percentile(latencies, 95):.1f} ms ({len(latencies)} answered)"


def format_latency(report: LatencyReport, interval_ms: float) -> str:
    answered = report.latencies_ms
    per_keystroke_ms = report.typing_cpu_s * 1000 / max(1, report.requests)
    rows = [
        ("keystrokes (requests)", f"{report.requests}"),
        ("typing interval", f"{interval_ms:.0f} ms"),
        *([("typing", report.typing.describe())] if report.typing != Typing() else []),
        ("confidence threshold", f"{report.threshold:g}"),
        ("answered", f"{len(answered)}  (with a suggestion: {report.shown})"),
        ("shown: right as far as they go / ending the line right",
         f"{report.right / max(1, report.shown):.1%} / {report.whole_line / max(1, report.shown):.1%}"),
        ("distinct suggestions shown: right as far as they go",
         f"{sum(report.distinct.values())} of {len(report.distinct)}"
         f" ({sum(report.distinct.values()) / max(1, len(report.distinct)):.1%})"),
        ("dropped (cancelled by the next keystroke)", f"{report.dropped / max(1, report.requests):.1%}"),
        ("errors", f"{report.errors}"),
        ("first keystroke at a new place p50 / p95", _p50_p95(report.first_ms)),
        *([("first keystroke back at a place p50 / p95", _p50_p95(report.back_ms))]
          if report.typing.back_and_forth else []),
        ("latency p50 / p95 / p99",
         " / ".join(f"{percentile(answered, q):.1f}" for q in (50, 95, 99)) + " ms" if answered else "n/a"),
        ("cold start to first answer" + (" (median)" if report.runs else ""), f"{report.cold_start_ms:.0f} ms"),
        ("server RSS start → end", f"{report.rss_start_mb:.0f} → {report.rss_end_mb:.0f} MB"),
        ("server CPU while typing", f"{per_keystroke_ms:.1f} ms per keystroke ({per_keystroke_ms / interval_ms:.0%} "
                                    "of a core)"),
        (f"server CPU in the {IDLE_CHECK_S:g} s after", f"{report.idle_cpu_s * 1000:.0f} ms"),
    ]
    if report.runs:
        rows.insert(0, ("runs (each against a new server), p50 / p95",
                        ", ".join(f"{percentile(r.latencies_ms, 50):.1f} / {percentile(r.latencies_ms, 95):.1f}"
                                  if r.latencies_ms else "n/a" for r in report.runs) + " ms"))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)

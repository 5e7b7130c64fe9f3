"""``redraft bench nextedit``: real commit-like hunks replayed through the real server.

For each file pair (a file in two releases) and a chosen hunk k ≥ 1: open the old file,
apply hunks 1..k-1 as incremental ``didChange`` events, put the cursor at the end of the
last applied hunk, call ``redraft/nextEdit`` and apply ``items[0].edit`` — exactly the
evaluation's contract. By default the server runs with ``nextEditConfidenceThreshold`` 0
so every proposal and its confidence is seen; shown rate and precision at each threshold
are then computed here. That also runs the network on every request when its measured
precision is above zero (the served default, 0.5, skips it below that): ``--threshold
0.5`` measures the latency users get.

- exact: the document after the edit equals the file after hunk k (lines compared with
  trailing whitespace ignored);
- location: the edit starts within one line of hunk k's region.

``--bottom-up``: the hunks after hunk k are applied instead, from the last one up, with the
cursor after the last applied (hunk k+1): a release diff does not say in which order its
hunks were made, and a proposal above the change can only be right this way.

``--hunk-context N``: hunks cut as ``git diff -U<N>`` cuts them (changes at most 2N
unchanged lines apart are one hunk, with up to N unchanged lines around it), each applied
as one ``didChange`` over its whole range, the cursor at the end of its last line. By
default each run of changed lines is a hunk.

``--together``: the hunks applied as the changes of one ``didChange``, in order, each
range read in the text the changes before it left, as a tool applying a whole diff may send
them (not with ``--typed``).

``--typed``: the last hunk applied, when it changes one line, is typed as a person types
it (its changed middle deleted, then the new one typed a word or a character at a time),
and ``redraft/nextEdit`` is asked after each piece as an editor asks after each pause
(VS Code's client, 300 ms after a change). Whatever is shown along the way comes before
the line is finished: the ``typing`` column is the share of those requests that showed a
proposal. The case is then scored as without it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.lsp_client import LspClient
from benchmarks.lsp_text import code_units, position_to_offset
from benchmarks.scoring import is_exact, percentile
from lsp_server.next_edit import trimmed_edit
from model.training.next_edit_examples import EditPair, Hunk, line_hunks, replay, replay_targets

log = logging.getLogger(__name__)

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
# What a person types between pauses: a word, or one other character.
_PIECE = re.compile(r"\w+|\W")


@dataclass
class NextEditOutcome:
    confidence: float | None  # None: nothing proposed
    exact: bool
    located: bool
    latency_ms: float
    # --typed: the top proposal's confidence at each request made while typing (None: none)
    typing: list[float | None] = field(default_factory=list)


@dataclass
class NextEditReport:
    outcomes: list[NextEditOutcome] = field(default_factory=list)


def read_pairs(path: Path, limit: int | None) -> list[EditPair]:
    pairs = []
    with open(path) as handle:
        for line in handle:
            if line.strip():
                pairs.append(EditPair(**json.loads(line)))
    return pairs[:limit] if limit else pairs


def _range_of(lines: list[str], hunk: Hunk) -> dict[str, Any]:
    """LSP range of the lines a hunk replaces, in the current state."""
    end_line = hunk.start + len(hunk.old_lines)
    if end_line < len(lines) or (lines and lines[-1].endswith(("\n", "\r"))):
        end = {"line": end_line, "character": 0}
    else:  # the hunk runs to the end of a file without a final newline
        end = {"line": end_line - 1, "character": code_units(lines[-1])}
    return {"start": {"line": hunk.start, "character": 0}, "end": end}


def _cursor_after(hunk: Hunk) -> dict[str, int]:
    if not hunk.new_lines:
        return {"line": hunk.start, "character": 0}
    last = hunk.new_lines[-1].rstrip("\r\n")
    return {"line": hunk.start + len(hunk.new_lines) - 1, "character": code_units(last)}


def typed_pieces(old: str, new: str) -> tuple[int, int, list[str]] | None:
    """A one-line change as a person types it: where its changed middle starts and ends in
    ``old`` (deleted first), and the new middle in the pieces typed; None below two pieces."""
    start, end, middle = trimmed_edit(old, 0, len(old), new)
    pieces = _PIECE.findall(middle)
    return (start, end, pieces) if len(pieces) >= 2 else None


@dataclass(frozen=True)
class _Typing:
    """How a one-line change is typed: its changed middle deleted, then the pieces typed."""

    row: int
    old: str  # the line's text before the change, without its break
    start: int  # where the changed middle of ``old`` starts and ends
    end: int
    pieces: list[str]


def _typing_of(hunk: Hunk) -> _Typing | None:
    """The typing of a hunk that changes one line, keeping its break; None for any other."""
    if len(hunk.old_lines) != 1 or len(hunk.new_lines) != 1:
        return None
    old, new = hunk.old_lines[0].rstrip("\r\n"), hunk.new_lines[0].rstrip("\r\n")
    typed = typed_pieces(old, new)
    if typed is None or hunk.old_lines[0][len(old):] != hunk.new_lines[0][len(new):]:
        return None
    return _Typing(hunk.start, old, *typed)


async def _typed(client: LspClient, uri: str, version: int, typing: _Typing) -> tuple[int, list[float | None]]:
    """Type the change, asking for next edits after each piece but the last; the version
    reached and the top confidence of each answer (None: none)."""
    row = typing.row
    version += 1
    await client.did_change(uri, version, [{"range": {
        "start": {"line": row, "character": code_units(typing.old[: typing.start])},
        "end": {"line": row, "character": code_units(typing.old[: typing.end])}}, "text": ""}])
    column = code_units(typing.old[: typing.start])
    confidences: list[float | None] = []
    for index, piece in enumerate(typing.pieces):
        version += 1
        at = {"line": row, "character": column}
        await client.did_change(uri, version, [{"range": {"start": at, "end": at}, "text": piece}])  # type: ignore[typeddict-item]
        column += code_units(piece)
        if index < len(typing.pieces) - 1:
            result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                               "position": {"line": row, "character": column}})
            items = (result or {}).get("items") or []
            confidences.append(float(items[0]["confidence"]) if items else None)
    return version, confidences


async def _case(client: LspClient, uri: str, pair: EditPair, hunks: list[Hunk], k: int,
                bottom_up: bool, typed: bool = False, together: bool = False) -> NextEditOutcome:
    applied, target = replay(hunks, k, bottom_up)
    lines = pair.old.splitlines(keepends=True)
    await client.did_open(uri, pair.old)
    version = 1
    typing: list[float | None] = []
    batch: list[dict[str, Any]] = []
    for index, hunk in enumerate(applied):
        plan = _typing_of(hunk) if typed and index == len(applied) - 1 else None
        change = {"range": _range_of(lines, hunk), "text": "".join(hunk.new_lines)}
        if plan is not None:
            version, typing = await _typed(client, uri, version, plan)
        elif together:
            batch.append(change)
        else:
            version += 1
            await client.did_change(uri, version, [change])  # type: ignore[list-item]
        lines[hunk.start : hunk.start + len(hunk.old_lines)] = hunk.new_lines
    if batch:
        version += 1
        await client.did_change(uri, version, batch)  # type: ignore[arg-type]
    expected = lines[: target.start] + target.new_lines + lines[target.start + len(target.old_lines):]
    started = time.perf_counter()
    result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                       "position": _cursor_after(applied[-1])})
    latency = (time.perf_counter() - started) * 1000
    await client.did_close(uri)
    if not result or not result.get("items"):
        return NextEditOutcome(None, False, False, latency, typing)
    item = result["items"][0]
    document = "".join(lines)
    first, last = item["edit"]["range"]["start"], item["edit"]["range"]["end"]
    start = position_to_offset(document, first["line"], first["character"])
    end = position_to_offset(document, last["line"], last["character"])
    edited = document[:start] + item["edit"]["newText"] + document[end:]
    region_end = target.start + max(1, len(target.old_lines))
    located = target.start - 1 <= first["line"] <= region_end
    exact = is_exact(edited, "".join(expected))
    # -vv: what was proposed against what came next, to read the wrong ones.
    log.debug("%s %.2f %s: lines %d-%d %r -> %r; the next hunk: line %d %r -> %r", uri, float(item["confidence"]),
              "right" if exact else "wrong", first["line"], last["line"], document[start:end], item["edit"]["newText"],
              target.start, "".join(target.old_lines), "".join(target.new_lines))
    return NextEditOutcome(float(item["confidence"]), exact, located, latency, typing)


async def _run(pairs: list[EditPair], cases_per_pair: int, command: list[str], seed: int,
               threshold: float, bottom_up: bool, hunk_context: int, typed: bool, together: bool) -> NextEditReport:
    rng = random.Random(seed)
    report = NextEditReport()
    async with LspClient(command, timeout=120) as client:
        await client.initialize({"confidenceThreshold": 0.0, "nextEditConfidenceThreshold": threshold,
                                 "requestTimeoutMs": 30_000})
        await client.initialized()
        n = 0
        for pair in pairs:
            hunks = line_hunks(pair.old, pair.new, hunk_context)
            if len(hunks) < 2:
                continue
            targets = replay_targets(hunks, bottom_up)
            for k in rng.sample(targets, min(cases_per_pair, len(targets))):
                n += 1
                uri = f"file:///bench/{n}/{Path(pair.path).name}"
                report.outcomes.append(await _case(client, uri, pair, hunks, k, bottom_up, typed, together))
    return report


def run_nextedit_bench(data: Path, limit: int | None, cases_per_pair: int, command: list[str],
                       seed: int = 0, threshold: float = 0.0, bottom_up: bool = False,
                       hunk_context: int = 0, typed: bool = False, together: bool = False) -> NextEditReport:
    if typed and together:
        raise ValueError("--typed types the last hunk apart; it can't come with --together")
    return asyncio.run(_run(read_pairs(data, limit), cases_per_pair, command, seed, threshold, bottom_up,
                            hunk_context, typed, together))


def format_nextedit(report: NextEditReport) -> str:
    outcomes = report.outcomes
    n = max(1, len(outcomes))
    latencies = [o.latency_ms for o in outcomes]
    typing = [confidence for o in outcomes for confidence in o.typing]
    lines = [
        f"cases {len(outcomes)}   exact {sum(o.exact for o in outcomes) / n:.1%}   "
        f"location {sum(o.located for o in outcomes) / n:.1%}   "
        f"latency p50 {percentile(latencies, 50):.0f} ms  p95 {percentile(latencies, 95):.0f} ms",
    ]
    if typing:
        cases_typed = sum(bool(o.typing) for o in outcomes)
        lines.append(f"typed: the last hunk of {cases_typed} cases, {len(typing)} requests while typing it")
    lines.append(f"{'threshold':>9} {'shown':>7} {'precision':>10} {'location':>9}" + (" typing" if typing else ""))
    for threshold in THRESHOLDS:
        shown = [o for o in outcomes if o.confidence is not None and o.confidence >= threshold]
        precision = f"{sum(o.exact for o in shown) / len(shown):.1%}" if shown else "–"
        located = f"{sum(o.located for o in shown) / len(shown):.1%}" if shown else "–"
        row = f"{threshold:9.1f} {len(shown) / n:7.1%} {precision:>10} {located:>9}"
        if typing:
            early = sum(c is not None and c >= threshold for c in typing)
            row += f" {early / len(typing):6.1%}"
        lines.append(row)
    return "\n".join(lines)

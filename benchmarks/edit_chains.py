"""What ``bench repeated`` and ``bench arguments`` share: an edit made by hand at one of
several sites, each a few pieces of one line, and the chain of ``redraft/nextEdit``
proposals an editor's accept-and-jump then applies, judged against the same edit made at
the other sites.

The hand edit is typed as ``didChange`` events (each piece in one, or one character per
event), the cursor after its last piece. Right: the first proposal, applied, leaves the
document with exactly the next site edited (the one below; or the one above, typed at a
site drawn at random) and nothing else. Then each first item is applied and ``nextEdit``
asked again with the cursor after it, as the Neovim client leaves it, until nothing is
proposed (stopped early), every site is done, or the document holds anything that is not
the edit made at some of the sites (a wrong edit).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchmarks.accept_and_jump import ask_and_apply, send_accepted
from benchmarks.code_tokens import Source, lsp_lines, read_source
from benchmarks.lsp_client import ContentChange, LspClient, LspPosition, LspRange
from benchmarks.lsp_text import code_units, offset_to_position
from benchmarks.rename import share
from benchmarks.scoring import percentile

Piece = tuple[int, int, str]  # (start, end, text): str columns of one line replaced by text
Typing = Literal["piece", "chars"]
DONE, STOPPED, WRONG = "done", "stopped early", "a wrong edit"
# Subsets of a line's sites tried when judging it (2 ** this many at most).
MAX_SITES_A_LINE = 8


@dataclass(frozen=True)
class Site:
    row: int
    pieces: tuple[Piece, ...]  # in order along the line, none overlapping


@dataclass(frozen=True)
class EditCase:
    path: Path
    text: str
    sites: tuple[Site, ...]  # in the order of the document
    typed: int  # the site edited by hand
    language: str
    label: str  # what the report groups by besides the language (the operation, nesting…)


def drawn_cases(paths: Iterable[Path], limit: int, seed: int,
                cases_in: Callable[[Source, random.Random], Iterable[EditCase]]) -> tuple[list[EditCase], int]:
    """Up to ``limit`` of the cases ``cases_in`` finds in the files that read, drawn at
    random; and how many files were read. One generator, seeded with ``seed``, makes
    ``cases_in``'s choices and then the draw, so that a seed always draws the same cases."""
    rng = random.Random(seed)
    found: list[EditCase] = []
    read = 0
    for path in paths:
        source = read_source(path)
        if source is None:
            continue
        read += 1
        found.extend(cases_in(source, rng))
    rng.shuffle(found)
    return found[:limit], read


@dataclass
class EditOutcome:
    language: str
    label: str
    shown: bool = False
    exact: bool = False
    chain: str = STOPPED
    latencies_ms: list[float] = field(default_factory=list)  # every nextEdit call's


@dataclass
class EditReport:
    files: int  # read and scanned
    outcomes: list[EditOutcome]
    anywhere: bool = False  # typed at a site drawn at random, not the first
    typing: Typing = "piece"
    by_hand: int = 1  # sites edited by hand before the first request


def how_typed(report: EditReport) -> str:
    """What the headline says of the hand edit beyond the default."""
    return ((f", {report.by_hand} sites by hand" if report.by_hand > 1 else "")
            + (", typed a character at a time" if report.typing == "chars" else ""))


def edited_line(line: str, pieces: Iterable[Piece]) -> str:
    for start, end, text in sorted(pieces, reverse=True):
        line = line[:start] + text + line[end:]
    return line


def _content(line: str) -> tuple[str, str]:
    """A line and its line break apart."""
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def applied(lines: Sequence[str], sites: Iterable[Site]) -> str:
    """The text of ``lines`` (each with its break) with ``sites`` edited."""
    edited = list(lines)
    by_row: dict[int, list[Piece]] = {}
    for site in sites:
        by_row.setdefault(site.row, []).extend(site.pieces)
    for row, pieces in by_row.items():
        body, newline = _content(edited[row])
        edited[row] = edited_line(body, pieces) + newline
    return "".join(edited)


def added_argument(inside: str, argument: str) -> str:
    """What typing ``argument`` as a call's last argument inserts before its ``)``, the
    call's arguments being ``inside``."""
    if not inside.strip():
        return argument
    if inside.rstrip().endswith(","):
        return argument if inside.endswith((" ", "\t")) else f" {argument}"
    return f", {argument}"


def is_part_of_the_edit(document: str, case: EditCase) -> bool:
    """Every line of ``document`` is as it was with some of its sites edited, the typed one
    among them."""
    lines, before = lsp_lines(document), lsp_lines(case.text)
    if len(lines) != len(before):
        return False
    typed = case.sites[case.typed]
    for row, (line, old) in enumerate(zip(lines, before, strict=True)):
        if line == old and row != typed.row:
            continue
        on_row = [site for site in case.sites if site.row == row][:MAX_SITES_A_LINE]
        needed = {on_row.index(typed)} if typed in on_row else set()
        if not any(applied([old], (Site(0, s.pieces) for k, s in enumerate(on_row) if chosen >> k & 1)) == line
                   for chosen in range(2 ** len(on_row)) if all(chosen >> k & 1 for k in needed)):
            return False
    return True


def _utf16(text: str) -> int:
    return code_units(text, "utf-16")


def hand_edit(case: EditCase, typing: Typing, index: int | None = None) -> tuple[list[ContentChange], LspPosition]:
    """The ``didChange`` events that make the typed site's edit (or site ``index``'s), left
    to right, and the cursor after its last piece."""
    site = case.sites[case.typed if index is None else index]
    line, _ = _content(lsp_lines(case.text)[site.row])
    changes: list[ContentChange] = []
    shift = cursor = 0  # shift: how far the pieces typed so far moved the line's later columns
    for start, end, text in site.pieces:
        at, until = start + shift, end + shift
        shift += len(text) - (end - start)
        for keystroke in [text] if typing == "piece" else list(text) or [""]:
            # The first keystroke replaces what the piece replaces, the others insert.
            changes.append(ContentChange(range=LspRange(
                start=LspPosition(line=site.row, character=_utf16(line[:at])),
                end=LspPosition(line=site.row, character=_utf16(line[:until]))), text=keystroke))
            line = line[:at] + keystroke + line[until:]
            at = until = at + len(keystroke)
        cursor = at
    return changes, LspPosition(line=site.row, character=_utf16(line[:cursor]))


async def play(client: LspClient, uri: str, case: EditCase, typing: Typing = "piece", by_hand: int = 1) -> EditOutcome:
    """One case through the server: the hand edit (at ``by_hand`` sites in a row, from the
    typed one down), then proposal after proposal."""
    lines = lsp_lines(case.text)
    hand = range(case.typed, min(len(case.sites), case.typed + by_hand))
    await client.did_open(uri, case.text)
    version = 1
    for index in hand:
        changes, cursor = hand_edit(case, typing, index)
        for change in changes:
            version += 1
            await client.did_change(uri, version, [change])
    edited = [case.sites[k] for k in hand]
    document = applied(lines, edited)
    everywhere = applied(lines, case.sites)
    neighbours = [applied(lines, [*edited, case.sites[k]]) for k in (hand.stop, hand.start - 1)
                  if 0 <= k < len(case.sites)]
    outcome = EditOutcome(case.language, case.label)
    for asked in range(len(case.sites)):
        latency_ms, proposal = await ask_and_apply(client, uri, document, cursor)
        outcome.latencies_ms.append(latency_ms)
        if proposal is None:
            break
        document = proposal.document
        if asked == 0:
            outcome.shown, outcome.exact = True, document in neighbours
        if not is_part_of_the_edit(document, case):
            outcome.chain = WRONG
            break
        if document == everywhere:
            outcome.chain = DONE
            break
        version += 1
        await send_accepted(client, uri, version, proposal)
        line, character = offset_to_position(document, proposal.offset + len(proposal.new_text))
        cursor = LspPosition(line=line, character=character)
    await client.did_close(uri)
    return outcome


def run_cases(cases: Sequence[EditCase], command: list[str], threshold: float, bench: str,
              typing: Typing = "piece", by_hand: int = 1) -> list[EditOutcome]:
    async def run() -> list[EditOutcome]:
        outcomes = []
        async with LspClient(command, timeout=120) as client:
            await client.initialize({"nextEditConfidenceThreshold": threshold, "requestTimeoutMs": 30_000})
            await client.initialized()
            for n, case in enumerate(cases):
                outcomes.append(await play(client, f"file:///bench/{bench}/{n}/{case.path.name}", case, typing,
                                           by_hand))
        return outcomes

    return asyncio.run(run())


def format_outcomes(headline: str, outcomes: Sequence[EditOutcome], done: str,
                    groupings: Sequence[tuple[str, Callable[[EditOutcome], str]]]) -> str:
    """The headline, the figures of every case, and a table per grouping (its title and
    what each outcome falls under), rows sorted; ``done`` names a chain that did every site."""
    n = len(outcomes)
    shown = sum(o.shown for o in outcomes)
    exact = sum(o.exact for o in outcomes)
    latencies = [ms for o in outcomes for ms in o.latencies_ms]
    rows = [headline,
            f"shown {share(shown, n)}   exact {share(exact, n)}   precision {share(exact, shown)}   "
            f"{done} {share(_ended(outcomes, DONE), n)}   {WRONG} {share(_ended(outcomes, WRONG), n)}   "
            f"{STOPPED} {share(_ended(outcomes, STOPPED), n)}",
            f"nextEdit latency p50 {percentile(latencies, 50):.0f} ms  p95 {percentile(latencies, 95):.0f} ms "
            f"({len(latencies)} calls)"]
    columns = (f"{'cases':>6}{'shown':>8}{'exact':>8}{'precision':>11}{done:>{len(done) + 2}}{WRONG:>14}"
               f"{'p50 ms':>8}{'p95 ms':>8}")
    for title, group_of in groupings:
        rows.append(f"{title:<24}{columns}")
        for group in sorted({group_of(o) for o in outcomes}):
            rows.append(_row(group, [o for o in outcomes if group_of(o) == group], done))
    return "\n".join(rows)


def _ended(outcomes: Iterable[EditOutcome], ending: str) -> int:
    return sum(o.chain == ending for o in outcomes)


def _row(label: str, outcomes: list[EditOutcome], done: str) -> str:
    n = len(outcomes)
    shown = sum(o.shown for o in outcomes)
    exact = sum(o.exact for o in outcomes)
    latencies = [ms for o in outcomes for ms in o.latencies_ms]
    return (f"{label:<24}{n:>6}{share(shown, n):>8}{share(exact, n):>8}{share(exact, shown):>11}"
            f"{share(_ended(outcomes, DONE), n):>{len(done) + 2}}{share(_ended(outcomes, WRONG), n):>14}"
            f"{percentile(latencies, 50):>8.0f}{percentile(latencies, 95):>8.0f}")

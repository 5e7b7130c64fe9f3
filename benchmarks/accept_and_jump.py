"""One step of an editor's accept-and-jump, as the chained benchmarks play it: ask
``redraft/nextEdit`` at the cursor, apply the first item's ``range``/``newText`` to the
document, and send it back as a ``didChange`` of its own. Where the cursor goes next, and
which answers' timings count, is each benchmark's to say."""

from __future__ import annotations

import time
from dataclasses import dataclass

from benchmarks.lsp_client import ContentChange, LspClient, LspPosition, LspRange
from benchmarks.lsp_text import position_to_offset


@dataclass(frozen=True)
class Applied:
    """The first item of a ``nextEdit`` answer, applied."""

    document: str  # after the edit
    start: LspPosition  # the edit's range, as the server sent it
    end: LspPosition
    new_text: str
    offset: int  # where new_text begins in document (a str offset)


async def ask_and_apply(client: LspClient, uri: str, document: str,
                        cursor: LspPosition) -> tuple[float, Applied | None]:
    """How long ``redraft/nextEdit`` at ``cursor`` took to answer (ms), and its first item
    applied to ``document``; None when nothing was proposed."""
    started = time.perf_counter()
    result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri}, "position": cursor})
    latency_ms = (time.perf_counter() - started) * 1000
    if not result or not result.get("items"):
        return latency_ms, None
    edit = result["items"][0]["edit"]
    first, last = edit["range"]["start"], edit["range"]["end"]
    a = position_to_offset(document, first["line"], first["character"])
    b = position_to_offset(document, last["line"], last["character"])
    return latency_ms, Applied(document[:a] + edit["newText"] + document[b:], first, last, edit["newText"], a)


async def send_accepted(client: LspClient, uri: str, version: int, applied: Applied) -> None:
    """Tell the server the edit was accepted, as an editor does: a ``didChange`` that makes
    the document's ``version``."""
    await client.did_change(uri, version, [ContentChange(range=LspRange(start=applied.start, end=applied.end),
                                                         text=applied.new_text)])

"""``redraft/nextEdit``: from the edit log and the document to proposed edits in LSP terms.

Params ``{textDocument: {uri}, position}``; result ``null`` or
``{items: [{id, textDocument: {uri, version}, edit: {range, newText}, confidence}]}``,
most confident first, at most 3, each at or above ``nextEditConfidenceThreshold``. The
model rewrites whole lines; the edit sent is trimmed to the characters that change.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.documents import Document, position_at
from lsp_server.edit_log import EditEvent, EditLog
from lsp_server.engine import EditRecord, Engine, JobStopped, ModelEdit, ModelUnavailable, NextEditQuery
from lsp_server.options import ServerOptions
from lsp_server.protocol import NEXT_EDIT

log = logging.getLogger(__name__)

MAX_ITEMS = 3


@dataclass(frozen=True)
class NextEditParams:
    uri: str
    line: int
    character: int


def parse_params(raw: Any, method: str = NEXT_EDIT) -> NextEditParams:
    """Validate the parameters of ``method`` (``redraft/nextEdit``, or ``redraft/cursor``'s,
    which are alike); InvalidParams with the reason otherwise."""
    try:
        uri = _field(_field(raw, "textDocument"), "uri")
        position = _field(raw, "position")
        line, character = _field(position, "line"), _field(position, "character")
    except (KeyError, AttributeError, TypeError) as exc:
        raise JsonRpcInvalidParams(f"{method} needs textDocument.uri and position: missing {exc}") from None
    if not isinstance(uri, str) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                           for v in (line, character)):
        raise JsonRpcInvalidParams(f"{method}: uri must be a string, line/character non-negative integers")
    return NextEditParams(uri, line, character)


def _field(value: Any, name: str) -> Any:
    """pygls hands a custom method's params over as nested named tuples, JSON gives dicts."""
    return value[name] if isinstance(value, dict) else getattr(value, name)


def _path_of(uri: str) -> str:
    return uri.rsplit("/", 1)[-1] or uri


def trimmed_edit(text: str, start: int, end: int, new_text: str) -> tuple[int, int, str]:
    """The smallest (start, end, text) replacement with the same result."""
    old = text[start:end]
    head = 0
    while head < min(len(old), len(new_text)) and old[head] == new_text[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new_text)) - head and old[-1 - tail] == new_text[-1 - tail]:
        tail += 1
    return start + head, end - tail, new_text[head : len(new_text) - tail]


class NextEditService:
    def __init__(self, engine: Engine, edit_log: EditLog) -> None:
        self.engine = engine
        self.edit_log = edit_log
        # Each document's last answer: the text it was placed in and its edits (``took_offer``).
        self._offered: dict[str, tuple[str, list[ShownEdit]]] = {}

    def took_offer(self, uri: str, before: str, after: str) -> bool:
        """The change from ``before`` to ``after`` applies one of the edits last offered
        for ``uri``, exactly: the user (or a tool) accepted it, whether or not the client
        says so. Accepted so, it is a change of its own, not a keystroke of the burst
        before it (the next line of a run edited by hand would otherwise merge with it)."""
        offered = self._offered.pop(uri, None)  # any change makes the answer stale
        if offered is None or offered[0] != before:
            return False
        return any(len(after) == len(before) - (edit.end - edit.start) + len(edit.new_text)
                   and after == before[:edit.start] + edit.new_text + before[edit.end:] for edit in offered[1])

    def forget(self, uri: str) -> None:
        self._offered.pop(uri, None)

    async def suggest(
        self, document: Document, params: NextEditParams, options: ServerOptions, encoding: str
    ) -> list[dict[str, Any]]:
        # The items are placed in the text the model read, and say which version that was.
        text, starts, version = document.text, document.starts, document.version
        history = history_of(self.edit_log.events(), document.uri)
        try:
            edits = await proposed_edits(self.engine, document.uri, text, starts, history, params.line, options,
                                         options.next_edit_confidence_threshold)
        except (ModelUnavailable, JobStopped):
            return []
        except Exception:
            log.error("next edit failed", exc_info=True)
            return []
        self._offered[document.uri] = (text, edits)
        return [{
            "id": uuid.uuid4().hex[:12],
            "textDocument": {"uri": document.uri, "version": version},
            "edit": {"range": range_json(text, edit.start, edit.end, encoding, starts),
                     "newText": edit.new_text},
            "confidence": round(edit.confidence, 4),
        } for edit in edits]


def history_of(events: list[EditEvent], uri: str) -> tuple[EditRecord, ...]:
    """The edit log's events as the model reads them, ``uri``'s as the document's own."""
    return tuple(EditRecord(_path_of(e.uri), e.start_line, e.old_text, e.new_text, e.uri == uri, e.context_lines,
                            e.whole_lines) for e in events)


@dataclass(frozen=True)
class ShownEdit:
    """A proposal worth showing, trimmed to the characters it changes."""

    start: int  # code-point offsets into the document's text
    end: int
    new_text: str
    confidence: float


async def proposed_edits(
    engine: Engine, key: str, text: str, starts: list[int], history: tuple[EditRecord, ...], line: int,
    options: ServerOptions, threshold: float,
) -> list[ShownEdit]:
    """The edits at or above ``threshold``, most confident first, at most MAX_ITEMS; the
    language server and the HTTP API both ask so. Raises ModelUnavailable or JobStopped."""
    cursor_line = min(line, max(0, len(starts) - 1))
    query = NextEditQuery(text, history, cursor_line, MAX_ITEMS, options.sampler_threshold, threshold)
    edits = await engine.next_edits(key, query, options.request_timeout_ms / 1000)
    shown = [found for edit in edits if edit.confidence >= threshold
             and (found := shown_edit(text, starts, edit)) is not None]
    return shown[:MAX_ITEMS]


def shown_edit(text: str, starts: list[int], edit: ModelEdit) -> ShownEdit | None:
    """The model's whole-line rewrite as the characters it changes; None when it changes nothing."""
    start = starts[edit.start_line] if edit.start_line < len(starts) else len(text)
    end = starts[edit.end_line] if edit.end_line < len(starts) else len(text)
    start, end, new_text = trimmed_edit(text, start, end, edit.new_text)
    if start == end and not new_text:
        return None
    return ShownEdit(start, end, new_text, edit.confidence)


def range_json(text: str, start: int, end: int, encoding: str, starts: list[int]) -> dict[str, dict[str, int]]:
    """Offsets ``start``..``end`` of ``text`` as an LSP range, in JSON."""
    first, last = position_at(text, start, encoding, starts), position_at(text, end, encoding, starts)
    return {"start": {"line": first.line, "character": first.character},
            "end": {"line": last.line, "character": last.character}}

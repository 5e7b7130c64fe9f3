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

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.documents import Document, position_at
from lsp_server.edit_log import EditLog
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

    async def suggest(
        self, document: Document, params: NextEditParams, options: ServerOptions, encoding: str
    ) -> list[dict[str, Any]]:
        text = document.text
        history = tuple(EditRecord(_path_of(e.uri), e.start_line, e.old_text, e.new_text, e.uri == document.uri,
                                   e.context_lines, e.whole_lines) for e in self.edit_log.events())
        cursor_line = min(params.line, max(0, len(document.starts) - 1))
        query = NextEditQuery(text, history, cursor_line, MAX_ITEMS, options.sampler_threshold,
                              options.next_edit_confidence_threshold)
        try:
            edits = await self.engine.next_edits(document.uri, query, options.request_timeout_ms / 1000)
        except (ModelUnavailable, JobStopped):
            return []
        except Exception:
            log.error("next edit failed", exc_info=True)
            return []
        shown = [e for e in edits if e.confidence >= options.next_edit_confidence_threshold]
        items = [item for edit in shown if (item := self._item(document, edit, encoding)) is not None]
        return items[:MAX_ITEMS]

    @staticmethod
    def _item(document: Document, edit: ModelEdit, encoding: str) -> dict[str, Any] | None:
        """The edit as an item; None when it would change nothing."""
        text = document.text
        starts = document.starts
        start = starts[edit.start_line] if edit.start_line < len(starts) else len(text)
        end = starts[edit.end_line] if edit.end_line < len(starts) else len(text)
        start, end, new_text = trimmed_edit(text, start, end, edit.new_text)
        if start == end and not new_text:
            return None
        edit_range = types.Range(position_at(text, start, encoding, starts), position_at(text, end, encoding, starts))
        return {
            "id": uuid.uuid4().hex[:12],
            "textDocument": {"uri": document.uri, "version": document.version},
            "edit": {"range": _range_json(edit_range), "newText": new_text},
            "confidence": round(edit.confidence, 4),
        }


def _range_json(value: types.Range) -> dict[str, dict[str, int]]:
    return {"start": {"line": value.start.line, "character": value.start.character},
            "end": {"line": value.end.line, "character": value.end.character}}

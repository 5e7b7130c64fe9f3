"""One next-edit question over HTTP: the document, the cursor, the recent edits. Answered
on the language server's path (``next_edit.proposed_edits``): the same history, the same
engine call, the same threshold and trimming, so HTTP and LSP propose the same edits."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from lsp_server.documents import line_starts, offset_within
from lsp_server.engine import EditRecord, Engine
from lsp_server.http_api.body import bounded, field, snippets
from lsp_server.http_api.errors import bad_request, engine_reply
from lsp_server.http_api.recent_edits import ENCODING, Diff, RecentEdit, parse_recent_edits, position, recent_history
from lsp_server.next_edit import ShownEdit, proposed_edits, range_json
from lsp_server.options import ServerOptions
from model.languages import language_named


@dataclass(frozen=True)
class EditQuestion:
    content: str
    starts: list[int]
    cursor_line: int
    history: tuple[EditRecord, ...]
    threshold: float


def edit_question(body: dict[str, Any], options: ServerOptions) -> EditQuestion:
    """The request's fields checked, its recent edits read into a history; 400 otherwise."""
    content = field(body, "content", str)
    starts = line_starts(content)
    cursor = position(field(body, "cursor", dict), "cursor")
    if offset_within(content, cursor, ENCODING, starts) is None:
        raise bad_request(f"'cursor' ({cursor.line}, {cursor.character}) is outside content, which has "
                          f"{len(starts)} lines (characters count UTF-16 code units)")
    edits = parse_recent_edits(field(body, "recent_edits", list, []))
    # Checked, then not read: the next-edit model reads the document and its recent edits
    # only, as over LSP; a client sending the FIM route's related files need not strip them.
    snippets(body, "related", "path")
    path = field(body, "path", str, "") or _diff_path(edits) or _untitled(field(body, "language", str, "python"))
    threshold = bounded(body, "confidence_threshold", float, 0.0, 1.0, options.next_edit_confidence_threshold)
    return EditQuestion(content, starts, cursor.line, recent_history(content, path, edits), threshold)


def _diff_path(edits: list[RecentEdit]) -> str:
    """Without a ``path``, the document is the file the newest diff names."""
    return next((hunk.path for edit in reversed(edits) if isinstance(edit, Diff) for hunk in reversed(edit.hunks)
                 if hunk.path), "")


def _untitled(language: str) -> str:
    """A name for a document sent without one: the patterns read its language by its suffix."""
    found = language_named(language)
    return "untitled" + (found.suffixes[0] if found is not None else "")


async def answer_edits(engine: Engine, question: EditQuestion, options: ServerOptions) -> list[ShownEdit]:
    return await engine_reply(proposed_edits(engine, "http:" + uuid.uuid4().hex, question.content, question.starts,
                                             question.history, question.cursor_line, options, question.threshold))


def edit_choices(question: EditQuestion, edits: list[ShownEdit]) -> list[dict[str, Any]]:
    return [{"index": index,
             "edit": {"range": range_json(question.content, edit.start, edit.end, ENCODING, question.starts),
                      "newText": edit.new_text},
             "confidence": round(edit.confidence, 4)} for index, edit in enumerate(edits)]


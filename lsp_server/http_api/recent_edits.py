"""A next-edit request's ``recent_edits`` as the language server's edit log would have
logged them, so that the model reads the same history over HTTP as over LSP.

The log wants each edit's removed text, which an LSP-style ``{range, newText}`` does not
carry. The edits come oldest first, each range in the text just before that edit, and
the texts before them are recovered by undoing them from ``content`` backwards: the
removed text comes in ``oldText`` (an extension; an empty range, a pure insertion, needs
none). A unified diff carries both sides, and its ``---``/``+++`` headers say which file
it changed. Positions count UTF-16 code units, LSP's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from lsp_server.documents import line_starts, offset_within
from lsp_server.edit_log import EditLog
from lsp_server.engine import EditRecord
from lsp_server.http_api.errors import bad_request
from lsp_server.http_api.unified_diff import DiffError, Hunk, parse_unified_diff
from lsp_server.next_edit import history_of
from model.code_text import lsp_lines_with_ends

ENCODING = types.PositionEncodingKind.Utf16
# The edit log keeps 64 events: more edits than that would only be undone to be dropped, and
# each undo walks the whole text on the event loop.
MAX_EDITS = 64
MAX_HUNKS = 64
WHEN = 0.0  # every edit is logged at one time: the client sent them together, ordered


@dataclass(frozen=True)
class Replacement:
    """``{range, newText, oldText?}``: an edit of the document asked about."""

    index: int
    start: types.Position
    end: types.Position
    new_text: str
    old_text: str | None


@dataclass(frozen=True)
class Diff:
    index: int
    hunks: list[Hunk]


RecentEdit = Replacement | Diff


def parse_recent_edits(value: Any) -> list[RecentEdit]:
    if not isinstance(value, list):
        raise bad_request("'recent_edits' must be a list")
    if len(value) > MAX_EDITS:
        raise bad_request(f"'recent_edits' holds {len(value)} edits, more than {MAX_EDITS}: send the newest")
    edits = [_parsed(index, item) for index, item in enumerate(value)]
    if sum(len(edit.hunks) for edit in edits if isinstance(edit, Diff)) > MAX_HUNKS:
        raise bad_request(f"'recent_edits' holds more than {MAX_HUNKS} hunks: send the newest")
    return edits


def _parsed(index: int, item: Any) -> RecentEdit:
    name = f"'recent_edits[{index}]'"
    if isinstance(item, str):
        try:
            return Diff(index, parse_unified_diff(item))
        except DiffError as exc:
            raise bad_request(f"{name} is not a unified diff: {exc}") from None
    if not isinstance(item, dict):
        raise bad_request(f"{name} must be an object {{range, newText}} or a unified-diff string")
    old_text = item.get("oldText")
    if not isinstance(item.get("newText"), str) or not (old_text is None or isinstance(old_text, str)):
        raise bad_request(f"{name} needs 'newText', a string ('oldText' too, if given)")
    edit_range = item.get("range")
    if not isinstance(edit_range, dict):
        raise bad_request(f"{name} needs 'range': {{start: {{line, character}}, end: {{line, character}}}}")
    start, end = (position(edit_range.get(side), f"recent_edits[{index}].range.{side}") for side in ("start", "end"))
    if (start.line, start.character) > (end.line, end.character):
        raise bad_request(f"{name}: its range ends before it starts")
    return Replacement(index, start, end, item["newText"], old_text)


def position(value: Any, name: str) -> types.Position:
    """``{line, character}``, both whole numbers from 0."""
    if not isinstance(value, dict) or not all(
            isinstance(value.get(key), int) and not isinstance(value.get(key), bool) and value[key] >= 0
            for key in ("line", "character")):
        raise bad_request(f"'{name}' must be {{line, character}}, whole numbers from 0")
    return types.Position(line=value["line"], character=value["character"])


def same_file(diff_path: str, path: str) -> bool:
    """Whether a diff's header names the document: the one path ends with the other, at a
    folder boundary (a client may send ``src/app.py`` and a diff of ``a/src/app.py``)."""
    if not diff_path or not path:
        return True
    shorter, longer = sorted((diff_path.strip("/"), path.strip("/")), key=len)
    return longer == shorter or longer.endswith("/" + shorter)


@dataclass(frozen=True)
class _TextStep:
    before: str
    after: str
    context_lines: int
    own_event: bool  # a diff's hunk stays an event of its own; typed edits merge as keystrokes do


@dataclass(frozen=True)
class _HunkStep:
    path: str
    start_line: int
    old_text: str
    new_text: str
    context_lines: int


def recent_history(content: str, path: str, edits: list[RecentEdit]) -> tuple[EditRecord, ...]:
    """The history the model reads: each edit undone from ``content`` back to the text
    before it, then logged oldest first as the edit log logs an editor's changes."""
    steps: list[_TextStep | _HunkStep] = []  # newest first
    text = content
    for edit in reversed(edits):
        if isinstance(edit, Replacement):
            before = _undo_replacement(text, edit)
            steps.append(_TextStep(before, text, 0, own_event=False))
            text = before
            continue
        for hunk in reversed(edit.hunks):  # a diff's hunks run top to bottom: undone bottom first
            if same_file(hunk.path, path):
                before = _undo_hunk(text, hunk, edit.index)
                steps.append(_TextStep(before, text, max(hunk.context), own_event=True))
                text = before
            else:
                steps.append(_elsewhere(hunk))
    log = EditLog()
    for step in reversed(steps):
        if isinstance(step, _HunkStep):
            log.record_hunk(step.path, step.start_line, step.old_text, step.new_text, WHEN, step.context_lines)
            continue
        if step.own_event:
            log.end_burst()
        # A diff's hunk replaced whole lines; a {range, newText} edit is taken as typed.
        log.record(path, step.before, step.after, now=WHEN, context_lines=step.context_lines,
                   whole_lines=step.own_event)
        if step.own_event:
            log.end_burst()
    return history_of(log.events(now=WHEN), path)


def _undo_replacement(after: str, edit: Replacement) -> str:
    name = f"'recent_edits[{edit.index}]'"
    start = offset_within(after, edit.start, ENCODING, line_starts(after))
    if start is None:
        raise bad_request(f"{name}: its range starts past the end of its line or of the text it left behind")
    if after[start : start + len(edit.new_text)] != edit.new_text:
        raise bad_request(f"{name}: its newText is not at its range's start in the text after it: recent_edits go "
                          "oldest first, each range in the text just before that edit, the last one leaving content")
    removed = edit.old_text
    if removed is None:
        if edit.start != edit.end:
            raise bad_request(f"{name} replaces a non-empty range but has no 'oldText': the server cannot tell what "
                              "it removed. Send the removed text as 'oldText', or the edit as a unified diff")
        removed = ""
    before = after[:start] + removed + after[start + len(edit.new_text) :]
    if offset_within(before, edit.end, ENCODING, line_starts(before)) != start + len(removed):
        raise bad_request(f"{name}: its range does not span its oldText")
    return before


def _undo_hunk(after: str, hunk: Hunk, index: int) -> str:
    lines = lsp_lines_with_ends(after)
    new, old = hunk.new_lines, hunk.old_lines
    region = lines[hunk.at : hunk.at + len(new)]
    if [line.rstrip("\r\n") for line in region] != new:
        raise bad_request(f"'recent_edits[{index}]': the hunk at +{hunk.new_start} does not match content there: "
                          "diffs go oldest first, the last one leaving content")
    ends = [line[len(line.rstrip("\r\n")):] for line in lines if line.endswith(("\n", "\r"))]
    line_break = ends[0] if ends else "\n"
    removed = "".join(line + line_break for line in old)
    # The text's last line without a break stays so, unless the hunk says its old side had one.
    at_end_open = hunk.at + len(new) == len(lines) and bool(region) and not region[-1].endswith(("\n", "\r"))
    if removed and (hunk.old_ends_open or (at_end_open and not hunk.new_ends_open)):
        removed = removed[: -len(line_break)]
    head = "".join(lines[: hunk.at])
    tail = "".join(lines[hunk.at + len(new) :])
    return head + removed + tail


def _elsewhere(hunk: Hunk) -> _HunkStep:
    """Another file's hunk, its unchanged edge lines left out (the log keeps changed lines only)."""
    leading, trailing = hunk.context
    changed = hunk.lines[leading : len(hunk.lines) - trailing]
    old = "".join(line[1:] + "\n" for line in changed if line[0] in " -")
    new = "".join(line[1:] + "\n" for line in changed if line[0] in " +")
    return _HunkStep(hunk.path, hunk.at + leading, old, new, max(leading, trailing))

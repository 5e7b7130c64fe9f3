"""Open documents, kept by us rather than by pygls' workspace.

LSP ends lines only at ``\\n``, ``\\r\\n`` and ``\\r``; Python's ``splitlines`` also breaks
at form feed, ``\\x0b``, ``\\x1c``–``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``, so
positions are computed here with LSP's own line rule and the negotiated encoding.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from lsprotocol import types

from lsp_server.faults import FaultPlan
from model.code_text import LINE_BREAK, lsp_lines_with_ends
from model.languages import Language, language_for

# Hunks of one notification logged one by one (``DocumentStore.change``) at most: this many,
# and this many characters of the document's texts kept meanwhile.
MAX_HUNKS_APART = 64
MAX_KEPT_CHARS = 32_000_000


def line_starts(text: str) -> list[int]:
    """Offsets (code points) where each LSP line starts."""
    if "\r" not in text:  # the common case, ~10× faster: split and running sums stay in C
        return [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def _units(ch: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(ch.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return 1
    return 2 if ord(ch) > 0xFFFF else 1


def _line_content_end(text: str, start: int, next_start: int) -> int:
    end = next_start
    while end > start and text[end - 1] in "\r\n":
        end -= 1
    return end


def offset_at(text: str, position: types.Position, encoding: str, starts: list[int] | None = None) -> int:
    """Code-point offset of an LSP position; out-of-range positions clamp (the spec says
    a character past the line end means the line end)."""
    starts = starts if starts is not None else line_starts(text)
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    next_start = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    end = _line_content_end(text, start, next_start)
    units, offset = 0, start
    while offset < end and units < position.character:
        units += _units(text[offset], encoding)
        offset += 1
    return offset


def offset_within(text: str, position: types.Position, encoding: str, starts: list[int] | None = None) -> int | None:
    """``offset_at``, but None for a position past the last line or past its line's end: a
    position that a client sent as the place of something (a cursor, an edit) must be in the text."""
    starts = starts if starts is not None else line_starts(text)
    if position.line >= len(starts):
        return None
    start = starts[position.line]
    next_start = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    end = _line_content_end(text, start, next_start)
    if position.character > sum(_units(ch, encoding) for ch in text[start:end]):
        return None
    return offset_at(text, position, encoding, starts)


def position_at(text: str, offset: int, encoding: str, starts: list[int] | None = None) -> types.Position:
    starts = starts if starts is not None else line_starts(text)
    offset = max(0, min(offset, len(text)))
    line = max(0, _bisect_right(starts, offset) - 1)
    character = sum(_units(ch, encoding) for ch in text[starts[line] : offset])
    return types.Position(line=line, character=character)


def _bisect_right(values: list[int], target: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@dataclass
class Document:
    uri: str
    text: str
    version: int | None = None
    language_id: str = ""
    _starts: tuple[str, list[int]] | None = field(default=None, repr=False, compare=False)

    @property
    def language(self) -> Language | None:
        """The document's language by the editor's word, or by the file's name when it gave
        none; None for a language Redraft does not serve."""
        return language_for(self.uri, self.language_id)

    @property
    def starts(self) -> list[int]:
        """Line starts of the current text, computed once per text (a 10 MB document takes
        tens of milliseconds to scan, and each keystroke would otherwise scan it twice)."""
        if self._starts is None or self._starts[0] is not self.text:
            self._starts = (self.text, line_starts(self.text))
        return self._starts[1]

    def offset_at(self, position: types.Position, encoding: str) -> int:
        return offset_at(self.text, position, encoding, self.starts)

    def apply_change(self, change: types.TextDocumentContentChangeEvent, encoding: str) -> AppliedChange:
        """Apply one content change; returns it as applied."""
        before = self.text
        if isinstance(change, types.TextDocumentContentChangePartial):
            starts = self.starts
            start = offset_at(before, change.range.start, encoding, starts)
            end = offset_at(before, change.range.end, encoding, starts)
            start, end = min(start, end), max(start, end)
            self.text = before[:start] + change.text + before[end:]
            self._starts = (self.text, updated_line_starts(before, starts, start, end, self.text))
            if _replaces_whole_lines(before, starts, start, end, change.text):
                return AppliedChange(before, self.text, True, unchanged_edge_lines(before[start:end], change.text))
            return AppliedChange(before, self.text, False)
        self.text = change.text
        return AppliedChange(before, self.text, False)


@dataclass(frozen=True)
class AppliedChange:
    """A change as the edit log is to record it: the document's text before and after it."""

    before: str
    after: str
    # The change replaced whole lines with whole lines, as a tool applying a diff's hunks does.
    whole_lines: bool = False
    # Whole lines it sent as they were, at the edge of its range (``unchanged_edge_lines``):
    # a tool applying ``git diff`` hunks sends their context lines so; an editor's own
    # changes have none.
    context_lines: int = 0


def _replaces_whole_lines(before: str, starts: list[int], start: int, end: int, text: str) -> bool:
    """Whether replacing ``before[start:end]`` by ``text`` replaces whole lines with whole
    lines: from a line's start to the next one's (``text`` ending with a line break), or to
    the end of a line's content or of the text (then the range is not empty). Text typed at
    a line's start is no line."""
    if not _is_line_start(starts, start):
        return False
    if start < end and (end == len(before) or before[end] in "\r\n"):
        return True
    if end == len(before) or _is_line_start(starts, end):
        return not text or text.endswith(("\n", "\r"))
    return False


def _is_line_start(starts: list[int], offset: int) -> bool:
    return starts[_bisect_right(starts, offset) - 1] == offset


def unchanged_edge_lines(old: str, new: str) -> int:
    """How many whole lines a change of whole lines ``old`` → ``new`` left as they were at
    its start or at its end, whichever is more (a ``git diff -U3`` hunk: 3, fewer at the
    file's edges); 0 when every line it spans changed."""
    if old == new:
        return 0
    old_lines, new_lines = lsp_lines_with_ends(old), lsp_lines_with_ends(new)
    shortest = min(len(old_lines), len(new_lines))
    leading = next((i for i in range(shortest) if old_lines[i] != new_lines[i]), shortest)
    trailing = next((i for i in range(shortest - leading) if old_lines[-1 - i] != new_lines[-1 - i]),
                    shortest - leading)
    return max(leading, trailing)


def updated_line_starts(before: str, starts: list[int], start: int, end: int, after: str) -> list[int]:
    """``line_starts(after)`` when ``after`` is ``before`` with [start, end) replaced: only
    the changed lines are scanned and the starts below are shifted, so a keystroke in a
    large document does not rescan all of it."""
    first = _bisect_right(starts, start) - 1
    rest = _bisect_right(starts, end)  # the first line start after the changed range
    if first > 0 and before[starts[first] - 1] == "\r":
        return line_starts(after)  # the change could join a \r with a \n into one break
    delta = len(after) - len(before)
    region_end = (starts[rest] if rest < len(starts) else len(before)) + delta
    region = after[starts[first] : region_end]
    middle = [starts[first] + m.end() for m in LINE_BREAK.finditer(region)]
    if rest < len(starts):  # the region ends with the break before line `rest`
        return [*starts[: first + 1], *middle, *map(delta.__add__, starts[rest + 1 :])]
    return [*starts[: first + 1], *middle]


class DocumentStore:
    """The server's copy of every open document, keyed by URI."""

    def __init__(self, faults: FaultPlan | None = None) -> None:
        self._documents: dict[str, Document] = {}
        self._faults = faults or FaultPlan()

    def open(self, item: types.TextDocumentItem) -> Document:
        document = Document(item.uri, item.text, item.version, item.language_id)
        self._documents[item.uri] = document
        return document

    def change(self, params: types.DidChangeTextDocumentParams, encoding: str) -> list[AppliedChange] | None:
        """Apply every content change, or none: they are applied to a scratch copy first,
        so a change that fails half-way leaves the document as it was. Returns the changes
        for the edit log (None: the document is not open).

        Several changes in one notification are one change, an editor's edit (multiple
        cursors, a formatter's edits), unless each replaced whole lines: then they are the
        hunks of a diff applied in one go, and each is a change of its own, as if sent
        alone. Read as one, the hunks of a commit were one change that no next-edit
        pattern explains."""
        document = self._documents.get(params.text_document.uri)
        if document is None:
            return None
        before = document.text
        scratch = Document(document.uri, before, _starts=document._starts)
        changes = params.content_changes
        # Each hunk's texts are kept until the log has them: not for a flood of changes in a big text.
        keep = 1 < len(changes) <= MAX_HUNKS_APART and len(before) * len(changes) <= MAX_KEPT_CHARS
        applied: list[AppliedChange] = []
        for index, change in enumerate(changes):
            step = scratch.apply_change(change, encoding)
            if index == 0:
                self._faults.check("change")
            if keep and step.whole_lines:
                applied.append(step)
            else:
                keep = False
        document.text, document._starts = scratch.text, scratch._starts
        document.version = params.text_document.version
        if len(changes) == 1:
            return [step]
        return applied if keep else [AppliedChange(before, document.text)]

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        return self._documents.get(uri)

    def items(self) -> list[tuple[str, Document]]:
        return list(self._documents.items())

    def __len__(self) -> int:
        return len(self._documents)

"""The ``same_line`` kind: a line rewritten, wrapped or deleted, and its twin lines
treated alike."""

from __future__ import annotations

from collections.abc import Iterable

from model.next_edit.edit_patterns.changes import SAME_LINE, Change, PatternEdit
from model.next_edit.edit_patterns.rename import is_rename
from model.next_edit.edit_patterns.text import indent_of, split_lines, tokens_of


def _words(text: str) -> list[str]:
    """The tokens that are neither whitespace nor commas (a wrap adds a trailing comma)."""
    return [token for token in tokens_of(text) if not token.isspace() and token != ","]


def same_line_edits(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != 1:
        return
    old = old_lines[0].strip()
    if len(old) < 6:  # short lines (`pass`, `else:`) repeat by coincidence
        return
    if len(new_lines) == 1 and is_rename(old_lines[0], new_lines[0]):
        return  # a rename: the rename pattern knows its scope, a twin line elsewhere may be out of it
    # A line rewritten as several keeps each new line's indentation relative to the old
    # line's, so its twin is rewritten at its own; only a wrap (the same words, commas
    # aside: a formatter's or a person's), since what a rewrite adds around one line is
    # that place's (replayed: wraps right 8 times in 10, other rewrites 38 in 93).
    old_indent = old_lines[0][: indent_of(old_lines[0])]
    if len(new_lines) > 1 and (_words(change.old_text) != _words(change.new_text) or any(
            line.strip() and not line.startswith(old_indent) for line in new_lines)):
        return
    for row in window:
        line = lines[row]
        if row in edited or old not in line or line.strip() != old:
            continue
        if not new_lines:
            yield PatternEdit(row, row + 1, "", SAME_LINE)
            continue
        body = line.rstrip("\r\n")
        ending = line[len(body):] or "\n"
        indent = line[: indent_of(line)]
        if len(new_lines) == 1:
            rewritten = [indent + new_lines[0].strip()]
        else:
            rewritten = [indent + new.rstrip("\r\n")[len(old_indent):] if new.strip() else "" for new in new_lines]
        yield PatternEdit(row, row + 1, ending.join(rewritten) + line[len(body):], SAME_LINE)

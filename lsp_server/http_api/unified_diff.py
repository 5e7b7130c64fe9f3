"""Unified diffs as a client sends its recent edits: what ``git diff`` or ``diff -u`` write,
``--- a/path`` / ``+++ b/path`` headers (optional) and ``@@ -a,b +c,d @@`` hunks.

Read by hand rather than with a patch library: only the hunks' lines are needed, every
mistake must become a message naming the line, and nothing is applied to any file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HUNK_HEAD = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# git's extended header lines, between ``diff --git`` and ``---``: nothing the edit needs.
GIT_HEADERS = ("diff ", "index ", "new file mode", "deleted file mode", "old mode", "new mode", "similarity ",
               "dissimilarity ", "rename ", "copy ")
NO_NEWLINE = "\\ No newline at end of file"


class DiffError(ValueError):
    """The text is not a unified diff; the message says where."""


@dataclass(frozen=True)
class Hunk:
    path: str  # the file the headers name ("" when the diff has none)
    old_start: int  # 1-based, as in ``@@``; 0 with an empty side
    new_start: int
    lines: tuple[str, ...]  # each with its mark, " ", "-" or "+", without its line break
    old_ends_open: bool = False  # the old side's last line has no line break (``\ No newline …``)
    new_ends_open: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[0] in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [line[1:] for line in self.lines if line[0] in " +"]

    @property
    def at(self) -> int:
        """The 0-based line where the hunk's new lines stand in the file after it (with no
        new lines, ``@@`` names the line they follow)."""
        return self.new_start - 1 if self.new_lines else self.new_start

    @property
    def context(self) -> tuple[int, int]:
        """Unchanged lines at its start and at its end."""
        marks = [line[0] for line in self.lines]
        changed = [i for i, mark in enumerate(marks) if mark != " "]
        if not changed:
            return len(marks), 0
        return changed[0], len(marks) - 1 - changed[-1]


def parse_unified_diff(text: str) -> list[Hunk]:
    """Every hunk of ``text``, in order; DiffError when it holds none or is malformed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    hunks: list[Hunk] = []
    path = ""
    row = 0
    while row < len(lines):
        line = lines[row].removesuffix("\r")
        if line.startswith("--- ") and row + 1 < len(lines) and lines[row + 1].startswith("+++ "):
            old, new = _header_path(line[4:], "a/"), _header_path(lines[row + 1].removesuffix("\r")[4:], "b/")
            path = old if new == "/dev/null" else new
            row += 2
        elif line.startswith("@@"):
            hunk, row = _hunk(lines, row, path)
            hunks.append(hunk)
        elif line.startswith(GIT_HEADERS) or not line.strip():
            row += 1
        else:
            raise DiffError(f"line {row + 1} is neither a header nor in a hunk: {line[:60]!r}")
    if not hunks:
        raise DiffError("it holds no hunk ('@@ -a,b +c,d @@')")
    return hunks


def _header_path(named: str, prefix: str) -> str:
    """The path of a ``---``/``+++`` line: up to a tab (``diff -u`` writes the date there),
    without git's ``a/``/``b/``."""
    named = named.split("\t", 1)[0].strip()
    return named.removeprefix(prefix)


def _hunk(lines: list[str], row: int, path: str) -> tuple[Hunk, int]:
    head = HUNK_HEAD.match(lines[row])
    if head is None:
        raise DiffError(f"line {row + 1}: a hunk header must read '@@ -a,b +c,d @@', not {lines[row][:60]!r}")
    old_left = int(head[2]) if head[2] is not None else 1
    new_left = int(head[4]) if head[4] is not None else 1
    body: list[str] = []
    open_sides = {"-": False, "+": False}
    row += 1
    while old_left > 0 or new_left > 0:
        if row >= len(lines):
            raise DiffError(f"the hunk '{head[0]}' ends {old_left} old and {new_left} new lines short")
        # A context line whose blank was stripped (an editor trimming trailing spaces) reads as empty.
        line = lines[row].removesuffix("\r") or " "
        mark = line[0]
        if mark == " " and old_left and new_left:
            old_left, new_left = old_left - 1, new_left - 1
        elif mark == "-" and old_left:
            old_left -= 1
        elif mark == "+" and new_left:
            new_left -= 1
        elif line == NO_NEWLINE and body:
            _mark_open(open_sides, body[-1][0])
            row += 1
            continue
        else:
            raise DiffError(f"line {row + 1} does not fit the hunk '{head[0]}': {line[:60]!r}")
        body.append(line)
        row += 1
    if row < len(lines) and lines[row].removesuffix("\r") == NO_NEWLINE and body:
        _mark_open(open_sides, body[-1][0])
        row += 1
    hunk = Hunk(path, int(head[1]), int(head[3]), tuple(body), open_sides["-"], open_sides["+"])
    return hunk, row


def _mark_open(open_sides: dict[str, bool], mark: str) -> None:
    for side in ("-", "+"):
        if mark in (side, " "):
            open_sides[side] = True

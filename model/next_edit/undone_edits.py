"""Undone edits: a change and its exact reversal cancel out of the history.

An undo (or retyping the old text) brings lines back to what they were, and the patterns
must not go on from there as if it were a new change. Read as they came, an argument added
by hand, the same accepted at the next call, another edit and then two undos made the
newest change "remove the argument at the next call", and the patterns proposed removing
it from the user's own edit too. Each file's changes are read oldest first against a
stack: a change that exactly reverses the top (same first line, old and new text swapped)
pops it; so does one that reverses the top few when they are keystrokes typed on that one
line (a rename typed slowly, undone in one step). A redo reverses the undo: the change is
pushed again. Right after an undo nothing is proposed (``just_undone``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from model.next_edit.edit_patterns.changes import MAX_CHAIN
from model.next_edit.edit_patterns.text import split_lines


class LoggedChange(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def in_document(self) -> bool: ...
    @property
    def start_line(self) -> int: ...
    @property
    def old_text(self) -> str: ...
    @property
    def new_text(self) -> str: ...


Record = TypeVar("Record", bound=LoggedChange)


@dataclass(frozen=True)
class Remaining(Generic[Record]):
    records: list[Record]  # the history without undone changes, oldest first
    just_undone: bool  # the document's newest change took back earlier ones


def _one_line(text: str) -> bool:
    """At most one line (with its break), by LSP's line rule."""
    return len(split_lines(text)) <= 1


def _undone_depth(stack: Sequence[LoggedChange], change: LoggedChange) -> int:
    """How many changes on top of ``stack`` ``change`` takes back exactly; 0 when none."""
    if not stack:
        return 0
    top = stack[-1]
    if top.start_line != change.start_line or top.new_text != change.old_text:
        return 0
    depth, old = 1, top.old_text
    while old != change.new_text:
        # Deeper only through keystrokes on the same single line, each typed on the last.
        if depth == len(stack) or depth >= MAX_CHAIN or not (_one_line(change.old_text) and _one_line(old)):
            return 0
        below = stack[-1 - depth]
        if below.start_line != change.start_line or below.new_text != old or not _one_line(below.old_text):
            return 0
        depth, old = depth + 1, below.old_text
    return depth


def without_undone(history: Sequence[Record]) -> Remaining[Record]:
    """``history`` without the changes later taken back, nor the changes that took them back."""
    kept: list[Record | None] = []
    live: dict[tuple[str, bool], list[tuple[int, Record]]] = {}  # per file: its live changes, where kept
    just_undone = False
    for record in history:
        stack = live.setdefault((record.path, record.in_document), [])
        depth = _undone_depth([change for _, change in stack[-MAX_CHAIN:]], record)
        for _ in range(depth):
            kept[stack.pop()[0]] = None
        if not depth:
            stack.append((len(kept), record))
            kept.append(record)
        if record.in_document:
            just_undone = depth > 0
    return Remaining([record for record in kept if record is not None], just_undone)

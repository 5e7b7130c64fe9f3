"""A bounded, workspace-wide log of recent edits, the history the next-edit model reads.

Each event is one hunk of whole lines. Keystrokes at one place within ``merge_window_s``
merge into one event (as Zed does): the log keeps the text from before the newest event's
first keystroke and re-diffs it against the latest text, so typing a word and fixing a
typo reads as one clean change, and typing then deleting leaves nothing.

Lines end only at ``\\n``, ``\\r\\n`` and ``\\r`` (LSP's rule); ``str.splitlines`` would also
break at form feed, ``\\u2028`` and friends, so it is never used here.

Huge events (more than ``max_event_bytes`` of old + new text, e.g. a whole-file paste or a
``git checkout``) are skipped, not truncated: a cut hunk would render a diff whose line
counts lie, and the history budget is better spent on small recent edits.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlparse

from model.code_text import LINE_BREAK, line_start

EditSource = Literal["editor", "disk"]


def _lines(text: str) -> list[str]:
    """Line contents without their breaks; a trailing break doesn't start an extra line."""
    parts = LINE_BREAK.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


def _line_count(text: str) -> int:
    return len(_lines(text)) if text else 0


def _at_line_start(text: str, offset: int) -> bool:
    if offset == 0 or offset == len(text):
        return True
    prev = text[offset - 1]
    return prev == "\n" or (prev == "\r" and text[offset] != "\n")


def _first_line_end(text: str, start: int) -> int:
    """How far past ``start`` the first line break after it ends, or to ``len(text)``."""
    match = LINE_BREAK.search(text, start)
    return (match.end() if match else len(text)) - start


def _line_breaks(text: str, end: int) -> int:
    """Line breaks in ``text[:end]``, a \\r\\n counted once: counted in place, because a
    regex pass over the document's head cost ~0.5 ms of every keystroke in a 40 kB file."""
    newlines = text.count("\n", 0, end)
    returns = text.count("\r", 0, end)
    return newlines + returns - text.count("\r\n", 0, end) if returns else newlines


@dataclass(frozen=True)
class _Hunk:
    start_line: int
    old_text: str
    new_text: str


def _common_prefix_length(a: str, b: str, limit: int) -> int:
    """Length of the common start, by bisection on slice equality: a keystroke in a 10 MB
    document costs a few memcmp calls instead of millions of Python steps."""
    low, high = 0, limit  # a[:low] == b[:low]; the answer is <= high
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix_length(a: str, b: str, limit: int) -> int:
    """Length of the common end, at most ``limit``, by the same bisection."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _diff(before: str, after: str) -> _Hunk:
    """The smallest run of whole lines that turns ``before`` into ``after``."""
    limit = min(len(before), len(after))
    prefix = _common_prefix_length(before, after, limit)
    # Never split a \r\n: a change right after \r may turn it into a different break.
    if prefix and before[prefix - 1] == "\r" and "\n" in (before[prefix : prefix + 1], after[prefix : prefix + 1]):
        prefix -= 1
    start = line_start(before, prefix)
    # The common end may reach back to the line start, not only to the common start: a
    # deleted line followed by a line with the same indentation shares the next line's
    # indentation at the common start, and counting it there made the hunk two lines
    # (the deleted line and the next) instead of the deleted line alone.
    suffix = _common_suffix_length(before, after, limit - start)
    end_b, end_a = len(before) - suffix, len(after) - suffix
    if not (_at_line_start(before, end_b) and _at_line_start(after, end_a)):
        # Both texts share the suffix, so widening by the same amount keeps them aligned.
        grow = _first_line_end(before, end_b)
        end_b, end_a = end_b + grow, end_a + grow
    start_line = _line_breaks(before, start)
    return _Hunk(start_line, before[start:end_b], after[start:end_a])


@dataclass(frozen=True)
class EditEvent:
    uri: str
    start_line: int  # 0-based, in the text before the edit
    old_text: str  # whole lines removed, with their line breaks
    new_text: str  # whole lines inserted, with their line breaks
    time: float  # time.monotonic() of the last keystroke merged in
    source: EditSource
    # Unchanged whole lines the change was sent with (``documents.unchanged_edge_lines``):
    # hunks applied with context lines, whose next change will come the same way.
    context_lines: int = 0
    # It replaced whole lines with whole lines (a diff's hunk, a file changed on disk), not
    # part of a line as typing does.
    whole_lines: bool = False

    @property
    def is_empty(self) -> bool:
        return self.old_text == self.new_text

    @property
    def size(self) -> int:
        """UTF-8 bytes of old + new text, the unit of the log's byte budget."""
        return len(self.old_text.encode("utf-8", "surrogatepass")) + len(self.new_text.encode("utf-8", "surrogatepass"))

    def as_diff(self, name: str | None = None) -> str:
        """A unified-diff hunk without context lines; ``name`` defaults to the file's basename.

        A missing final newline is not marked: the model needs the change, not a patch."""
        if name is None:
            name = unquote(urlparse(self.uri).path).rsplit("/", 1)[-1] or self.uri
        old, new = _lines(self.old_text), _lines(self.new_text)
        # Unified diff numbers lines from 1; an empty side names the line it follows.
        old_at = self.start_line + 1 if old else self.start_line
        new_at = self.start_line + 1 if new else self.start_line
        out = [f"--- a/{name}", f"+++ b/{name}", f"@@ -{old_at},{len(old)} +{new_at},{len(new)} @@"]
        out += [f"-{line}" for line in old]
        out += [f"+{line}" for line in new]
        return "\n".join(out) + "\n"


@dataclass
class _Group:
    """The newest event while it can still absorb keystrokes."""

    event: EditEvent
    snapshot: str  # text before the group's first keystroke
    latest: str  # text after its last keystroke


class EditLog:
    """Recent edits across the workspace, oldest first. Safe to call from any thread."""

    def __init__(
        self,
        max_events: int = 64,
        max_bytes: int = 64_000,
        max_age_s: float = 900.0,
        merge_window_s: float = 1.0,
        max_event_bytes: int = 16_000,
    ) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.merge_window_s = merge_window_s
        self.max_event_bytes = max_event_bytes
        self._events: deque[EditEvent] = deque()
        self._bytes = 0
        self._group: _Group | None = None  # one at a time: only the newest event can merge
        self._lock = threading.Lock()

    def record(
        self, uri: str, before: str, after: str, source: EditSource = "editor", now: float | None = None,
        context_lines: int = 0, whole_lines: bool = False,
    ) -> None:
        """Log the change from ``before`` to ``after`` (full texts of ``uri``), sent with
        ``context_lines`` unchanged lines at its edge; ``whole_lines``: it replaced whole
        lines (keystrokes merged into one event are whole lines only if each was)."""
        if before == after:
            return
        now = time.monotonic() if now is None else now
        with self._lock:
            self._expire(now)
            change, group = _diff(before, after), self._group
            self._group = None
            if group is not None and self._can_merge(group, uri, before, change, source, now):
                self._pop_newest()
                self._add(_diff(group.snapshot, after), uri, source, now, group.snapshot, after, context_lines,
                          whole_lines and group.event.whole_lines)
            else:
                self._add(change, uri, source, now, before, after, context_lines, whole_lines)

    def record_hunk(self, uri: str, start_line: int, old_text: str, new_text: str, now: float | None = None,
                    context_lines: int = 0) -> None:
        """Log a change known only as its hunk (whole lines ``old_text`` at ``start_line``
        became ``new_text``), of a file whose whole text is not at hand: an event of its own."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._expire(now)
            self._group = None
            self._add(_Hunk(start_line, old_text, new_text), uri, source="editor", now=now, snapshot="", after="",
                      context_lines=context_lines, whole_lines=True)
            self._group = None  # nothing it could merge with: its file's text is unknown

    def end_burst(self) -> None:
        """The typing burst is over (a suggestion was accepted or dismissed): the next
        change starts a new event even within the merge window."""
        with self._lock:
            self._group = None

    def events(self, now: float | None = None) -> list[EditEvent]:
        with self._lock:
            self._expire(time.monotonic() if now is None else now)
            return list(self._events)

    def events_for(self, uri: str, now: float | None = None) -> list[EditEvent]:
        return [event for event in self.events(now) if event.uri == uri]

    def forget(self, uri: str) -> None:
        """Drop everything about ``uri`` (closed, deleted or renamed away)."""
        with self._lock:
            if self._group is not None and self._group.event.uri == uri:
                self._group = None
            self._events = deque(event for event in self._events if event.uri != uri)
            self._bytes = sum(event.size for event in self._events)

    def __len__(self) -> int:
        return len(self.events())

    def _can_merge(self, group: _Group, uri: str, before: str, change: _Hunk, source: EditSource, now: float) -> bool:
        newest = group.event
        if newest.uri != uri or newest.source != source or now - newest.time > self.merge_window_s:
            return False
        # Something we never saw changed the text in between: the snapshot no longer applies.
        if before != group.latest:
            return False
        # The newest event's lines as they stand now vs. the lines this change replaces;
        # touching (adjacent) ranges merge too, so typing down a block stays one event.
        newest_end = newest.start_line + _line_count(newest.new_text)
        change_end = change.start_line + _line_count(change.old_text)
        return change.start_line <= newest_end and newest.start_line <= change_end

    def _add(self, hunk: _Hunk, uri: str, source: EditSource, now: float, snapshot: str, after: str,
             context_lines: int = 0, whole_lines: bool = False) -> None:
        event = EditEvent(uri, hunk.start_line, hunk.old_text, hunk.new_text, now, source, context_lines,
                          whole_lines)
        if event.is_empty or event.size > self.max_event_bytes:
            return  # typed then deleted; or too big to help the model (see the module docstring)
        self._events.append(event)
        self._bytes += event.size
        self._group = _Group(event, snapshot, after)
        while self._events and (len(self._events) > self.max_events or self._bytes > self.max_bytes):
            self._pop_oldest()

    def _pop_newest(self) -> None:
        self._bytes -= self._events.pop().size

    def _pop_oldest(self) -> None:
        event = self._events.popleft()
        self._bytes -= event.size
        if self._group is not None and self._group.event is event:
            self._group = None

    def _expire(self, now: float) -> None:
        while self._events and now - self._events[0].time > self.max_age_s:
            self._pop_oldest()
        group = self._group
        if group is not None and now - group.event.time > self.merge_window_s:
            self._group = None  # the typing burst is over; free the snapshot

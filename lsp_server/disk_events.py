"""Which of watchdog's filesystem events the workspace watcher hears: the kinds that reach
inotify's mask at all, and the handler, on watchdog's own thread, that passes each created,
modified, deleted, moved or closed path on to the watcher (a move as the path it left and
the path it took; a directory's own "modified" or "closed" is dropped: its files report
themselves)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

_INTERESTING = frozenset({"created", "modified", "deleted", "moved", "closed"})
# Only these reach inotify's mask. Without a filter it also reports every open and
# read-only close, so our own scan of a big workspace overflowed its queue, and watchdog's
# recovery (walking the whole tree, opening directories) overflowed it again: one core
# busy for as long as the server ran (measured on a 50,000-file tree).
WATCHED_EVENTS = (FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
                   DirCreatedEvent, DirDeletedEvent, DirMovedEvent)


class PathListener(Protocol):
    """Whoever hears of the paths that changed (the workspace watcher)."""

    def note_path(self, path: Path, is_dir: bool, created: bool) -> None: ...


class DiskEventHandler(FileSystemEventHandler):
    def __init__(self, watcher: PathListener) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        kind, is_dir = event.event_type, event.is_directory
        # A directory's own "modified" only says its listing changed; the files report themselves.
        if kind not in _INTERESTING or (is_dir and kind in ("modified", "closed")):
            return
        if kind == "moved":
            self._watcher.note_path(Path(os.fsdecode(event.src_path)), is_dir, created=False)
            self._watcher.note_path(Path(os.fsdecode(event.dest_path)), is_dir, created=True)
        else:
            self._watcher.note_path(Path(os.fsdecode(event.src_path)), is_dir, created=kind == "created")

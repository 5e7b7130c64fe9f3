"""Which folders the server watches: the workspace folders the editor names, or else the
projects of the documents it opens (``project_root.py``).

Named folders are watched until the editor changes them (``didChangeWorkspaceFolders``:
the new set is watched afresh, the removed folders' indexes dropped). Projects found from
documents are kept most recently opened last, at most ``MAX_PROJECTS`` at once and, past
the newest, at most ``PROJECTS_MAX_BYTES`` of snapshots together. Opening a document of a
new project over either bound stops watching the least recently opened project with no
open document, or else the least recently opened one (a harness or a user moving from
project to project, who may never close a document), and drops its indexes. Watching
stops only there: a client that goes back and forth between a few small projects keeps
them all indexed rather than scanning one again at each move. Stopping joins the
watcher's threads, so it happens on a thread of its own, never on the event loop.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

from lsp_server.edit_log import EditLog
from lsp_server.file_watcher import SERVER_MAX_BYTES, SERVER_MAX_FILES, WorkspaceWatcher
from lsp_server.heap import give_back_freed_memory
from lsp_server.project_root import project_root
from lsp_server.workspace_lines import WorkspaceLines

log = logging.getLogger(__name__)

# Each project's watcher holds up to SERVER_MAX_BYTES of snapshots and, for its Python
# files, an index: together ~3 times their size (measured: Django's 9.7 MB of files,
# ~30 MB kept). Older projects together may keep PROJECTS_MAX_BYTES, checked at
# each opening: with the newest, at most 30 MB of snapshots, where two projects of
# SERVER_MAX_BYTES each would hold 40.
MAX_PROJECTS = 8
PROJECTS_MAX_BYTES = SERVER_MAX_BYTES // 2


class WatchedFolders:
    def __init__(self, edit_log: EditLog, lines: WorkspaceLines, is_open: Callable[[str], bool]) -> None:
        self._edit_log = edit_log
        self._lines = lines
        self._is_open = is_open
        self._named: WorkspaceWatcher | None = None
        self._projects: OrderedDict[Path, WorkspaceWatcher] = OrderedDict()  # least recently opened first

    def watchers(self) -> list[WorkspaceWatcher]:
        return ([self._named] if self._named is not None else []) + list(self._projects.values())

    def roots(self) -> list[Path]:
        """The folders watched (for the debug state)."""
        return [root for watcher in self.watchers() for root in watcher.roots]

    def name(self, folders: list[Path]) -> None:
        """The editor's workspace folders, at start or when they change: watched until they
        change again; while any is named, no projects are looked for."""
        folders = list(dict.fromkeys(folder.absolute() for folder in folders))
        old = self._named
        if old is not None and old.roots == folders:
            return
        self._named = self._start(folders) if folders else None
        if old is not None:
            self._stop_in_background(old, [root for root in old.roots if root not in folders])
        if folders:
            for root in list(self._projects):
                self._stop_in_background(self._projects.pop(root), [root] if root not in folders else [])

    def opened(self, document: Path, open_documents: Callable[[], Iterable[Path]]) -> None:
        """A ``file:`` document was opened: index its kind of file, and, with no folder
        named, watch its project (``open_documents``: the paths of every open document,
        asked for only when a project must go, since a client that never closes its
        documents makes the list long: 33 ms for 3,000)."""
        document = document.absolute()
        if self._named is None:
            self._watch_project_of(document, open_documents)
        for watcher in self.watchers():
            watcher.index_suffix(document.suffix)  # copies from the workspace's files of this kind

    def ready(self) -> bool:
        """Something is watched and every first scan is done (its files' lines indexed)."""
        watchers = self.watchers()
        return bool(watchers) and all(watcher.wait_ready(0) for watcher in watchers)

    def stop(self) -> None:
        for watcher in self.watchers():
            watcher.stop()

    def _watch_project_of(self, document: Path, open_documents: Callable[[], Iterable[Path]]) -> None:
        for watched, watcher in self._projects.items():
            if watcher.covers(document):
                self._projects.move_to_end(watched)
                return
        root = project_root(document)
        if root is None:
            return
        paths: list[Path] | None = None
        while self._projects and (len(self._projects) >= MAX_PROJECTS
                                  or sum(w.snapshot_bytes for w in self._projects.values()) > PROJECTS_MAX_BYTES):
            if paths is None:
                paths = [path.absolute() for path in open_documents() if path.absolute() != document]
            idle = [old for old, watcher in self._projects.items()
                    if not any(watcher.covers(path) for path in paths)]
            self._forget(idle[0] if idle else next(iter(self._projects)), has_open_documents=not idle)
        log.info("no workspace folder named: watching %s, the project of %s", root, document.name)
        self._projects[root] = self._start([root])

    def _start(self, folders: list[Path]) -> WorkspaceWatcher:
        watcher = WorkspaceWatcher(folders, self._edit_log, self._is_open, max_files=SERVER_MAX_FILES,
                                   max_total_bytes=SERVER_MAX_BYTES, lines=self._lines)
        watcher.start()
        return watcher

    def _forget(self, root: Path, has_open_documents: bool) -> None:
        log.info("no longer watching %s (%s; another project was opened)", root,
                 "the least recently opened" if has_open_documents else "no open document")
        self._stop_in_background(self._projects.pop(root), [root])

    def _stop_in_background(self, watcher: WorkspaceWatcher, dropped: list[Path]) -> None:
        """Stop ``watcher`` and drop the indexes of ``dropped`` (roots no other watcher has)."""

        def stop_and_drop() -> None:
            watcher.stop()  # first: a watcher still indexing would put the groups back
            for root in dropped:
                self._lines.forget(root)
            give_back_freed_memory()

        threading.Thread(target=stop_and_drop, name="redraft-stop-watcher", daemon=True).start()

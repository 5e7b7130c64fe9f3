"""Which folders the server watches: the workspace folders the editor names, or else the
projects of the documents it opens (``project_root.py``).

Named folders are watched until the editor changes them (``didChangeWorkspaceFolders``:
the new set is watched afresh, the removed folders' indexes dropped). Projects found from
documents are kept most recently opened last, at most ``MAX_PROJECTS`` at once: opening a
document of a new project stops watching the least recently opened one that has no open
document (a harness or a user moving from project to project), and its indexes are
dropped. Stopping joins the watcher's threads, so it happens on a thread of its own, never
on the event loop.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

from lsp_server.edit_log import EditLog
from lsp_server.file_watcher import SERVER_MAX_BYTES, SERVER_MAX_FILES, WorkspaceWatcher
from lsp_server.project_root import project_root
from lsp_server.workspace_lines import WorkspaceLines

log = logging.getLogger(__name__)

# Each project's watcher holds up to SERVER_MAX_BYTES of snapshots and its indexes.
MAX_PROJECTS = 2


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
        if len(self._projects) >= MAX_PROJECTS:
            paths = [path.absolute() for path in open_documents()]
            idle = [old for old, watcher in self._projects.items()
                    if not any(watcher.covers(path) for path in paths if path != document)]
            if not idle:
                log.info("not watching %s: %d projects with open documents are watched already", root, MAX_PROJECTS)
                return
            self._forget(idle[0])
        log.info("no workspace folder named: watching %s, the project of %s", root, document.name)
        self._projects[root] = self._start([root])

    def _start(self, folders: list[Path]) -> WorkspaceWatcher:
        watcher = WorkspaceWatcher(folders, self._edit_log, self._is_open, max_files=SERVER_MAX_FILES,
                                   max_total_bytes=SERVER_MAX_BYTES, lines=self._lines)
        watcher.start()
        return watcher

    def _forget(self, root: Path) -> None:
        log.info("no longer watching %s (no open document; another project was opened)", root)
        self._stop_in_background(self._projects.pop(root), [root])

    def _stop_in_background(self, watcher: WorkspaceWatcher, dropped: list[Path]) -> None:
        """Stop ``watcher`` and drop the indexes of ``dropped`` (roots no other watcher has)."""

        def stop_and_drop() -> None:
            watcher.stop()  # first: a watcher still indexing would put the groups back
            for root in dropped:
                self._lines.forget(root)

        threading.Thread(target=stop_and_drop, name="redraft-stop-watcher", daemon=True).start()

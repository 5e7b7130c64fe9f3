"""Files changed on disk outside the editor (git checkout, a formatter, codegen) enter the edit log.

watchdog reports raw filesystem events on its own thread (``disk_events.py`` says which
reach us); we only note the path and a deadline there. One worker thread waits for each
path to go quiet for ``debounce_s`` (a formatter's several writes become one diff), then
reads the file and diffs it against the snapshot taken at start or at the last change.
Open documents are skipped: the editor's buffer is the truth and its ``didChange`` events
already reach the log.

One recursive watch per folder: watchdog's inotify backend can't exclude subtrees, so
node_modules and virtualenvs are still watched by the kernel but filtered here.

The same snapshots feed the workspace's line index (``workspace_lines.py``): after the
first scan and after each batch of changes, the changed files of each group (folder,
suffix) are indexed on this thread — for Python files from the start, for another suffix
once a document of that kind is opened (``index_suffix``): a workspace's HTML, JSON or
data files would otherwise cost memory and a start-up sort for nothing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from .disk_events import WATCHED_EVENTS, DiskEventHandler
from .edit_log import EditLog
from .heap import give_back_freed_memory
from .workspace_files import HONOURS_GITIGNORE, WorkspaceFolder, read_text
from .workspace_lines import INDEXED_FROM_THE_START, WorkspaceLines

log = logging.getLogger(__name__)

# An editor's server: modest bounds, since the snapshot walk shares two cores with the model.
SERVER_MAX_FILES = 2000
SERVER_MAX_BYTES = 20_000_000


class WorkspaceWatcher:
    """Watch workspace folders and log disk changes as ``source="disk"`` edit events."""

    def __init__(
        self,
        folders: list[Path],
        log: EditLog,
        is_open: Callable[[str], bool],
        max_files: int = 5000,
        max_file_bytes: int = 1_000_000,
        debounce_s: float = 0.3,
        max_total_bytes: int = 50_000_000,
        lines: WorkspaceLines | None = None,
        indexed_suffixes: Iterable[str] = INDEXED_FROM_THE_START,
    ) -> None:
        # absolute(), not resolve(): URIs must match what the editor sends for the same folder.
        self._folders = [WorkspaceFolder(Path(folder).absolute()) for folder in folders]
        self._log = log
        self._is_open = is_open
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.debounce_s = debounce_s
        self.max_total_bytes = max_total_bytes  # counted in characters, close enough for a budget
        self._snapshots: dict[Path, str] = {}  # touched only by the worker thread
        self._snapshot_bytes = 0
        self._lines = lines
        self._unindexed: dict[tuple[Path, str], set[Path]] = {}  # (folder root, suffix) -> files changed since
        self._indexed_suffixes = set(indexed_suffixes)  # touched only by the worker thread
        self._suffixes_asked: set[str] = set()  # by index_suffix, under _cond
        self._pending: dict[Path, tuple[float, bool]] = {}  # path -> (deadline, created)
        self._cond = threading.Condition()
        self._stopping = False
        self._ready = threading.Event()
        self._observer: BaseObserver | None = None
        self._worker: threading.Thread | None = None

    def start(self) -> None:
        """Start watching and return at once: adding the kernel watches and reading the
        snapshots happen on the worker thread, off the server's event loop."""
        if self._worker is not None:
            return
        try:
            self._stopping, self._ready = False, threading.Event()
            self._worker = threading.Thread(target=self._run, name="redraft-file-watcher", daemon=True)
            self._worker.start()
        except Exception:
            log.warning("could not start watching the workspace; disk changes won't be seen", exc_info=True)
            self._worker = None

    def stop(self, timeout: float = 2.0) -> None:
        """Stop both threads; safe to call twice or before start, never raises."""
        try:
            with self._cond:
                self._stopping = True
                self._pending.clear()
                self._cond.notify_all()
            worker, self._worker = self._worker, None
            # The worker owns the observer's start, so it must be done before we stop the observer.
            if worker is not None and worker is not threading.current_thread():
                worker.join(timeout)
                if worker.is_alive():
                    log.warning("file watcher worker did not stop within %.1f s", timeout)
            observer, self._observer = self._observer, None
            if observer is not None:
                observer.stop()
                if observer.is_alive():
                    observer.join(timeout)
        except Exception:
            log.warning("error while stopping the file watcher", exc_info=True)

    def index_suffix(self, suffix: str) -> None:
        """Index the lines of this kind of file too (a document of the kind was opened)."""
        with self._cond:
            if suffix not in self._suffixes_asked:
                self._suffixes_asked.add(suffix)
                self._cond.notify()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the initial snapshots are taken (changes before that are not diffed)."""
        return self._ready.wait(timeout)

    @property
    def roots(self) -> list[Path]:
        return [folder.root for folder in self._folders]

    @property
    def snapshot_bytes(self) -> int:
        """What the snapshots hold so far (read from other threads: an int, so no lock)."""
        return self._snapshot_bytes

    def covers(self, path: Path) -> bool:
        """``path`` (absolute) is inside one of the watched folders."""
        return self._folder_of(path) is not None

    def _folder_of(self, path: Path) -> WorkspaceFolder | None:
        for folder in self._folders:
            if folder.root == path or folder.root in path.parents:
                return folder
        return None

    def note_path(self, path: Path, is_dir: bool, created: bool) -> None:
        """Called on watchdog's thread: remember the path, push its deadline back."""
        folder = self._folder_of(path)
        if folder is None or folder.skips(path, is_dir):
            return
        with self._cond:
            if self._stopping:
                return
            _, was_created = self._pending.get(path, (0.0, False))
            self._pending[path] = (time.monotonic() + self.debounce_s, created or was_created)
            self._cond.notify()

    def _observe(self) -> None:
        folders = [folder for folder in self._folders if folder.root.is_dir()]
        for folder in self._folders:
            if folder not in folders:
                log.warning("workspace folder %s does not exist; not watching it", folder.root)
        if not HONOURS_GITIGNORE:
            log.info("pathspec is not installed; .gitignore files are not honoured")
        observer = Observer()
        observer.daemon = True
        handler = DiskEventHandler(self)
        for folder in folders:
            observer.schedule(handler, str(folder.root), recursive=True, event_filter=list(WATCHED_EVENTS))
        self._observer = observer
        observer.start()

    def _run(self) -> None:
        try:
            self._observe()
        except Exception:
            log.warning("could not watch the workspace; disk changes won't be seen", exc_info=True)
        try:
            self._scan()
        except Exception:
            log.warning("initial workspace scan failed", exc_info=True)
        self._index_lines()
        give_back_freed_memory()  # what the scan and the first index needed only for a moment
        self._ready.set()
        while True:
            with self._cond:
                while not self._stopping:
                    if self._suffixes_asked - self._indexed_suffixes:
                        break
                    deadline = min((d for d, _ in self._pending.values()), default=None)
                    if deadline is not None and deadline <= time.monotonic():
                        break
                    # Sleeps until the next deadline or a new event: no polling while idle.
                    self._cond.wait(None if deadline is None else deadline - time.monotonic())
                if self._stopping:
                    return
                now = time.monotonic()
                # In deadline order, so paths are handled in the order they went quiet.
                ripe = sorted((d, path) for path, (d, _) in self._pending.items() if d <= now)
                due = {path: self._pending.pop(path)[1] for _, path in ripe}
                new_suffixes = self._suffixes_asked - self._indexed_suffixes
            self._indexed_suffixes |= new_suffixes
            for path in self._snapshots:
                if path.suffix in new_suffixes:
                    self._note_unindexed(path)
            for path, created in due.items():
                try:
                    self._process(path, created)
                except Exception:
                    log.warning("could not process disk change to %s", path, exc_info=True)
            self._index_lines()

    def _index_lines(self) -> None:
        """Index the files that changed: into their group's index, or the whole group again."""
        if self._lines is None:
            self._unindexed.clear()
            return
        for (root, suffix), paths in sorted(self._unindexed.items()):
            try:
                if not self._lines.update(root, suffix, {path: self._snapshots.get(path) for path in paths}):
                    files = {path: text for path, text in self._snapshots.items()
                             if path.suffix == suffix and (folder := self._folder_of(path)) is not None
                             and folder.root == root}
                    self._lines.rebuild(root, suffix, files)
            except Exception:
                log.warning("could not index the lines of %s files under %s", suffix, root, exc_info=True)
        self._unindexed.clear()

    def _scan(self) -> None:
        for folder in self._folders:
            for path in self._eligible_files(folder, folder.root):
                if self._stopping or len(self._snapshots) >= self.max_files:
                    return
                text = read_text(path, self.max_file_bytes)
                if text is not None:
                    self._remember(path, text)
        log.info("watching %d files (%d bytes of snapshots)", len(self._snapshots), self._snapshot_bytes)

    def _eligible_files(self, folder: WorkspaceFolder, top: Path) -> list[Path]:
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(top):
            here = Path(dirpath)
            if (here / "pyvenv.cfg").is_file() or folder.skips(here, is_dir=True):
                dirnames.clear()
                continue
            dirnames[:] = sorted(d for d in dirnames if not folder.skips(here / d, is_dir=True))
            found += [here / name for name in sorted(filenames) if not folder.skips(here / name)]
            if len(found) >= self.max_files:
                break
        return found

    def _remember(self, path: Path, text: str) -> None:
        self._forget(path)
        self._note_unindexed(path)
        size = len(text)
        if len(self._snapshots) < self.max_files and self._snapshot_bytes + size <= self.max_total_bytes:
            self._snapshots[path] = text
            self._snapshot_bytes += size

    def _forget(self, path: Path) -> None:
        old = self._snapshots.pop(path, None)
        if old is not None:
            self._snapshot_bytes -= len(old)
            self._note_unindexed(path)

    def _note_unindexed(self, path: Path) -> None:
        folder = self._folder_of(path)
        if folder is not None and path.suffix in self._indexed_suffixes:
            self._unindexed.setdefault((folder.root, path.suffix), set()).add(path)

    def _process(self, path: Path, created: bool) -> None:
        folder = self._folder_of(path)
        if folder is None:
            return
        if path == folder.root / ".gitignore":
            folder.reload_gitignore()
        if path.is_dir():
            # A new directory (mkdir, git checkout, a move): its files may predate our watch.
            if created and not folder.in_virtualenv(path):
                for child in self._eligible_files(folder, path):
                    self._process(child, created=True)
            return
        if not path.exists() and path not in self._snapshots:
            # A deleted or moved-away directory: its files' snapshots go with it.
            for child in [p for p in self._snapshots if path in p.parents]:
                self._process(child, created=False)
            return
        if folder.in_virtualenv(path.parent):
            return
        uri = path.as_uri()
        before = self._snapshots.get(path)
        after = read_text(path, self.max_file_bytes) if path.exists() else None
        if after is None:
            self._forget(path)
            if before is not None and not path.exists() and not self._is_open(uri):
                self._log.record(uri, before, "", source="disk", whole_lines=True)
            return
        self._remember(path, after)
        if self._is_open(uri):
            return
        if before is not None:
            self._log.record(uri, before, after, source="disk", whole_lines=True)
        elif created:
            self._log.record(uri, "", after, source="disk", whole_lines=True)

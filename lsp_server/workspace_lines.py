"""The lines of the workspace's files, for completions copied from other files.

The file watcher keeps a snapshot of every eligible file on disk; from those, one sorted
``LineIndex`` per (workspace folder, file suffix) is built on the watcher's thread. A saved
file only updates its group's index (its lines beside the sorted base); the group is sorted
again once ``MAX_CHANGED_FILES`` files have changed. Either way the new index is swapped in
whole, so a request reads a consistent index without a lock. A request asks for its
document's group, with the document's own file left out: its buffer is the truth, and its
saved copy is not "another file" (for a benchmark it would even hold the answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from lsp_server.engine import LineIndex, RelatedLines

log = logging.getLogger(__name__)

# Sorting 1,700 files (20 MB, the server's snapshot cap) took 0.4 s holding the GIL: not on
# every save. Past this many changed files a query's per-file bisections cost more than a sort.
MAX_CHANGED_FILES = 32
# The model's language; other kinds of file are indexed once a document of the kind opens.
INDEXED_FROM_THE_START = frozenset({".py"})


def file_key(path: Path) -> str:
    """One name per file, whichever way the editor or the walk spelled its path."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop, a vanished parent
        return str(path.absolute())


class WorkspaceLines:
    def __init__(self) -> None:
        self._groups: dict[tuple[Path, str], LineIndex] = {}  # replaced whole, never mutated

    def rebuild(self, root: Path, suffix: str, files: Mapping[Path, str]) -> None:
        """Index ``files`` (all of the group's snapshots) as the group of ``root`` and ``suffix``."""
        started = time.perf_counter()
        index = LineIndex({file_key(path): text for path, text in files.items()}) if files else None
        self._swap(root, suffix, index)
        log.debug("indexed %d %s files under %s in %.0f ms", len(files), suffix or "suffix-less", root,
                  1000 * (time.perf_counter() - started))

    def update(self, root: Path, suffix: str, changed: Mapping[Path, str | None]) -> bool:
        """Apply ``changed`` files (None: gone) to the group's index; False when the group
        should be rebuilt instead (not indexed yet, or too many files changed since)."""
        index = self._groups.get((root, suffix))
        if index is None or index.changed_files + len(changed) > MAX_CHANGED_FILES:
            return False
        for path, text in changed.items():
            index = index.updated(file_key(path), text)
        self._swap(root, suffix, index)
        return True

    def _swap(self, root: Path, suffix: str, index: LineIndex | None) -> None:
        groups = dict(self._groups)
        if index is None:
            groups.pop((root, suffix), None)
        else:
            groups[(root, suffix)] = index
        self._groups = groups

    def related(self, path: Path | None) -> RelatedLines | None:
        """The lines of the other files like ``path`` in its workspace folder, if any."""
        if path is None:
            return None
        path = path.absolute()
        for (root, suffix), index in self._groups.items():
            if suffix == path.suffix and root in path.parents:
                return RelatedLines(index, skip=file_key(path))
        return None

"""The lines of the workspace's files, for completions copied from other files.

The file watcher keeps a snapshot of every eligible file on disk; from those, one sorted
``LineIndex`` per (workspace folder, file suffix) is rebuilt on the watcher's thread
whenever a file of that group changes, and swapped in whole, so a request reads a
consistent index without a lock. A request asks for its document's group, with the
document's own file left out: its buffer is the truth, and its saved copy is not "another
file" (for a benchmark it would even hold the answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from lsp_server.engine import LineIndex, RelatedLines

log = logging.getLogger(__name__)

MAX_LINES_PER_GROUP = 300_000  # ~30 MB of index at most; the watcher's byte cap bounds it first


def file_key(path: Path) -> str:
    """One name per file, whichever way the editor or the walk spelled its path."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop, a vanished parent
        return str(path.absolute())


class WorkspaceLines:
    def __init__(self, max_lines_per_group: int = MAX_LINES_PER_GROUP) -> None:
        self.max_lines_per_group = max_lines_per_group
        self._groups: dict[tuple[Path, str], LineIndex] = {}  # replaced whole, never mutated

    def rebuild(self, root: Path, suffix: str, files: Mapping[Path, str]) -> None:
        """Index ``files`` (all of the group's snapshots) as the group of ``root`` and ``suffix``."""
        started = time.perf_counter()
        groups = dict(self._groups)
        if files:
            groups[(root, suffix)] = LineIndex({file_key(path): text for path, text in files.items()},
                                               self.max_lines_per_group)
        else:
            groups.pop((root, suffix), None)
        self._groups = groups
        log.debug("indexed %d %s files under %s in %.0f ms", len(files), suffix or "suffix-less", root,
                  1000 * (time.perf_counter() - started))

    def related(self, path: Path | None) -> RelatedLines | None:
        """The lines of the other files like ``path`` in its workspace folder, if any."""
        if path is None:
            return None
        path = path.absolute()
        for (root, suffix), index in self._groups.items():
            if suffix == path.suffix and root in path.parents:
                return RelatedLines(index, skip=file_key(path))
        return None

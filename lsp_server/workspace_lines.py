"""The lines of the workspace's files, for completions copied from other files.

The file watcher keeps a snapshot of every eligible file on disk; from those, one sorted
``LineIndex`` per (workspace folder, file suffix) is built on the watcher's thread. A saved
file only updates its group's index (its lines beside the sorted base); the group is sorted
again once ``MAX_CHANGED_FILES`` files have changed. Either way the new index is swapped in
whole, so a request reads a consistent index without a lock. Beside each line index, the
group's runs of tokens (``model/fim/run_index.py``), for continuing the cursor's line as the
other files continue its last tokens; a saved file is the only one tokenized again. A
request asks for its document's group, with the document's own file left out: its buffer
is the truth, and its saved copy is not "another file" (for a benchmark it would even hold
the answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from lsp_server.document_dialect import lf_breaks
from lsp_server.engine import LineIndex, RelatedLines, RunIndex, RunIndexBuilder

log = logging.getLogger(__name__)

# Sorting 1,700 files (20 MB, the server's snapshot cap) took 0.4 s holding the GIL: not on
# every save. Past this many changed files a query's per-file bisections cost more than a sort.
MAX_CHANGED_FILES = 32
# The model's language; other kinds of file are indexed once a document of the kind opens.
INDEXED_FROM_THE_START = frozenset({".py"})
# Runs of tokens are kept for the model's language only: they cost ~16 bytes a token.
RUNS_FOR = frozenset({".py"})


def file_key(path: Path) -> str:
    """One name per file, whichever way the editor or the walk spelled its path."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop, a vanished parent
        return str(path.absolute())


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # gone since its snapshot: last
        return 0.0


class WorkspaceLines:
    def __init__(self) -> None:
        # Replaced whole, never mutated: a request reads one consistent pair.
        self._groups: dict[tuple[Path, str], tuple[LineIndex, RunIndex | None]] = {}
        self._run_builders: dict[tuple[Path, str], RunIndexBuilder] = {}  # the watcher's thread only

    def rebuild(self, root: Path, suffix: str, files: Mapping[Path, str]) -> None:
        """Index ``files`` (all of the group's snapshots) as the group of ``root`` and ``suffix``."""
        started = time.perf_counter()
        # Newest first: where the runs are capped, the files being worked on are the ones kept.
        # With the line breaks the model reads: a \r\n file's runs would not match the
        # request's context, and its copies and continuations would carry a stray \r.
        keyed = {file_key(path): lf_breaks(files[path]) for path in sorted(files, key=_modified, reverse=True)}
        if not keyed:
            self._run_builders.pop((root, suffix), None)
            self._swap(root, suffix, None)
            return
        runs = self._run_builders.setdefault((root, suffix), RunIndexBuilder()).replace_all(keyed) \
            if suffix in RUNS_FOR else None
        self._swap(root, suffix, (LineIndex(keyed), runs))
        log.debug("indexed %d %s files under %s in %.0f ms", len(files), suffix or "suffix-less", root,
                  1000 * (time.perf_counter() - started))

    def update(self, root: Path, suffix: str, changed: Mapping[Path, str | None]) -> bool:
        """Apply ``changed`` files (None: gone) to the group's index; False when the group
        should be rebuilt instead (not indexed yet, or too many files changed since)."""
        group = self._groups.get((root, suffix))
        if group is None or group[0].changed_files + len(changed) > MAX_CHANGED_FILES:
            return False
        index, runs = group
        changed = {path: None if text is None else lf_breaks(text) for path, text in changed.items()}
        for path, text in changed.items():
            index = index.updated(file_key(path), text)
        builder = self._run_builders.get((root, suffix))
        if builder is not None:
            runs = builder.update({file_key(path): text for path, text in changed.items()})
        self._swap(root, suffix, (index, runs))
        return True

    def forget(self, root: Path) -> None:
        """Drop every group of ``root`` (a folder no longer watched)."""
        for group_root, suffix in [key for key in self._groups if key[0] == root]:
            self._run_builders.pop((group_root, suffix), None)
            self._swap(group_root, suffix, None)

    def _swap(self, root: Path, suffix: str, group: tuple[LineIndex, RunIndex | None] | None) -> None:
        groups = dict(self._groups)
        if group is None:
            groups.pop((root, suffix), None)
        else:
            groups[(root, suffix)] = group
        self._groups = groups

    def related(self, path: Path | None) -> RelatedLines | None:
        """The lines of the other files like ``path`` in its workspace folder, if any."""
        if path is None:
            return None
        path = path.absolute()
        for (root, suffix), (index, runs) in self._groups.items():
            if suffix == path.suffix and root in path.parents:
                return RelatedLines(index, skip=file_key(path), runs=runs)
        return None

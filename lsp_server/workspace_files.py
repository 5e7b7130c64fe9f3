"""Which files of a workspace folder are the user's code, and their text: version control,
dependency caches, build outputs, virtualenvs (under any name) and what the folder's
top-level .gitignore names are skipped; binary, oversized and non-UTF-8 files are not read.
The file watcher's snapshots follow these rules; the project-root search skips the same
directories (``SKIPPED_DIRS``)."""

from __future__ import annotations

import logging
from pathlib import Path

try:
    from pathspec import GitIgnoreSpec
except ImportError:  # optional: without it .gitignore is not honoured
    GitIgnoreSpec = None  # type: ignore[assignment,misc]
HONOURS_GITIGNORE = GitIgnoreSpec is not None

log = logging.getLogger(__name__)

# Version control, dependency and tool caches, virtualenvs, build outputs: never hand-edited.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".mypy_cache"}) | frozenset(
    {".pytest_cache", ".venv", "venv", "env", "build", "dist"}
)
_BINARY_SNIFF = 8192  # bytes read to tell a binary file (a NUL among them)


def _skipped_name(name: str) -> bool:
    return name in SKIPPED_DIRS or name.endswith(".egg-info")


def read_text(path: Path, max_bytes: int) -> str | None:
    """The file's text, or None if it is missing, too big, binary or not UTF-8.

    Read as bytes so ``\\r\\n`` survives: line numbers must match the editor's."""
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError:
        return None
    if len(data) > max_bytes or b"\0" in data[:_BINARY_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class WorkspaceFolder:
    """One workspace folder and its top-level .gitignore."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ignore: GitIgnoreSpec | None = None
        self.reload_gitignore()

    def reload_gitignore(self) -> None:
        gitignore = self.root / ".gitignore"
        if GitIgnoreSpec is None or not gitignore.is_file():
            self.ignore = None
            return
        try:
            self.ignore = GitIgnoreSpec.from_lines(gitignore.read_text("utf-8", errors="replace").splitlines())
        except Exception:
            log.warning("could not parse %s; ignoring it", gitignore, exc_info=True)
            self.ignore = None

    def relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def skips(self, path: Path, is_dir: bool = False) -> bool:
        """Cheap, name-only test (no disk access) for ``path`` inside this folder."""
        rel = self.relative(path)
        if rel is None or rel == ".":
            return rel is None
        parts = rel.split("/")
        if any(_skipped_name(part) for part in (parts if is_dir else parts[:-1])):
            return True
        return self.ignore is not None and self.ignore.match_file(rel + "/" if is_dir else rel)

    def in_virtualenv(self, directory: Path) -> bool:
        """A virtualenv under any name is recognised by its pyvenv.cfg (checked up to the root)."""
        while directory != self.root and self.root in directory.parents:
            if (directory / "pyvenv.cfg").is_file():
                return True
            directory = directory.parent
        return False

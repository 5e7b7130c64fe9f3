"""The folder a document belongs to, when the editor names no workspace folder.

An editor that opens a lone file (VS Code without a folder, ``nvim file.py`` with no root
detection) sends no workspace folders and no root URI. The file's project still has the
files that copied lines, runs and disk changes come from, so the server watches the
nearest folder above the document that looks like a project root: one holding version
control or a Python packaging file. Without one, the top of the document's Python
package (the outermost of the folders above it that hold an ``__init__.py``), or else the
document's own folder.

Never a folder too broad to watch (the file system's root, the home directory, the temp
directory itself), and never above a virtualenv or a folder the watcher skips: a file
opened from ``site-packages`` belongs to its package's folder, not to the project that
happens to hold the virtualenv.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from lsp_server.workspace_files import SKIPPED_DIRS

ROOT_MARKERS = (".git", ".hg", "pyproject.toml", "setup.py", "setup.cfg")
# The watcher would skip these; a document inside one is rooted below it.
_BARRIERS = SKIPPED_DIRS | frozenset({"site-packages", "dist-packages"})


def _too_broad() -> frozenset[Path]:
    broad = {Path("/"), Path(tempfile.gettempdir())}
    with contextlib.suppress(RuntimeError):  # no home directory to be found
        broad.add(Path.home())
    return frozenset(path.absolute() for path in broad)


def project_root(document: Path) -> Path | None:
    """The folder to watch for ``document`` (an absolute path), or None when none fits."""
    start = document.parent
    if not start.is_dir():
        return None
    too_broad = _too_broad()
    folder = start
    while folder not in too_broad:
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
        if (folder / "pyvenv.cfg").is_file() or folder.parent == folder or folder.parent.name in _BARRIERS:
            break
        folder = folder.parent
    if start in too_broad or start.name in _BARRIERS:
        return None
    package = start
    while (package / "__init__.py").is_file() and (package.parent / "__init__.py").is_file() \
            and package.parent not in too_broad and package.parent.name not in _BARRIERS:
        package = package.parent
    return package

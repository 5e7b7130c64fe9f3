"""One logged edit as next edit reads it: pure Python, so the server builds its history
without importing the network's runtime."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EditRecord:
    """One logged edit: whole lines ``old_text`` at ``start_line`` of ``path`` became ``new_text``."""

    path: str
    start_line: int
    old_text: str
    new_text: str
    in_document: bool = True  # an edit of the document asked about (not another file)
    # Unchanged lines the change was sent with at its edge: hunks applied as ``git diff``
    # cuts them (lsp_server/edit_log.py), so the next one will hold every change that close.
    context_lines: int = 0
    # It replaced whole lines with whole lines, as a tool applying a diff's hunks does; an
    # editor's keystrokes change part of a line.
    whole_lines: bool = False

"""Whether JavaScript or TypeScript around the cursor parses with a candidate in place, on
tree-sitter: the ``StatementCheck`` of the languages Python's own parser can't read.

Tree-sitter never fails a parse: it recovers and marks what it could not read with ERROR
and MISSING nodes. A candidate breaks the code when, with it in place, the tree holds a
mark the text without it did not have, or a mark on the lines the candidate touches. The
marks the user's other unfinished code left elsewhere are the same in both trees (moved by
the candidate's length), so they don't count against it.

Only a window of lines around the cursor is parsed, so that a big file costs no more than a
small one; the window's cut edges leave the same marks in both trees. The text without
the candidate is parsed once per request, and each candidate reparses it incrementally
(tree-sitter reuses what the edit left alone).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from model.fim.suffix_overlap import trim_suffix_overlap
from model.languages.statement import UNKNOWN_PARSE

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Tree

# The window parsed around the cursor. 16 KB before it and 8 KB after take ~2 ms to parse.
WINDOW_BEFORE_CHARS = 16_000
WINDOW_AFTER_CHARS = 8_000
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}

ErrorMark = tuple[int, int, bool]  # start byte, end byte, whether a MISSING node (else ERROR)


class Grammar:
    """One tree-sitter grammar, loaded on first use, with a parser per thread (a tree-sitter
    parser is not safe to share between threads; the HTTP and LSP servers may share one)."""

    def __init__(self, load: Callable[[], object]) -> None:
        self._load = load
        self._local = threading.local()

    @cached_property
    def language(self) -> Language:
        from tree_sitter import Language

        return Language(self._load())

    def parser(self) -> Parser:
        parser: Parser | None = getattr(self._local, "parser", None)
        if parser is None:
            from tree_sitter import Parser

            parser = self._local.parser = Parser(self.language)
        return parser


def error_marks(tree: Tree) -> list[ErrorMark]:
    """Every ERROR and MISSING node, found by descending only where ``has_error`` says one lies."""
    marks: list[ErrorMark] = []

    def visit(node: Node) -> None:
        if node.is_missing:
            marks.append((node.start_byte, node.end_byte, True))
            return
        if node.is_error:
            marks.append((node.start_byte, node.end_byte, False))
        for child in node.children:
            if child.has_error or child.is_missing:
                visit(child)

    if tree.root_node.has_error:
        visit(tree.root_node)
    return marks


def _point_after(start: tuple[int, int], text: bytes) -> tuple[int, int]:
    """The (row, byte column) reached by writing ``text`` at ``start``."""
    breaks = text.count(b"\n")
    if not breaks:
        return start[0], start[1] + len(text)
    return start[0] + breaks, len(text) - text.rfind(b"\n") - 1


def awaited_closers(middle: str) -> str | None:
    """The brackets ``middle`` leaves open, closed in order (``if (ok) {`` → ``}``): a block
    header typed before its body; None when it leaves none open or closes one it did not
    open. Brackets inside strings and comments are counted too: a rare miscount only makes
    the check lenient."""
    stack: list[str] = []
    for ch in middle:
        if ch in _OPENERS:
            stack.append(ch)
        elif ch in _CLOSERS:
            if not stack or stack[-1] != _CLOSERS[ch]:
                return None
            stack.pop()
    return "".join(_OPENERS[ch] for ch in reversed(stack)) or None


class TreeSitterStatement:
    """The code around one cursor, parsed once and asked about every candidate."""

    def __init__(self, grammar: Grammar, prefix: str, suffix: str) -> None:
        self.grammar = grammar
        self.suffix = suffix
        start = prefix.rfind("\n", 0, max(0, len(prefix) - WINDOW_BEFORE_CHARS)) + 1 \
            if len(prefix) > WINDOW_BEFORE_CHARS else 0
        end = suffix.find("\n", WINDOW_AFTER_CHARS) if len(suffix) > WINDOW_AFTER_CHARS else -1
        self._before = prefix[start:].encode("utf-8")
        self._after = (suffix if end < 0 else suffix[:end + 1]).encode("utf-8")
        self._cursor = len(self._before)
        self._line_start = self._before.rfind(b"\n") + 1
        self._known: dict[str, tuple[bool, bool]] = {}

    @cached_property
    def _alone(self) -> Tree:
        return self.grammar.parser().parse(self._before + self._after)

    @cached_property
    def _alone_marks(self) -> list[ErrorMark]:
        return error_marks(self._alone)

    @cached_property
    def _cursor_line_clean(self) -> bool:
        """Whether the cursor's line, without a candidate, holds no mark."""
        line_end = self._after.find(b"\n")
        line_end = self._cursor + (len(self._after) if line_end < 0 else line_end)
        return not any(_touches(mark, self._line_start, line_end) for mark in self._alone_marks)

    def _judged(self, middle: str) -> tuple[bool, bool]:
        """(whether the code parses with ``middle`` in place, and whether it does once the
        brackets ``middle`` leaves open are closed after it)."""
        known = self._known.get(middle)
        if known is None:
            strict = self._parses(middle)
            closers = None if strict else awaited_closers(middle)
            known = self._known[middle] = (strict, strict or (closers is not None and self._parses(middle + closers)))
        return known

    def _parses(self, middle: str) -> bool:
        inserted = middle.encode("utf-8")
        tree = self._alone.copy()
        start_point = (self._before.count(b"\n"), self._cursor - self._line_start)
        tree.edit(self._cursor, self._cursor, self._cursor + len(inserted),
                  start_point, start_point, _point_after(start_point, inserted))
        after_start = self._cursor + len(inserted)
        reparsed = self.grammar.parser().parse(self._before + inserted + self._after, old_tree=tree)
        # Where the candidate's lines begin and end, in the new text.
        touched_end = self._after.find(b"\n")
        touched_end = after_start + (len(self._after) if touched_end < 0 else touched_end)
        before_marks = {self._moved(mark, len(inserted)) for mark in self._alone_marks}
        for mark in error_marks(reparsed):
            if mark not in before_marks or _touches(mark, self._line_start, touched_end):
                return False
        return True

    def _moved(self, mark: ErrorMark, by: int) -> ErrorMark:
        """``mark`` of the text without the candidate, where it lies with it in place."""
        start, end, missing = mark
        if start >= self._cursor:
            return start + by, end + by, missing
        if end > self._cursor:
            return start, end + by, missing
        return mark

    def still_parses(self, middle: str) -> float:
        if not self._cursor_line_clean:
            return UNKNOWN_PARSE
        return float(self._judged(trim_suffix_overlap(middle, self.suffix))[0])

    def parses_with(self, middle: str) -> float:
        strict, lenient = self._judged(trim_suffix_overlap(middle, self.suffix))
        if strict:
            return 1.0
        return UNKNOWN_PARSE if lenient else 0.0

    def rules_out(self, middle: str) -> bool:
        """A middle breaks code whose cursor line was whole without it, even once the
        brackets it opens are closed (a header before its body is not broken)."""
        return self._cursor_line_clean and not self._judged(trim_suffix_overlap(middle, self.suffix))[1]


def _touches(mark: ErrorMark, start: int, end: int) -> bool:
    return mark[0] <= end and mark[1] >= start


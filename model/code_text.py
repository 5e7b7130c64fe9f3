"""Where the code is in source text: outside string literals and comments.

The edit patterns rewrite names only in code. Any language: one line at a time, with its
comment marker (``comment_marker``, ``code_spans``). Python: the whole text at once
(``PythonLiterals``), so a docstring or a multi-line string is known on every line it
spans, a string that holds three quotes opens nothing, and an f-string's replacement
fields count as code.
"""

from __future__ import annotations

import bisect
import itertools
import re

HASH_COMMENT_SUFFIXES = (".py", ".pyi", ".sh", ".bash", ".rb", ".pl", ".toml", ".yaml", ".yml", ".r", ".jl", ".cfg")
SLASH_COMMENT_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".hpp", ".js", ".ts", ".tsx", ".jsx", ".java", ".go", ".rs",
                          ".swift", ".kt", ".cs", ".scala", ".dart", ".php")


# LSP's line breaks: a line ends at "\r\n", "\r" or "\n".
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_start(text: str, at: int) -> int:
    """Where the LSP line holding ``text[at]`` (or ending just before it) starts."""
    return max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1


def lsp_lines_with_ends(text: str) -> list[str]:
    """Lines with their endings (joining them gives ``text`` back), LSP's line rule."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def line_offsets(lines: list[str]) -> list[int]:
    """Where each of ``lines`` (a text split at "\\n") starts in the text."""
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def indent_of(line: str) -> int:
    """Columns of blanks (spaces or tabs, one each) before the line's text."""
    return len(line) - len(line.lstrip(" \t"))


# A comment, or a string literal of any quoting up to its end (or the text's, if unclosed):
# strings are skipped whole, so that `'"""'` opens nothing.
PYTHON_LITERAL = re.compile(
    r'#[^\n]*'
    r'|"""(?:\\.|[^\\])*?(?:"""|\Z)'
    r"|'''(?:\\.|[^\\])*?(?:'''|\Z)"
    r'|"(?:\\.|[^"\\\n])*(?:"|$)'
    r"|'(?:\\.|[^'\\\n])*(?:'|$)",
    re.MULTILINE | re.DOTALL)
# The letters that open a string literal (``f``, ``rb``, ``Rf`` …), right before its quote.
STRING_PREFIX = re.compile(r"(?<![\w])[rRbBuUfF]{1,2}\Z")


class PythonLiterals:
    """Where a Python text's comments and string literals are, with strings read across
    lines: a docstring's closing line is prose up to its quotes, and the lines inside a
    triple-quoted string are not code, whatever their indentation. An f-string's
    replacement fields (``{name}``) are code."""

    def __init__(self, lines: list[str]) -> None:
        self.starts = list(itertools.accumulate((len(line) for line in lines), initial=0))
        text = "".join(lines)
        self.spans: list[tuple[int, int]] = []
        for match in PYTHON_LITERAL.finditer(text):
            start, end = match.span()
            prefix = STRING_PREFIX.search(text, max(0, start - 3), start)
            if prefix is not None and "f" in prefix.group().lower():
                self.spans += outside_fields(text, start, end)
            else:
                self.spans.append((start, end))
        self._span_starts = [start for start, _ in self.spans]

    def code_spans(self, row: int) -> list[tuple[int, int]]:
        """The row's character ranges outside comments and strings."""
        row_start, row_end = self.starts[row], self.starts[row + 1]
        code, at = [], row_start
        # The literals overlapping the row: from the last one starting before it.
        index = max(0, bisect.bisect_right(self._span_starts, row_start) - 1)
        while index < len(self.spans) and self.spans[index][0] < row_end:
            start, end = self.spans[index]
            if end > at:
                if start > at:
                    code.append((at - row_start, start - row_start))
                at = max(at, end)
            index += 1
        if at < row_end:
            code.append((at - row_start, row_end - row_start))
        return code

    def rows_inside_strings(self) -> set[int]:
        """Rows that begin inside a string literal (a multi-line string's later lines)."""
        rows: set[int] = set()
        for start, end in self.spans:
            first = bisect.bisect_right(self.starts, start)  # the first row starting after it opens
            last = bisect.bisect_left(self.starts, end)  # rows before this one start before it closes
            rows.update(range(first, last))
        return rows


def outside_fields(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The f-string ``text[start:end]`` without the insides of its replacement fields."""
    pieces, at, i, depth = [], start, start, 0
    while i < end:
        ch = text[i]
        if depth == 0 and ch == "{" and text.startswith("{{", i):
            i += 2  # an escaped brace
            continue
        if ch == "{":
            if depth == 0:
                pieces.append((at, i + 1))
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                at = i
        i += 1
    pieces.append((at, end) if depth == 0 else (end, end))
    return [(a, b) for a, b in pieces if b > a]


def comment_marker(path: str) -> str | None:
    """The line-comment marker of the file's language, when its suffix tells."""
    lower = path.lower()
    if lower.endswith(HASH_COMMENT_SUFFIXES):
        return "#"
    if lower.endswith(SLASH_COMMENT_SUFFIXES):
        return "//"
    return None


def code_spans(line: str, comment: str | None) -> list[tuple[int, int]]:
    """Character ranges of a line outside string literals and a trailing comment."""
    spans, start, quote, i = [], 0, "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote, start = "", i
                continue
        elif comment and line.startswith(comment, i):
            break
        elif ch in "'\"`":
            spans.append((start, i))
            quote = ch * 3 if line.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        i += 1
    if not quote:
        spans.append((start, i))
    return [(a, b) for a, b in spans if b > a]

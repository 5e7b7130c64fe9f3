"""Source text as tokens for the benches that draw edits from real files: names, numbers,
strings, comments and punctuation, in Python and in JavaScript/TypeScript, without a parser.

A scan this simple is enough to tell code from strings and comments and to pair brackets;
what a line means is each bench's own business. JavaScript's template literals are read
with their ``${…}`` substitutions as code (the literal's pieces around them are strings),
and a ``/`` where an operand is expected starts a regular expression, read as a string.
"""

from __future__ import annotations

import bisect
import keyword
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from benchmarks.rename_trees import MAX_FILE_BYTES, SUFFIXES


class Kind(Enum):
    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    COMMENT = "comment"
    PUNCT = "punctuation"


@dataclass(frozen=True)
class Dialect:
    """What the scan needs to know of a language."""

    label: str  # as the reports name it
    line_comment: str
    block_comments: bool
    string_start: re.Pattern[str]  # an opening quote, with any prefix
    templates: bool  # `…${code}…`
    regexes: bool  # /…/ literals
    keywords: frozenset[str]  # words that are never a variable's or a function's name
    values: frozenset[str]  # keywords that stand for a value (None, this…)
    value_statements: frozenset[str]  # keywords that start a statement ending in a value (return…)
    own_receivers: frozenset[str]  # the names a method calls its class's methods through


PYTHON = Dialect("Python", "#", False, re.compile(r"(?i:[rbuf]{0,2})('''|\"\"\"|'|\")"), False, False,
                 frozenset(keyword.kwlist), frozenset({"None", "True", "False"}), frozenset({"return"}),
                 frozenset({"self", "cls"}))
_SCRIPT_KEYWORDS = frozenset({
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
    "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof", "new", "return",
    "super", "switch", "this", "throw", "try", "typeof", "var", "void", "while", "with", "yield", "let",
    "static", "await", "enum", "null", "true", "false"})
SCRIPT = Dialect("JS/TS", "//", True, re.compile(r"'|\""), True, True, _SCRIPT_KEYWORDS,
                 frozenset({"this", "super", "null", "true", "false"}), frozenset({"return", "const", "let", "var"}),
                 frozenset({"this"}))
DIALECTS = {".py": PYTHON} | dict.fromkeys(SUFFIXES, SCRIPT)

# A `/` after these words starts a regular expression, not a division.
_BEFORE_REGEX = frozenset({"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                           "instanceof", "yield", "await"})
_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$]*")
_NUMBER = re.compile(r"(?:\d|\.\d)(?:[eE][+-]\d|[\w.])*")
_PUNCT = re.compile(r">>>=|\*\*=|//=|>>=|<<=|\.\.\.|===|!==|\*\*|//|==|!=|<=|>=|->|=>|:=|\+=|-=|\*=|/=|%="
                    r"|&=|\|=|\^=|&&|\|\||\?\?|\?\.|<<|>>|\+\+|--|[^\s\w]")
_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line breaks LSP counts
_SPACE = re.compile(r"[ \t\f\v\r\n]+")


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    start: int  # str offsets into the whole text
    end: int


@dataclass(frozen=True)
class Source:
    """A file's text, its tokens, and its lines as LSP counts them."""

    path: Path
    text: str
    dialect: Dialect
    tokens: tuple[Token, ...]
    line_starts: tuple[int, ...]

    def row(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset) - 1

    def column(self, offset: int) -> int:
        return offset - self.line_starts[self.row(offset)]

    def lines(self) -> list[str]:
        return lsp_lines(self.text)


def read_source(path: Path) -> Source | None:
    """The file read and scanned; None when it is no Python, JavaScript or TypeScript, is
    unreadable, or is longer than the server reads."""
    dialect = DIALECTS.get(path.suffix.lower())
    try:
        text = path.read_text(encoding="utf-8") if dialect is not None else ""
    except (OSError, UnicodeDecodeError):
        return None
    if dialect is None or not text or len(text.encode("utf-8")) > MAX_FILE_BYTES:
        return None
    return source_of(path, text, dialect)


def source_of(path: Path, text: str, dialect: Dialect) -> Source:
    starts = (0, *(match.end() for match in _NEWLINE.finditer(text)))
    return Source(path, text, dialect, tuple(tokens(text, dialect)), starts)


def lsp_lines(text: str) -> list[str]:
    """Every line with its line break, the breaks those LSP counts (\\r\\n, \\r, \\n)."""
    starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]
    ends = [*starts[1:], len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True) if a < b]


def source_files(folder: Path) -> list[Path]:
    """The Python, JavaScript and TypeScript files under ``folder`` (node_modules left out)."""
    return sorted(path for path in folder.rglob("*") if path.suffix.lower() in DIALECTS and path.is_file()
                  and "node_modules" not in path.parts)


def tokens(text: str, dialect: Dialect) -> list[Token]:
    found: list[Token] = []
    substitutions: list[int] = []  # for each open `${`, the braces opened inside it since
    i = 0
    while i < len(text):
        if space := _SPACE.match(text, i):
            i = space.end()
            continue
        start = i
        kind = Kind.PUNCT
        if text.startswith(dialect.line_comment, i):
            i, kind = _line_end(text, i), Kind.COMMENT
        elif dialect.block_comments and text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i, kind = (len(text) if close < 0 else close + 2), Kind.COMMENT
        elif quote := dialect.string_start.match(text, i):
            i, kind = _string_end(text, quote.end(), quote.group(quote.lastindex or 0)), Kind.STRING
        elif (dialect.templates and text[i] == "`") or (substitutions and text[i] == "}" and substitutions[-1] == 0):
            if text[i] == "}":
                substitutions.pop()
            i, opened = _template_end(text, i + 1)
            kind = Kind.STRING
            if opened:
                substitutions.append(0)
        elif dialect.regexes and text[i] == "/" and _operand_expected(found) and (end := _regex_end(text, i)):
            i, kind = end, Kind.STRING
        elif name := _NAME.match(text, i):
            i, kind = name.end(), Kind.NAME
        elif number := _NUMBER.match(text, i):
            i, kind = number.end(), Kind.NUMBER
        else:
            punct = _PUNCT.match(text, i)
            i = punct.end() if punct else i + 1
            if substitutions and text[start] in "{}":
                substitutions[-1] += 1 if text[start] == "{" else -1
        found.append(Token(kind, text[start:i], start, i))
    return found


def _line_end(text: str, i: int) -> int:
    newline = _NEWLINE.search(text, i)
    return len(text) if newline is None else newline.start()


def _string_end(text: str, i: int, quote: str) -> int:
    """Where the string whose body starts at ``i`` ends; a one-line string left open ends
    at its line's end, as a tokenizer recovers."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text.startswith(quote, i):
            return i + len(quote)
        elif len(quote) == 1 and text[i] in "\r\n":
            return i
        else:
            i += 1
    return len(text)


def _template_end(text: str, i: int) -> tuple[int, bool]:
    """Where a template literal's piece starting at ``i`` ends, and whether at a ``${``."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i + 1, False
        elif text.startswith("${", i):
            return i + 2, True
        else:
            i += 1
    return len(text), False


def _operand_expected(before: list[Token]) -> bool:
    code = [token for token in before[-3:] if token.kind is not Kind.COMMENT]
    if not code:
        return True
    last = code[-1]
    if last.kind is Kind.PUNCT:
        return last.text not in (")", "]", "}")
    return last.kind is Kind.NAME and last.text in _BEFORE_REGEX


def _regex_end(text: str, i: int) -> int | None:
    """The end of a ``/…/flags`` literal at ``i``, or None where the line ends first."""
    j, in_class = i + 1, False
    while j < len(text) and text[j] not in "\r\n":
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "/" and not in_class:
            flags = _NAME.match(text, j + 1)
            return j + 1 if flags is None else flags.end()
        in_class = (in_class or text[j] == "[") and text[j] != "]"
        j += 1
    return None


def matching_close(tokens: tuple[Token, ...], opening: int) -> int | None:
    """The index of the bracket closing the one at ``opening``; None if it never closes."""
    depth = 0
    for index in range(opening, len(tokens)):
        token = tokens[index]
        if token.kind is not Kind.PUNCT:
            continue
        if token.text in ("(", "[", "{"):
            depth += 1
        elif token.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return index
    return None

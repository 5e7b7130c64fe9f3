"""The document's line breaks and indentation, and the model's.

The model was trained on files decoded with universal newlines and indented with spaces
(the corpus's code is almost all PEP 8): it reads and writes ``\\n`` and four-space
indents. Given ``\\r\\n`` or tab indentation in its context it wrote other code, at other
indentations (e.g. `    else:` for `        sys.exit(1)` in a ``\\r\\n`` file, a
32-space line in a tab-indented one). So a request's text is put in the model's dialect
(``to_model``), and the answers are written back in the document's (``to_document``):
the cursor's line break, and tabs for its indentation when the lines around the cursor
are indented with tabs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Lines each side of the cursor that say how the document indents.
INDENT_SAMPLE_LINES = 40
TAB_WIDTH = 4  # the model's indent for one tab
_LEADING_INDENTS = re.compile(rf"(?m)^(?: {{{TAB_WIDTH}}})+")


def lf_breaks(text: str) -> str:
    """``text`` with ``\\r\\n`` written ``\\n``. Looking for ``\\r`` alone first: a
    search for two characters, one of them ``\\n``, took ~13 ms over 10 MB, this ~0.3."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def line_break_at(text: str, offset: int) -> str:
    """The document's line break at the cursor: the one that ends the cursor's line, or the
    last before it on the last line."""
    end = text.find("\n", offset)
    if end < 0:
        end = text.rfind("\n", 0, offset)
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def indented_with_tabs(text: str, offset: int) -> bool:
    """More of the indented lines around the cursor start with a tab than with a space."""
    start = end = offset
    for _ in range(INDENT_SAMPLE_LINES):  # found in place: a huge document is not split
        start = max(0, text.rfind("\n", 0, start))
        found = text.find("\n", end + 1)
        end = len(text) if found < 0 else found
    window = "\n" + text[start:end]
    return window.count("\n\t") > window.count("\n ")


def _tabs_as_spaces(text: str) -> str:
    """Each line's leading tabs written as ``TAB_WIDTH`` spaces each (deepest first, by
    ``str.replace``: a regular expression took ~0.5 s over a 10 MB document)."""
    if text.startswith("\t"):
        stripped = text.lstrip("\t")
        text = " " * (TAB_WIDTH * (len(text) - len(stripped))) + stripped
    depth = 0
    while "\n" + "\t" * (depth + 1) in text:
        depth += 1
    for level in range(depth, 0, -1):
        text = text.replace("\n" + "\t" * level, "\n" + " " * (TAB_WIDTH * level))
    return text


def _spaces_as_tabs(text: str) -> str:
    return _LEADING_INDENTS.sub(lambda match: "\t" * (len(match.group()) // TAB_WIDTH), text)


@dataclass(frozen=True)
class Dialect:
    """How a document writes what the model writes as ``\\n`` and four spaces."""

    line_break: str = "\n"
    tabs: bool = False

    @classmethod
    def at(cls, text: str, offset: int) -> Dialect:
        return cls(line_break_at(text, offset), indented_with_tabs(text, offset))

    def to_model(self, prefix: str, suffix: str) -> tuple[str, str]:
        """The text around the cursor as the model reads it."""
        prefix, suffix = lf_breaks(prefix), lf_breaks(suffix)
        if not self.tabs:
            return prefix, suffix
        line_start = prefix.rfind("\n") + 1
        in_indentation = not prefix[line_start:].strip(" \t")
        prefix = _tabs_as_spaces(prefix)
        if in_indentation:  # the cursor's line goes on with its indentation
            return prefix, _tabs_as_spaces(suffix)
        first, rest = suffix.split("\n", 1) if "\n" in suffix else (suffix, None)
        return prefix, first if rest is None else first + "\n" + _tabs_as_spaces(rest)

    def to_document(self, answer: str, model_prefix: str) -> str:
        """An answer written after ``model_prefix`` (``to_model``'s), in the document's dialect."""
        if self.tabs:
            line = model_prefix[model_prefix.rfind("\n") + 1:]
            # Its first line goes on from the cursor: indentation there only when the cursor
            # is in the line's indentation, at a whole number of indents.
            if not line.strip(" ") and len(line) % TAB_WIDTH == 0:
                answer = _spaces_as_tabs(answer)
            elif "\n" in answer:
                first, rest = answer.split("\n", 1)
                answer = first + "\n" + _spaces_as_tabs(rest)
        return answer if self.line_break == "\n" else answer.replace("\n", self.line_break)


MODEL_DIALECT = Dialect()  # the model's own: text in it is left as it is

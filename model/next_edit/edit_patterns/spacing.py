"""The ``spacing`` kind: the same words spaced anew (a formatter's sweep, by hand or replayed
hunk by hunk), spaced so wherever the same two words meet the same way.

A change whose words (tokens other than blanks) are all as they were, and whose only
difference is the blank between one pair of words, made the same way wherever it changed:
``[ ]`` → ``[]``, a stub's body joined to its header (``-> None:`` + line break + ``...`` →
``-> None: ...``), a continuation line indented anew. Other places where those two words
meet with the old blank get the new one. The blank is matched as it was, or, when it held a
line break, as any line break and indentation; a new blank holding a line break keeps the
new line's indentation relative to the line before it. The blank after a docstring's
opening quotes is respaced in every docstring, whatever its first word (pydocstyle's D210).

Replayed commits of packages in no corpus: the hunk after a blanks-only hunk
was blanks-only 62 times in 3,527 replays, mostly formatter sweeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from model.code_text import LINE_BREAK, line_start
from model.next_edit.edit_patterns.changes import SPACING, Change, PatternEdit
from model.next_edit.edit_patterns.one_line_rewrites import LONGEST_LINE, MAX_REWRITTEN_LINES
from model.next_edit.edit_patterns.text import indent_of, split_lines, tokens_of

# A line's indentation and a string prefix, up to a docstring's opening quotes.
_UP_TO_PREFIX = r"[ \t]*[rRuUbB]{0,2}"


@dataclass(frozen=True)
class _Respacing:
    left: str  # the word before the blank
    old: str  # the blank as it was
    new: str  # the blank as it is now
    right: str  # the word after it
    # A new blank with a line break: the new line's indentation minus the line's before it.
    new_indent: int = 0
    # ``left`` is a docstring's opening quotes, and any word after them will do.
    docstring: bool = False

    @property
    def breaks_old(self) -> bool:
        return LINE_BREAK.search(self.old) is not None

    def pattern(self) -> re.Pattern[str]:
        """The two words with the old blank between them, as whole words; the blank is group 1."""
        if self.docstring:  # at a line's start, then any word but the closing quotes
            return re.compile(r"(?m)^" + _UP_TO_PREFIX + re.escape(self.left)
                              + f"({re.escape(self.old)})" + r"""(?=[^\s"'])""")
        blank = rf"[ \t]*(?:{LINE_BREAK.pattern})[ \t]*" if self.breaks_old else re.escape(self.old)
        before = r"(?<![\w])" if self.left[:1].isalnum() or self.left[:1] == "_" else ""
        after = r"(?![\w])" if self.right[-1:].isalnum() or self.right[-1:] == "_" else ""
        return re.compile(before + re.escape(self.left) + f"({blank})" + re.escape(self.right) + after)


# A line up to a docstring's opening quotes (group 1).
_DOCSTRING_OPENING = re.compile(_UP_TO_PREFIX + r"""("{3}|'{3})""")


def _words_and_blanks(text: str) -> tuple[list[str], list[str], list[int]]:
    """The words of ``text``, the blank after each (the last word's: what ends the text)
    and where each starts."""
    words: list[str] = []
    blanks: list[str] = []
    starts: list[int] = []
    at = 0
    for token in tokens_of(text):
        if token.isspace():
            if words:
                blanks[-1] += token
        else:
            words.append(token)
            blanks.append("")
            starts.append(at)
        at += len(token)
    return words, blanks, starts


def as_respacing(old: str, new: str) -> _Respacing | None:
    """The one way the change spaced a pair of words anew, when it changed nothing else;
    not a line broken in two: Enter pressed in a line is typing, not a sweep, and other
    places where the same two words meet are no more to be broken (replayed commits:
    lines it broke elsewhere so were the next hunk 5 times in 15, lines joined 8 in 9)."""
    old_words, old_blanks, old_starts = _words_and_blanks(old)
    new_words, new_blanks, new_starts = _words_and_blanks(new)
    if not old_words or old_words != new_words:
        return None
    found: set[_Respacing] = set()
    for at in range(len(old_words) - 1):  # the blanks between words; the text's own end is the hunk's
        before, after = old_blanks[at], new_blanks[at]
        if before == after:
            continue
        if LINE_BREAK.search(after) and not LINE_BREAK.search(before):
            return None
        new_indent = 0
        if LINE_BREAK.search(after):
            new_indent = len(LINE_BREAK.split(after)[-1]) - indent_of(new[line_start(new, new_starts[at]):])
        opening = _DOCSTRING_OPENING.fullmatch(old, line_start(old, old_starts[at]), old_starts[at] + 1)
        if opening is not None and not LINE_BREAK.search(before):
            found.add(_Respacing(opening.group(1), before, after, "", docstring=True))
        else:
            found.add(_Respacing(old_words[at], before, after, old_words[at + 1], new_indent))
        if len(found) > 1:
            return None
    return found.pop() if found else None


def spacing_edits(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if not old_lines or not new_lines or max(len(old_lines), len(new_lines)) > MAX_REWRITTEN_LINES:
        return
    respacing = as_respacing(change.old_text, change.new_text)
    if respacing is None:
        return
    pattern = respacing.pattern()
    span = 2 if respacing.breaks_old else 1  # a blank with a line break joins a line to the next
    row = window.start
    while row < window.stop:
        rows = range(row, min(row + span, window.stop))
        text = "".join(lines[r] for r in rows)
        if any(r in edited for r in rows) or len(text) > LONGEST_LINE or respacing.left not in lines[row] \
                or pattern.search(text) is None:
            row += 1
            continue
        rewritten = pattern.sub(partial(_respaced, respacing, text), text)
        if rewritten != text:
            yield PatternEdit(row, rows.stop, rewritten, SPACING)
        row = rows.stop


def _respaced(respacing: _Respacing, text: str, match: re.Match[str]) -> str:
    return text[match.start():match.start(1)] + _new_blank(respacing, text, match) + text[match.end(1):match.end()]


def _new_blank(respacing: _Respacing, text: str, match: re.Match[str]) -> str:
    """The new blank at ``match``: with a line break, indented as the change indented its
    new line, relative to the line before it (in spaces, as a formatter writes them)."""
    if not LINE_BREAK.search(respacing.new):
        return respacing.new
    indent = indent_of(text[line_start(text, match.start()):]) + respacing.new_indent
    head = LINE_BREAK.split(respacing.new)[0]
    ending = LINE_BREAK.search(respacing.new)
    assert ending is not None
    return head + ending.group(0) + " " * max(0, indent)

"""The ``substitution`` and ``insertion`` kinds: one run of tokens replaced or inserted
in one line, made again on the other lines where it fits."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from model.next_edit.edit_patterns.changes import Change, PatternEdit
from model.next_edit.edit_patterns.text import split_lines, tokens_of

# Tokens on each side of a substituted run that must match as well. Replayed release diffs
# (proposals ≤ 30 lines below): 0 → 50% exact, 1 → 62%, 2 → 66% but a third fewer.
SUBSTITUTION_CONTEXT = 1
# Words or symbols on each side of an inserted run that must match as well (fewer at the
# line's edge). Replayed release diffs, near proposals right: 1 → 45 of 107,
# 2 → 44 of 73, 3 → 32 of 47.
INSERTION_CONTEXT = 2
# Lines longer than this are data, not code a sweep rewrites: the token-level patterns
# skip them (a 1 MB line took them ~0.5 s to read).
LONGEST_LINE = 5_000
# A change of more lines is not one rewrite repeated by hand (git's hunks hold up to six
# unchanged lines between changes; a sweep's hunk rarely more than a screen).
MAX_REWRITTEN_LINES = 60


# --- substitution -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Substitution:
    left: list[str]  # context tokens before the run
    run: list[str]  # the tokens replaced
    replacement: list[str]
    right: list[str]  # context tokens after the run

    @property
    def needle(self) -> str:
        return "".join(self.run)

    def apply(self, line: str) -> str:
        """``line`` with every occurrence of the run in the same context replaced."""
        tokens, size = tokens_of(line), len(self.run)
        out: list[str] = []
        at = 0
        while at < len(tokens):
            if tokens[at:at + size] == self.run and out[len(out) - len(self.left):] == self.left \
                    and tokens[at + size:at + size + len(self.right)] == self.right:
                out += self.replacement
                at += size
            else:
                out.append(tokens[at])
                at += 1
        return "".join(out)


def _common_ends(before: Sequence[str], after: Sequence[str]) -> tuple[int, int]:
    """How many tokens the two lines share at their start, and then at their end."""
    shortest = min(len(before), len(after))
    head = 0
    while head < shortest and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < shortest - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def as_substitution(old: str, new: str) -> _Substitution | None:
    """The one contiguous run of ``old``'s tokens that ``new`` replaced (common token prefix
    and suffix set aside), with ``SUBSTITUTION_CONTEXT`` tokens of context on each side."""
    before, after = tokens_of(old), tokens_of(new)
    head, tail = _common_ends(before, after)
    run, replacement = before[head:len(before) - tail], after[head:len(after) - tail]
    if not "".join(run).strip():  # pure insertions and whitespace changes say nothing about other lines
        return None
    left = before[max(0, head - SUBSTITUTION_CONTEXT):head]
    right = before[len(before) - tail:len(before) - tail + SUBSTITUTION_CONTEXT]
    return _Substitution(left, run, replacement, right)


class _OneLineRewrite(Protocol):
    """A rewrite read off one line's change, for the other lines: a substitution or an insertion."""

    @property
    def needle(self) -> str: ...  # text a line must hold for the rewrite to apply

    def apply(self, line: str) -> str: ...


def one_line_rewrite_edits(lines: list[str], change: Change, edited: range, window: range,
                       read: Callable[[str, str], _OneLineRewrite | None], kind: str) -> Iterable[PatternEdit]:
    """The rewrite ``read`` finds in a one-line change, at every other line it changes. A
    change of several lines counts when each line it changed got that same rewrite: a
    commit's hunk (or a tool's fix) that gave two nearby ``def`` lines ``-> None`` at once
    is one rewrite made twice."""
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != len(new_lines) or len(old_lines) > MAX_REWRITTEN_LINES:
        return
    rewrites = [read(old, new) for old, new in zip(old_lines, new_lines, strict=True) if old != new]
    rewrite = rewrites[0] if rewrites else None
    if rewrite is None or any(other != rewrite for other in rewrites[1:]):
        return
    needle = rewrite.needle
    for row in window:
        line = lines[row]
        if row in edited or len(line) > LONGEST_LINE or needle not in line:
            continue
        rewritten = rewrite.apply(line)
        if rewritten != line:
            yield PatternEdit(row, row + 1, rewritten, kind)


# --- insertion ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Insertion:
    first: str  # the edited line's first word: what a `def` line got, another `def` line gets
    left: tuple[str, ...]  # the tokens just before the insertion, back to a word or symbol
    inserted: tuple[str, ...]
    right: tuple[str, ...]  # the tokens just after it, up to a word or symbol

    @property
    def needle(self) -> str:
        return self.first

    def apply(self, line: str) -> str:
        """``line`` with the run inserted wherever the same tokens surround the same place."""
        tokens = tokens_of(line)
        if _first_word(tokens) != self.first:
            return line
        out: list[str] = []
        for at in range(len(tokens) + 1):
            if tuple(tokens[max(0, at - len(self.left)):at]) == self.left \
                    and tuple(tokens[at:at + len(self.right)]) == self.right \
                    and tuple(tokens[at:at + len(self.inserted)]) != self.inserted:
                out += self.inserted
            if at < len(tokens):
                out.append(tokens[at])
        return "".join(out)


def _first_word(tokens: Sequence[str]) -> str | None:
    return next((token for token in tokens if not token.isspace()), None)


def _context(tokens: Sequence[str]) -> tuple[str, ...] | None:
    """The tokens from the start of ``tokens`` up to and including the
    ``INSERTION_CONTEXT``-th that is not whitespace (fewer at the line's edge); None when
    there is none (the insertion sits at the line's edge)."""
    seen = 0
    for at, token in enumerate(tokens):
        seen += not token.isspace()
        if seen == INSERTION_CONTEXT:
            return tuple(tokens[:at + 1])
    return tuple(tokens) if seen else None


def as_insertion(old: str, new: str) -> _Insertion | None:
    """``new`` is ``old`` with one run of tokens inserted between two words or symbols
    (``def f(self):`` → ``def f(self) -> None:``, ``request)`` → ``request: Fixture)``)."""
    before, after = tokens_of(old), tokens_of(new)
    if len(after) <= len(before):
        return None
    head, tail = _common_ends(before, after)
    if head + tail != len(before):
        return None  # something was replaced too: a substitution's or another pattern's
    inserted = tuple(after[head:len(after) - tail])
    left, right = _context(before[:head][::-1]), _context(before[head:])
    first = _first_word(before)
    if not "".join(inserted).strip() or left is None or right is None or first is None:
        return None
    return _Insertion(first, left[::-1], inserted, right)

"""FIM from the file itself: the rest of a line that starts like the cursor's line.

Code repeats itself — ``self.assertEqual(``, keyword arguments, imports, dictionary keys —
so when what is typed on the cursor's line (at least ``MIN_TYPED`` characters after the
indentation) also starts other lines of the file, the rest of those lines is a candidate.
How often it is right depends on how those lines agree, so each kind of agreement is one
calibration bucket whose precision is measured on held-out code (``redraft calibrate``)
and becomes the candidate's confidence, as next-edit patterns do. On 3,000 held-out spans
of the training span mix: three or more lines agreeing were right 90% of the
time, two 69%, one 40%, a majority of disagreeing lines (with ≥ 8 typed characters) 34%;
a minority, or a rest that contradicts the text after the cursor, 3–13%, so those are
never proposed.

Projects repeat themselves across files too (imports, decorators, the same call in every
module), so when the file's own lines give nothing, the other files of the workspace
(``LineIndex``, their lines sorted so the ones starting with the typed text are one bisect
away) are asked the same question, with buckets of their own: there, one or two agreeing
lines or a majority are right often enough only after ``MIN_TYPED_FOR_WEAK_WORKSPACE``
typed characters (held-out packages: 2 right in 31 with fewer).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from heapq import merge
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from model.fim.run_index import RunIndex

MIN_TYPED = 3  # characters after the indentation
MIN_TYPED_FOR_MAJORITY = 8
LINES_ABOVE = 400
LINES_BELOW = 200
MAX_LINE_CHARS = 400

AGREE_3 = "copy_agree_3"  # three or more other lines, all with the same rest
AGREE_2 = "copy_agree_2"
AGREE_1 = "copy_agree_1"
MAJORITY = "copy_majority"  # lines disagree; at least half of them say this
FILE_KINDS = (AGREE_3, AGREE_2, AGREE_1, MAJORITY)
# The same agreements among the lines of the workspace's other files.
WORKSPACE_AGREE_3 = "copy_workspace_agree_3"
WORKSPACE_AGREE_2 = "copy_workspace_agree_2"
WORKSPACE_AGREE_1 = "copy_workspace_agree_1"
WORKSPACE_MAJORITY = "copy_workspace_majority"
WORKSPACE_KINDS = (WORKSPACE_AGREE_3, WORKSPACE_AGREE_2, WORKSPACE_AGREE_1, WORKSPACE_MAJORITY)
COPY_KINDS = FILE_KINDS + WORKSPACE_KINDS
MIN_TYPED_FOR_WEAK_WORKSPACE = 8
# Lines of other files read per request: more matches than this never agree anyway, and
# the scan must stay well under a millisecond.
MAX_WORKSPACE_MATCHES = 2000


@dataclass(frozen=True)
class CopiedLine:
    text: str  # what to insert at the cursor
    kind: str  # the calibration bucket (COPY_KINDS)


class LineIndex:
    """The stripped lines of some files, sorted: the lines that start with a given text are
    a contiguous run, found by bisection.

    Sorting a large workspace takes a good fraction of a second (holding the GIL), too long
    to redo on every save, so ``updated`` keeps the sorted base and lists the changed files'
    lines beside it; the owner rebuilds once many files have changed. Never changed once
    built (``updated`` returns a new index that shares the base), so any thread may read it."""

    def __init__(self, files: Mapping[str, str] | None = None) -> None:
        # File by file, then merged: one sort of everything would hold the GIL throughout,
        # stalling the server's other threads; small sorts and a merge let them in.
        # The (line, owner) pairs are made lazily: a list of them doubled the peak memory.
        by_file = [(owner, sorted(_stripped_lines(text.split("\n")))) for owner, text in (files or {}).items()]
        self._lines: list[str] = []
        self._owners: list[str] = []
        for line, owner in merge(*(_owned(lines, owner) for owner, lines in by_file)):
            self._lines.append(line)
            self._owners.append(owner)
        self._changed: dict[str, list[str]] = {}  # files changed since the sort: their sorted lines now

    @property
    def changed_files(self) -> int:
        return len(self._changed)

    def updated(self, owner: str, text: str | None) -> LineIndex:
        """This index with ``owner``'s lines replaced by ``text``'s (None: without the file)."""
        index = LineIndex()
        index._lines, index._owners = self._lines, self._owners
        index._changed = {**self._changed, owner: sorted(_stripped_lines(text.split("\n"))) if text else []}
        return index

    def rests(self, typed: str, skip: str | None = None) -> Counter[str] | None:
        """How often each rest follows ``typed`` at the start of a line, leaving out the
        file ``skip``; None when more lines match than are worth reading."""
        rests: Counter[str] = Counter()
        budget = MAX_WORKSPACE_MATCHES
        runs = [(self._lines, self._owners)] + [(lines, None) for owner, lines in self._changed.items()
                                                if owner != skip]
        for lines, owners in runs:
            at = bisect_left(lines, typed)
            while at < len(lines) and lines[at].startswith(typed):
                budget -= 1
                if budget < 0:
                    return None  # too many to read
                if len(lines[at]) > len(typed) and (
                        owners is None or (owners[at] != skip and owners[at] not in self._changed)):
                    rests[lines[at][len(typed):]] += 1
                at += 1
        return rests


@dataclass(frozen=True)
class RelatedLines:
    """Where to look for copies beyond the file: the workspace's other files."""

    index: LineIndex
    skip: str | None = None  # the document's own file: its saved text is not another file
    runs: RunIndex | None = None  # their runs of tokens, for line continuations (run_index.py)


def _owned(lines: list[str], owner: str) -> Iterator[tuple[str, str]]:
    return ((line, owner) for line in lines)


def _stripped_lines(lines: Iterable[str]) -> Iterable[str]:
    return (stripped for line in lines if 0 < len(stripped := line.strip()) <= MAX_LINE_CHARS)


def _typed(prefix: str) -> str | None:
    """What is typed on the cursor's line after the indentation, if enough to match on."""
    typed = prefix[prefix.rfind("\n") + 1:].lstrip()
    return typed if MIN_TYPED <= len(typed) <= MAX_LINE_CHARS else None


def copy_candidate(prefix: str, suffix: str, related: RelatedLines | None = None) -> CopiedLine | None:
    """The rest of the other lines that start with the cursor line's typed text, if any
    bucket covers how they agree: the file's own lines first, then ``related``'s."""
    typed = _typed(prefix)
    if typed is None:
        return None
    # rsplit/split with a bound: a huge document is not split whole on every keystroke.
    above = prefix.rsplit("\n", LINES_ABOVE + 1)[-LINES_ABOVE - 1:-1]
    below = suffix.split("\n", LINES_BELOW + 1)[1:LINES_BELOW + 1]
    near = [line for line in (*above, *below) if typed in line]  # cheap: few lines hold it at all
    rests = Counter(line[len(typed):] for line in _stripped_lines(near)
                    if len(line) > len(typed) and line.startswith(typed))
    copied = _agreed(rests, typed, suffix, FILE_KINDS, MIN_TYPED)
    if copied is None and related is not None:
        workspace_rests = related.index.rests(typed, related.skip)
        if workspace_rests:
            copied = _agreed(workspace_rests, typed, suffix, WORKSPACE_KINDS, MIN_TYPED_FOR_WEAK_WORKSPACE)
    return copied


def before_text_after_cursor(rest: str, after_cursor: str) -> str | None:
    """``rest`` (a candidate for the rest of the line) without the text already after the
    cursor on the line, which must be how it ends; None when it isn't, or nothing but
    blanks is left to insert."""
    after = after_cursor.rstrip()
    if after:
        if not rest.endswith(after) or rest == after:
            return None
        rest = rest[: len(rest) - len(after)]
    return rest if rest.strip() else None


def _agreed(
    rests: Counter[str], typed: str, suffix: str, kinds: tuple[str, str, str, str], min_typed_for_weak: int
) -> CopiedLine | None:
    """The most common rest and its bucket among ``kinds`` (agree ×3+, ×2, ×1, majority);
    all but the first need ``min_typed_for_weak`` typed characters, a majority also
    ``MIN_TYPED_FOR_MAJORITY``."""
    if not rests:
        return None
    rest, count = rests.most_common(1)[0]
    line_end = suffix.find("\n")
    cut = before_text_after_cursor(rest, suffix if line_end < 0 else suffix[:line_end])
    if cut is None:
        return None
    rest = cut
    agree_3, agree_2, agree_1, majority = kinds
    if len(rests) == 1 and count >= 3:
        kind = agree_3
    elif len(typed) < min_typed_for_weak:
        return None
    elif len(rests) == 1:
        kind = agree_2 if count == 2 else agree_1
    elif 2 * count >= sum(rests.values()) and len(typed) >= max(MIN_TYPED_FOR_MAJORITY, min_typed_for_weak):
        kind = majority
    else:
        return None
    return CopiedLine(rest, kind)

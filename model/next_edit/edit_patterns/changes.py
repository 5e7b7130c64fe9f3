"""What a change is and what a pattern proposes: ``Change``, ``PatternEdit``, the kinds'
names and the calibration buckets their proposals fall in."""

from __future__ import annotations

from dataclasses import dataclass

RENAME = "rename"
CALL_SITE = "call_site"
SAME_LINE = "same_line"
SUBSTITUTION = "substitution"
BUILTIN_GENERIC = "builtin_generic"
INSERTION = "insertion"
KINDS = (RENAME, CALL_SITE, SAME_LINE, SUBSTITUTION, BUILTIN_GENERIC, INSERTION)
NEAR_LINES = 30
# A proposal's bucket is its kind and its distance from the change, above or below alike:
# release diffs replayed both ways (session 18) gave "near" 52-63% above and 50-61% below,
# "far" 19-41% above and 21-35% below.
CALIBRATION_KEYS = tuple(f"{kind}:{where}" for kind in KINDS for where in ("near", "far"))
# Keystroke events on one line are chained into one change when they follow each other.
MAX_CHAIN = 64


@dataclass(frozen=True)
class Change:
    """One edit of the current document: whole lines ``old_text`` at ``start_line`` became ``new_text``."""

    start_line: int
    old_text: str
    new_text: str


@dataclass(frozen=True)
class PatternEdit:
    start_line: int  # lines [start_line, end_line) of the document are replaced by new_text
    end_line: int
    new_text: str
    kind: str
    lines_away: int = 0  # from the change: positive below it, negative above
    # A rename carried through the function around the change: every use in it is "near",
    # however long the function (the uses of one name are one edit to a person).
    in_function: bool = False

    @property
    def calibration_key(self) -> str:
        """The bucket whose measured precision is this edit's confidence."""
        near = abs(self.lines_away) <= NEAR_LINES or self.in_function
        return f"{self.kind}:{'near' if near else 'far'}"

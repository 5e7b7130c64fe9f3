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
SPACING = "spacing"
QUOTES = "quotes"
PYTHON3_IDIOM = "python3_idiom"
ANNOTATION = "annotation"
REPEATED_LINE = "repeated_line"
KINDS = (RENAME, CALL_SITE, SAME_LINE, SUBSTITUTION, BUILTIN_GENERIC, INSERTION, SPACING, QUOTES,
         PYTHON3_IDIOM, ANNOTATION, REPEATED_LINE)
NEAR_LINES = 30
# A proposal's bucket is its kind and its distance from the change, above or below alike:
# release diffs replayed both ways gave "near" 52-63% above and 50-61% below,
# "far" 19-41% above and 21-35% below. A proposal made when the newest
# change repeats the one before it (``repeats_previous``) has a bucket of its own too:
# replayed, near ones were right 70-79% of the time where the others were 40-63%.
# The bucket without "again" still pools every proposal of its kind and distance, so a
# first step (a twin line deleted, an argument added, the edits #3 names) keeps the
# confidence it had; a repeated one is raised, or lowered, to its own. Not for a rename:
# its far uses, once repeated, would outrank its near ones. Nor for the sweeps: spacing
# replaces no tokens, so no change of it is told to repeat the one before, and a requoting
# or a Python 3 idiom or an annotated def is one sweep whether or not the change before it
# was (split, the idioms' "again" buckets came out below their others, few cases shrunk
# towards 0).
AGAIN = "again"
UNSPLIT_KEYS = frozenset(f"{kind}:{where}" for kind in (RENAME, SPACING, QUOTES, PYTHON3_IDIOM, ANNOTATION)
                         for where in ("near", "far"))
BASE_KEYS = tuple(f"{kind}:{where}" for kind in KINDS for where in ("near", "far"))
CALIBRATION_KEYS = BASE_KEYS + tuple(f"{key}:{AGAIN}" for key in BASE_KEYS if key not in UNSPLIT_KEYS)
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
    again: bool = False  # the newest change repeated the one before it (or made one change on several lines)

    @property
    def base_key(self) -> str:
        near = abs(self.lines_away) <= NEAR_LINES or self.in_function
        return f"{self.kind}:{'near' if near else 'far'}"

    @property
    def calibration_key(self) -> str:
        """The bucket whose measured precision is this edit's confidence."""
        base = self.base_key
        return f"{base}:{AGAIN}" if self.again and base not in UNSPLIT_KEYS else base

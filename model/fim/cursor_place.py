"""Where on its line the cursor stands, as the shown-precision maps read it.

The same confidence means different odds of being right at different places: the rest of
a span inside a line is pinned by what follows it on the line, a line's end has only the
line's start to go on, and an empty line may be any statement. The place is a property of
the request, not of a candidate, so a map that reads it stays increasing in each candidate's
confidence (``shown_calibration.py``: thresholds on a source's own confidence stay exact).
"""

from __future__ import annotations

INSIDE = "inside"  # code after the cursor on its line: the answer is a span within the line
END = "end"  # code before the cursor only: the rest of the line
EMPTY = "empty"  # nothing but indentation on the line: a new line, or a block
PLACES = (INSIDE, END, EMPTY)


def place_of(prefix: str, suffix: str) -> str:
    line_end = suffix.find("\n")
    if suffix[:line_end if line_end >= 0 else len(suffix)].strip():
        return INSIDE
    return END if prefix[prefix.rfind("\n") + 1:].strip() else EMPTY

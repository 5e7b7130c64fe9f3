"""FIM from the file itself: the rest of a line that starts like the cursor's line.

Code repeats itself — ``self.assertEqual(``, keyword arguments, imports, dictionary keys —
so when what is typed on the cursor's line (at least ``MIN_TYPED`` characters after the
indentation) also starts other lines of the file, the rest of those lines is a candidate.
How often it is right depends on how those lines agree, so each kind of agreement is one
calibration bucket whose precision is measured on held-out code (``redraft calibrate``)
and becomes the candidate's confidence, as next-edit patterns do. On 3,000 held-out spans
of the training span mix (session 8): three or more lines agreeing were right 90% of the
time, two 69%, one 40%, a majority of disagreeing lines (with ≥ 8 typed characters) 34%;
a minority, or a rest that contradicts the text after the cursor, 3–13%, so those are
never proposed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

MIN_TYPED = 3  # characters after the indentation
MIN_TYPED_FOR_MAJORITY = 8
LINES_ABOVE = 400
LINES_BELOW = 200
MAX_LINE_CHARS = 400

AGREE_3 = "copy_agree_3"  # three or more other lines, all with the same rest
AGREE_2 = "copy_agree_2"
AGREE_1 = "copy_agree_1"
MAJORITY = "copy_majority"  # lines disagree; at least half of them say this
COPY_KINDS = (AGREE_3, AGREE_2, AGREE_1, MAJORITY)


@dataclass(frozen=True)
class CopiedLine:
    text: str  # what to insert at the cursor
    kind: str  # the calibration bucket (COPY_KINDS)


def copy_candidate(prefix: str, suffix: str) -> CopiedLine | None:
    """The rest of the other lines that start with the cursor line's typed text, if any
    bucket covers how they agree."""
    typed = prefix[prefix.rfind("\n") + 1:].lstrip()
    if len(typed) < MIN_TYPED or len(typed) > MAX_LINE_CHARS:
        return None
    above = prefix[: len(prefix) - len(typed)].split("\n")[-LINES_ABOVE - 1:-1]
    below = suffix.split("\n")[1:LINES_BELOW + 1]
    rests = Counter(
        stripped[len(typed):]
        for line in (*above, *below)
        if len(stripped := line.strip()) > len(typed) and len(stripped) <= MAX_LINE_CHARS
        and stripped.startswith(typed)
    )
    if not rests:
        return None
    rest, count = rests.most_common(1)[0]
    after = suffix.split("\n", 1)[0].rstrip()
    if after:  # the text after the cursor must be the end of the copied rest
        if not rest.endswith(after) or rest == after:
            return None
        rest = rest[: len(rest) - len(after)]
    if not rest.strip():
        return None
    if len(rests) == 1:
        kind = AGREE_3 if count >= 3 else AGREE_2 if count == 2 else AGREE_1
    elif 2 * count >= sum(rests.values()) and len(typed) >= MIN_TYPED_FOR_MAJORITY:
        kind = MAJORITY
    else:
        return None
    return CopiedLine(rest, kind)

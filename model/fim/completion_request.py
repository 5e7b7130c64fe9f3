"""What a FIM request asks for and what it gets back: the request, its candidates, and
the limits every source of candidates shares."""

from __future__ import annotations

from dataclasses import dataclass, field

from model.fim.cursor_place import place_of
from model.fim.fim_patterns import RelatedLines
from model.fim.shown_calibration import ShownAt
from model.languages import PYTHON, Language
from model.sampler import CommitRule


@dataclass(frozen=True)
class Candidate:
    text: str
    confidence: float  # in [0, 1]; calibrated later, a probability-like score for now
    steps: int  # denoising steps (forward passes over the canvas)
    tokens: int  # committed tokens up to end-of-middle
    trace: list[str] = field(default_factory=list)  # intermediate states, when asked for
    features: list[float] = field(default_factory=list)  # what the calibrator reads
    # The copied-line bucket (fim_patterns.py), line_continuation.KIND, phrase_table.KIND or
    # left_to_right.KIND: where a candidate not denoised on the canvas came from.
    copied: str = ""


@dataclass(frozen=True)
class CompletionRequest:
    prefix: str
    suffix: str
    candidates: int = 1
    canvas_size: int = 32
    threshold: float = 0.9
    max_steps: int = 32
    rule: CommitRule = CommitRule.THRESHOLD
    keep_trace: bool = False
    length_first: bool = True  # decide where the middle ends in the first pass (sampler.py)
    freeze_tail: bool = True  # passes after the end is placed stop at it (sampler.py)
    # Also offer the rest of a line that starts like this one (fim_patterns.py) or, when
    # there is none, the cursor's line continued as its last tokens continue elsewhere
    # in the file (line_continuation.py) or in the training code (phrase_table.py).
    copy_lines: bool = True
    # Also offer the line written left to right by the next-token head (left_to_right.py),
    # once calibrated.
    left_to_right: bool = True
    related: RelatedLines | None = None  # the workspace's other files, for copies the file can't give
    # The server's threshold: then only which side of it a candidate falls matters, and
    # the parse check (~1.6 ms a request) is skipped when it can't change what is shown.
    # None (calibration, the CLI): every candidate's exact confidence is wanted.
    min_confidence: float | None = None
    # The document's language: its parser says whether a candidate's statement parses.
    language: Language = PYTHON
    # Drop a candidate that repeats a line the document has next to the cursor or a top-level
    # definition (suffix_overlap.py), which may leave none; False: the network's answer as
    # it is, always one (benchmarks and calibration of the network alone).
    drop_repeats: bool = True
    # Also offer a block of several lines where a body is expected (block_candidates.py),
    # once its language family's block calibrator is fitted.
    blocks: bool = True

    @property
    def shown_at(self) -> ShownAt:
        """What the shown-precision maps read of this request (``shown_calibration.py``)."""
        return ShownAt(self.language.family, place_of(self.prefix, self.suffix))


class Cancelled(Exception):
    """The caller asked to stop between denoising steps."""


# Passes the server allows an as-you-type (Automatic) request: its ``automaticMaxSteps``
# default (lsp_server/options.py). Calibration decodes this way too, so each calibrator is
# fitted on features of the decode it scores when served.
AS_YOU_TYPE_MAX_STEPS = 1
MAX_CONFIDENCE = 0.999  # a model's score is never certainty; threshold 1.0 shows nothing


def merged(candidates: list[Candidate], patterned: list[Candidate]) -> list[Candidate]:
    """``candidates`` and ``patterned`` (copies, continuations, the head's line), one per
    text: the more confident where two write the same."""
    kept = list(candidates)
    for pattern in patterned:
        kept = [c for c in kept if c.text != pattern.text or c.confidence > pattern.confidence]
        if all(c.text != pattern.text for c in kept):
            kept.append(pattern)
    return kept

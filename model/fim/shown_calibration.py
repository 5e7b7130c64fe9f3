"""The precision of what is shown: each source's confidence recalibrated where it wins.

Each FIM source (the canvas, copied lines, continuations, phrases, the head's lines) has a
calibrator fitted on every held-out span where it offers an answer. The server shows only
the most confident candidate, though, and a source wins most often where the others are
unsure: harder spans, where it is right less often than its own calibrator says. Session
38: the canvas's own calibrator, refitted on the one-pass decode, added 14 shown answers
to 1,000 spans of packages in no corpus at threshold 0.3, and 1 right one.

So the winner's confidence is mapped once more, per source, by a logistic fit of whether
it was right on its logit (Platt scaling), fitted on the winners of held-out spans
completed as the server completes them. The map is increasing, so it keeps each source's
own order, and a threshold on the mapped confidence is a threshold on the source's own
(``source_threshold``): the server's early exits (parse checks skipped, the beam search
pruned) stay exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from model.fim.calibration import fit, squashed
from model.fim.fim_patterns import COPY_KINDS

CONFIG_KEY = "fim_shown"  # in config.json's calibration
CANVAS = "canvas"  # the network's own answer (Candidate.copied "")
COPY = "copy"  # every copied-line bucket: one map over their measured precisions
MIN_WINS = 40  # fewer wins than this (or a fit that isn't increasing) leaves a source as it is
_EDGE = 1e-6


def source_of(copied: str) -> str:
    """A candidate's source, from its ``Candidate.copied``."""
    if not copied:
        return CANVAS
    return COPY if copied in COPY_KINDS else copied


def _logit(probability: float) -> float:
    p = min(1 - _EDGE, max(_EDGE, probability))
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class Recalibration:
    """``confidence → σ(slope · logit(confidence) + intercept)``, slope > 0."""

    slope: float
    intercept: float

    def __call__(self, confidence: float) -> float:
        return squashed(self.slope * _logit(confidence) + self.intercept)

    def inverse(self, shown: float) -> float:
        """The source's own confidence that maps to ``shown``."""
        return squashed((_logit(shown) - self.intercept) / self.slope)


@dataclass(frozen=True)
class ShownCalibration:
    by_source: dict[str, Recalibration] = field(default_factory=dict)

    def confidence(self, source: str, confidence: float) -> float:
        recalibration = self.by_source.get(source)
        return confidence if recalibration is None else recalibration(confidence)

    def source_threshold(self, source: str, threshold: float | None) -> float | None:
        """The source's own confidence at which it reaches ``threshold`` once mapped."""
        recalibration = self.by_source.get(source)
        if recalibration is None or threshold is None or threshold <= 0.0:
            return threshold
        return recalibration.inverse(threshold) if threshold < 1.0 else 1.0

    def to_dict(self) -> dict[str, object]:
        return {source: {"slope": r.slope, "intercept": r.intercept} for source, r in self.by_source.items()}

    @classmethod
    def from_dict(cls, raw: object) -> ShownCalibration:
        """The stored maps; a missing or malformed entry maps nothing."""
        if not isinstance(raw, dict):
            return cls()
        maps = {}
        for source, entry in raw.items():
            if not isinstance(entry, dict):
                continue
            slope, intercept = entry.get("slope"), entry.get("intercept")
            if isinstance(slope, int | float) and isinstance(intercept, int | float) and slope > 0:
                maps[str(source)] = Recalibration(float(slope), float(intercept))
        return cls(maps)


@dataclass(frozen=True)
class Win:
    """The candidate shown for one held-out span: its source, its confidence, and whether it was right."""

    source: str
    confidence: float
    right: bool


def fit_shown(wins: Sequence[Win]) -> ShownCalibration:
    """Each source's map, fitted on the spans it won; a source with fewer than ``MIN_WINS``
    wins, only one outcome, or a fit that does not increase keeps its own confidence."""
    maps = {}
    for source in sorted({w.source for w in wins}):
        own = [w for w in wins if w.source == source]
        outcomes = {w.right for w in own}
        if len(own) < MIN_WINS or len(outcomes) < 2:
            continue
        fitted = fit([[_logit(w.confidence)] for w in own], [w.right for w in own])
        if fitted.weights[0] > 0:
            maps[source] = Recalibration(fitted.weights[0], fitted.bias)
    return ShownCalibration(maps)

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
from model.fim.cursor_place import PLACES
from model.fim.fim_patterns import COPY_KINDS

CONFIG_KEY = "fim_shown"  # in config.json's calibration
CANVAS = "canvas"  # the network's own answer (Candidate.copied "")
COPY = "copy"  # every copied-line bucket: one map over their measured precisions
FAMILIES_KEY = "languages"  # the other language families' maps, beside Python's
PYTHON_FAMILY = "python"
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
    """``confidence → σ(slope · logit(confidence) + intercept + offset of the cursor's
    place)``, slope > 0: increasing in the confidence at every place."""

    slope: float
    intercept: float
    places: dict[str, float] = field(default_factory=dict)  # cursor_place.py's places; absent: 0

    def __call__(self, confidence: float, place: str = "") -> float:
        return squashed(self.slope * _logit(confidence) + self.intercept + self.places.get(place, 0.0))

    def inverse(self, shown: float, place: str = "") -> float:
        """The source's own confidence that maps to ``shown`` at ``place``."""
        return squashed((_logit(shown) - self.intercept - self.places.get(place, 0.0)) / self.slope)

    def to_dict(self) -> dict[str, object]:
        entry: dict[str, object] = {"slope": self.slope, "intercept": self.intercept}
        if self.places:
            entry["places"] = dict(self.places)
        return entry

    @classmethod
    def from_dict(cls, entry: object) -> Recalibration | None:
        if not isinstance(entry, dict):
            return None
        slope, intercept, places = entry.get("slope"), entry.get("intercept"), entry.get("places", {})
        if not (isinstance(slope, int | float) and isinstance(intercept, int | float) and slope > 0
                and isinstance(places, dict)):
            return None
        return cls(float(slope), float(intercept),
                   {str(k): float(v) for k, v in places.items() if isinstance(v, int | float)})


@dataclass(frozen=True)
class ShownAt:
    """What the maps read of a request: its language family and the cursor's place."""

    family: str = PYTHON_FAMILY
    place: str = ""


PYTHON_AT = ShownAt()


@dataclass(frozen=True)
class ShownCalibration:
    by_source: dict[str, Recalibration] = field(default_factory=dict)  # Python's, and the fallback
    # Other language families' maps (JavaScript and TypeScript are one): fitted on their own
    # held-out code, since a confidence fitted on Python means less there.
    by_family: dict[str, dict[str, Recalibration]] = field(default_factory=dict)

    def _map(self, source: str, at: ShownAt) -> Recalibration | None:
        family = self.by_family.get(at.family)
        if family is not None:
            return family.get(source)
        return self.by_source.get(source)

    def confidence(self, source: str, confidence: float, at: ShownAt = PYTHON_AT) -> float:
        recalibration = self._map(source, at)
        return confidence if recalibration is None else recalibration(confidence, at.place)

    def source_threshold(self, source: str, threshold: float | None, at: ShownAt = PYTHON_AT) -> float | None:
        """The source's own confidence at which it reaches ``threshold`` once mapped."""
        recalibration = self._map(source, at)
        if recalibration is None or threshold is None or threshold <= 0.0:
            return threshold
        return recalibration.inverse(threshold, at.place) if threshold < 1.0 else 1.0

    def to_dict(self) -> dict[str, object]:
        stored: dict[str, object] = {source: r.to_dict() for source, r in self.by_source.items()}
        if self.by_family:
            stored[FAMILIES_KEY] = {family: {source: r.to_dict() for source, r in maps.items()}
                                    for family, maps in self.by_family.items()}
        return stored

    @classmethod
    def from_dict(cls, raw: object) -> ShownCalibration:
        """The stored maps; a missing or malformed entry maps nothing."""
        if not isinstance(raw, dict):
            return cls()
        families = raw.get(FAMILIES_KEY, {})
        by_family = {str(family): _maps(entries) for family, entries in families.items()} \
            if isinstance(families, dict) else {}
        return cls(_maps({k: v for k, v in raw.items() if k != FAMILIES_KEY}), by_family)


def _maps(entries: object) -> dict[str, Recalibration]:
    if not isinstance(entries, dict):
        return {}
    found = {str(source): Recalibration.from_dict(entry) for source, entry in entries.items()}
    return {source: r for source, r in found.items() if r is not None}


@dataclass(frozen=True)
class Win:
    """The candidate shown for one held-out span: its source, its confidence, whether it was
    right, and where: the request's family and place, and the package it was cut from
    (maps are judged on packages they were not fitted on)."""

    source: str
    confidence: float
    right: bool
    at: ShownAt = PYTHON_AT
    package: str = ""


def fit_maps(wins: Sequence[Win]) -> dict[str, Recalibration]:
    """Each source's map, fitted on the spans it won, with an offset for each cursor place
    seen (the first place in ``PLACES`` order is the baseline); a source with fewer than
    ``MIN_WINS`` wins, only one outcome, or a fit that does not increase keeps its own
    confidence."""
    maps = {}
    for source in sorted({w.source for w in wins}):
        own = [w for w in wins if w.source == source]
        if len(own) < MIN_WINS or len({w.right for w in own}) < 2:
            continue
        places = [p for p in PLACES if any(w.at.place == p for w in own)][1:]
        rows = [[_logit(w.confidence), *(float(w.at.place == p) for p in places)] for w in own]
        fitted = fit(rows, [w.right for w in own])
        if fitted.weights[0] > 0:
            maps[source] = Recalibration(fitted.weights[0], fitted.bias, dict(zip(places, fitted.weights[1:],
                                                                                strict=True)))
    return maps


def fit_shown(wins: Sequence[Win]) -> ShownCalibration:
    """The maps of each language family, fitted on its own wins (Python's are the fallback)."""
    families = sorted({w.at.family for w in wins})
    by_family = {family: fit_maps([w for w in wins if w.at.family == family])
                 for family in families if family != PYTHON_FAMILY}
    return ShownCalibration(fit_maps([w for w in wins if w.at.family == PYTHON_FAMILY]), by_family)


def leave_package_out(wins: Sequence[Win]) -> list[float]:
    """Each win's confidence mapped by maps fitted on the other packages' wins: how the
    maps do on code they never saw (what a user's own code is)."""
    mapped = [0.0] * len(wins)
    for package in sorted({w.package for w in wins}):
        shown = fit_shown([w for w in wins if w.package != package])
        for index, win in enumerate(wins):
            if win.package == package:
                mapped[index] = shown.confidence(win.source, win.confidence, win.at)
    return mapped

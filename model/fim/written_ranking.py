"""How the server ranks the lines the next-token head's beam search writes
(``left_to_right.py``): by their calibrated confidence, not the beam's score, which also
prunes the search."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from model.fim.calibration import Calibrator, parse_checked
from model.fim.completion_request import MAX_CONFIDENCE, CompletionRequest
from model.fim.left_to_right import PARSES as LEFT_TO_RIGHT_PARSES
from model.fim.left_to_right import LineRanking, Written, best_reachable
from model.languages.statement import UNKNOWN_PARSE, StatementCheck


@dataclass
class ByConfidence:
    """The server's ranking of the lines the head writes (``left_to_right.LineRanking``):
    their calibrated confidence. A line being written could at best become one the canvas
    or another source (``other_texts``) also writes, if it is still a start of one."""

    check: Calibrator
    request: CompletionRequest
    threshold: float | None  # the server's, on this source's own confidence
    statement: StatementCheck
    network_text: str
    other_texts: list[str]
    # Each finished text's parse check, once measured: the same text written with other
    # tokens has other log-probabilities, but parses the same.
    parsed: dict[str, float] = field(default_factory=dict)

    @property
    def floor(self) -> float:
        return -math.inf if self.threshold is None else self.threshold

    def features(self, written: Written) -> list[float]:
        values = written.features(self.network_text, self.parsed.get(written.text, UNKNOWN_PARSE), self.other_texts)
        if written.text in self.parsed:
            return values
        values = parse_checked(self.check, values, LEFT_TO_RIGHT_PARSES, self.threshold,
                               self.statement, written.text)
        if values[LEFT_TO_RIGHT_PARSES] != UNKNOWN_PARSE:
            self.parsed[written.text] = values[LEFT_TO_RIGHT_PARSES]
        return values

    def value(self, written: Written) -> float:
        return min(MAX_CONFIDENCE, self.check(self.features(written)))

    def bounds(self, written: Written) -> tuple[float, float]:
        """Whatever the parse check would say (``value`` lies between: an unknown parse is
        scored between a failed and a passed one)."""
        if written.text in self.parsed:
            value = self.value(written)
            return value, value
        values = written.features(self.network_text, UNKNOWN_PARSE, self.other_texts)
        low, high = self.check.with_either_parse(values, LEFT_TO_RIGHT_PARSES)
        return min(MAX_CONFIDENCE, low), min(MAX_CONFIDENCE, high)

    @cached_property
    def _becomes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What a line could still become the canvas's / another source's text as: the text,
        or the text and the rest of the cursor's line (found once, not on every beam's token)."""
        rest = self.request.suffix.partition("\n")[0]
        return ((self.network_text, self.network_text + rest),
                tuple(t for text in self.other_texts for t in (text, text + rest)))

    def reachable(self, log_probs: list[float], line: str) -> float:
        canvas, others = self._becomes
        agreeable = any(text.startswith(line) for text in canvas)
        elsewhere = any(text.startswith(line) for text in others)
        return best_reachable(self.check, log_probs, agreeable, elsewhere)


def most_confident(lines: list[Written], ranking: LineRanking, count: int) -> list[Written]:
    """The ``count`` lines of highest ``ranking.value``, measuring a line's exact value (its
    parse check, ~1.3 ms) only while the most it could get would still place it."""
    bounded = sorted(((ranking.bounds(line)[1], order, line) for order, line in enumerate(lines)),
                     key=lambda item: (-item[0], item[1]))
    valued: list[tuple[float, int, Written]] = []
    for high, order, line in bounded:
        if len(valued) >= count and valued[count - 1][0] >= high:
            break
        valued.append((ranking.value(line), order, line))
        valued.sort(key=lambda item: (-item[0], item[1]))
    return [line for _, _, line in valued[:count]]

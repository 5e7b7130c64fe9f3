"""Answers that need no model call: type-through of the shown suggestion, and an LRU of
recent results.

Type-through: while the user types exactly the characters the shown suggestion begins
with, the rest of it is still the answer. The LRU catches the cursor coming back to a
place already asked about (undo, moving back and forth).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

# How much text around the cursor identifies a request (the model sees less than this).
KEY_PREFIX_CHARS = 3_000
KEY_SUFFIX_CHARS = 1_500
# Documents whose shown suggestion is kept for type-through, the most recently shown: a
# client that never closes its documents must not grow this by ~4.5 KB for each.
SHOWN_DOCUMENTS = 32


@dataclass(frozen=True)
class Suggestion:
    """One ghost text the server may show, and the calibrated confidence it was shown at."""

    text: str
    confidence: float
    source: str = ""  # the model's part that wrote it, for the feedback it gets (``feedback_thresholds.py``)


@dataclass(frozen=True)
class _Shown:
    prefix: str
    suffix: str
    suggestions: tuple[Suggestion, ...]


def _key(prefix: str, suffix: str, variant: str) -> tuple[str, str, str]:
    return prefix[-KEY_PREFIX_CHARS:], suffix[:KEY_SUFFIX_CHARS], variant


class SuggestionCache:
    def __init__(self, capacity: int = 128) -> None:
        self._capacity = capacity
        self._recent: OrderedDict[tuple[str, str, str], tuple[Suggestion, ...]] = OrderedDict()
        self._shown: OrderedDict[str, _Shown] = OrderedDict()  # least recently shown first

    def lookup(self, uri: str, prefix: str, suffix: str, variant: str) -> list[Suggestion] | None:
        """Suggestions for this cursor without the model, or None when it must be asked."""
        key = _key(prefix, suffix, variant)
        if key in self._recent:
            self._recent.move_to_end(key)
            return list(self._recent[key])
        return self._type_through(uri, prefix, suffix)

    def _type_through(self, uri: str, prefix: str, suffix: str) -> list[Suggestion] | None:
        shown = self._shown.get(uri)
        if shown is None or suffix[:KEY_SUFFIX_CHARS] != shown.suffix:
            return None
        longest = max(len(s.text) for s in shown.suggestions)
        # The typed text is what now stands between the old prefix and the cursor.
        for typed_length in range(1, longest):
            if prefix[:-typed_length].endswith(shown.prefix):
                typed = prefix[-typed_length:]
                rest = [Suggestion(s.text[typed_length:], s.confidence, s.source)
                        for s in shown.suggestions if s.text.startswith(typed) and len(s.text) > typed_length]
                return rest or None
        return None

    def remember(self, uri: str, prefix: str, suffix: str, variant: str, suggestions: list[Suggestion]) -> None:
        key = _key(prefix, suffix, variant)
        self._recent[key] = tuple(suggestions)
        self._recent.move_to_end(key)
        while len(self._recent) > self._capacity:
            self._recent.popitem(last=False)
        if suggestions:
            self._shown[uri] = _Shown(prefix[-KEY_PREFIX_CHARS:], suffix[:KEY_SUFFIX_CHARS], tuple(suggestions))
            self._shown.move_to_end(uri)
            while len(self._shown) > SHOWN_DOCUMENTS:
                self._shown.popitem(last=False)

    def forget(self, uri: str) -> None:
        self._shown.pop(uri, None)

"""Deliberate failures for testing that one broken request never breaks the next.

Off unless ``REDRAFT_FAULTS`` is set when the server starts, e.g.
``REDRAFT_FAULTS=fim:1,next_edit:2,handler:3``: the 1st FIM model job raises, the 2nd
next-edit model job raises, the 3rd inline-completion request raises in its handler
before any model work. Counts are per kind, from 1; a kind may be listed more than once.
"""

from __future__ import annotations

import logging
import os
from collections import Counter

log = logging.getLogger(__name__)

KINDS = ("fim", "next_edit", "handler")
ENVIRONMENT_VARIABLE = "REDRAFT_FAULTS"


class InjectedFault(RuntimeError):
    """Raised where a fault was planned."""


class FaultPlan:
    def __init__(self, planned: dict[str, set[int]] | None = None) -> None:
        self._planned = planned or {}
        self._seen: Counter[str] = Counter()

    @classmethod
    def from_environment(cls) -> FaultPlan:
        raw = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
        if not raw:
            return cls()
        planned: dict[str, set[int]] = {}
        for item in raw.split(","):
            kind, _, ordinal = item.strip().partition(":")
            if kind not in KINDS or not ordinal.isdigit() or int(ordinal) < 1:
                log.warning("%s: ignoring %r (expected kind:N with kind in %s)", ENVIRONMENT_VARIABLE, item,
                            ", ".join(KINDS))
                continue
            planned.setdefault(kind, set()).add(int(ordinal))
        log.warning("%s set: faults will be injected (%s)", ENVIRONMENT_VARIABLE, raw)
        return cls(planned)

    def check(self, kind: str) -> None:
        """Count one more event of ``kind``; raise if this one was planned to fail."""
        if kind not in self._planned:
            return
        self._seen[kind] += 1
        if self._seen[kind] in self._planned[kind]:
            raise InjectedFault(f"injected fault: {kind} #{self._seen[kind]}")

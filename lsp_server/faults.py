"""Deliberate failures for testing that one broken request never breaks the next.

Off unless ``REDRAFT_FAULTS`` is set when the server starts (read once), e.g.
``REDRAFT_FAULTS=fim:1,next_edit:2,handler:3,change:1,fim_stall:4``:

- ``fim:N`` / ``next_edit:N``: the Nth FIM / next-edit model job raises;
- ``handler:N``: the Nth inline-completion request raises in its handler, before any
  model work;
- ``change:N``: the Nth ``didChange`` raises in the document layer, after its first
  content change was applied to a scratch copy (the document must stay as it was);
- ``fim_stall:N`` / ``next_edit_stall:N``: the Nth FIM / next-edit model job does not
  finish on its own: it waits until its stop flag or deadline says stop, then the job goes
  on and is abandoned as usual.

Counts are per kind, from 1; a kind may be listed more than once.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Callable

log = logging.getLogger(__name__)

KINDS = ("fim", "next_edit", "handler", "change", "fim_stall", "next_edit_stall")
ENVIRONMENT_VARIABLE = "REDRAFT_FAULTS"


class InjectedFault(RuntimeError):
    """Raised where a fault was planned."""


class FaultPlan:
    def __init__(self, planned: dict[str, set[int]] | None = None) -> None:
        self._planned = planned or {}
        self._seen: Counter[str] = Counter()
        self._counting = threading.Lock()  # model workers count side by side

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
        ordinal = self._planned_now(kind)
        if ordinal:
            raise InjectedFault(f"injected fault: {kind} #{ordinal}")

    def stall(self, kind: str, should_stop: Callable[[], bool]) -> None:
        """Count one more event of ``kind``; if this one was planned, block until
        ``should_stop()`` (a job's stop flag or deadline) is true."""
        ordinal = self._planned_now(kind)
        if ordinal:
            log.warning("injected stall: %s #%d waits for its stop flag or deadline", kind, ordinal)
            idle = threading.Event()
            while not should_stop():
                idle.wait(0.01)

    def _planned_now(self, kind: str) -> int:
        """This event's ordinal if it was planned to fail, else 0."""
        if kind not in self._planned:
            return 0
        with self._counting:
            self._seen[kind] += 1
            ordinal = self._seen[kind]
        return ordinal if ordinal in self._planned[kind] else 0

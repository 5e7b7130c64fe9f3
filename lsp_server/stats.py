"""Local usage counts per suggestion kind: shown, accepted, rejected.

Clients send ``redraft/feedback {id, accepted}`` when a suggestion is accepted or
dismissed. Counts live in one small JSON file in the user's state folder (never in the
workspace) and nothing leaves the machine.
"""

from __future__ import annotations

import json
import logging
import os
from collections import OrderedDict
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Kind = Literal["inline_completion", "next_edit"]
KINDS: tuple[Kind, ...] = ("inline_completion", "next_edit")
COUNTERS = ("shown", "accepted", "rejected")
MAX_TRACKED_IDS = 1_000


def default_stats_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "redraft" / "stats.json"


def read_counts(path: Path) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {kind: dict.fromkeys(COUNTERS, 0) for kind in KINDS}
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        return counts
    for kind in KINDS:
        for counter in COUNTERS:
            value = stored.get(kind, {}).get(counter, 0) if isinstance(stored, dict) else 0
            counts[kind][counter] = value if isinstance(value, int) and value >= 0 else 0
    return counts


class UsageStats:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.counts: dict[str, dict[str, int]] = (
            read_counts(path) if path else {kind: dict.fromkeys(COUNTERS, 0) for kind in KINDS}
        )
        self._kinds: OrderedDict[str, Kind] = OrderedDict()  # suggestion id → kind, bounded

    def shown(self, kind: Kind, ids: list[str]) -> None:
        self.counts[kind]["shown"] += len(ids)
        for suggestion_id in ids:
            self._kinds[suggestion_id] = kind
        while len(self._kinds) > MAX_TRACKED_IDS:
            self._kinds.popitem(last=False)

    def feedback(self, suggestion_id: str, accepted: bool) -> bool:
        """Count one accept/dismiss; False for an id this server never gave out."""
        kind = self._kinds.pop(suggestion_id, None)
        if kind is None:
            return False
        self.counts[kind]["accepted" if accepted else "rejected"] += 1
        self.save()
        return True

    def save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.counts, indent=1) + "\n")
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("could not save usage counts to %s: %s", self.path, exc)


def format_counts(counts: dict[str, dict[str, int]]) -> str:
    lines = [f"{'kind':18} {'shown':>7} {'accepted':>9} {'rejected':>9} {'accept rate':>12}"]
    for kind in KINDS:
        row = counts[kind]
        decided = row["accepted"] + row["rejected"]
        rate = f"{row['accepted'] / decided:.1%}" if decided else "–"
        lines.append(f"{kind:18} {row['shown']:7d} {row['accepted']:9d} {row['rejected']:9d} {rate:>12}")
    return "\n".join(lines)

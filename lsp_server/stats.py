"""Local usage counts per suggestion kind: shown, accepted, rejected.

Clients send ``redraft/feedback {id, accepted}`` when a suggestion is accepted or
dismissed. Ghost text's accepts and dismissals are also counted per source (the part of the
model that wrote it), which raises the threshold of a source the user keeps dismissing
(``feedback_thresholds.py``). Counts live in one small JSON file in the user's state folder (never in the
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
SOURCES_KEY = "inline_completion_sources"  # source → accepted/rejected, beside the kinds' counts
MAX_SOURCES = 32  # sources are a handful; a file edited by hand can't make the counts grow without end


def default_stats_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "redraft" / "stats.json"


def _stored(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_source_counts(path: Path) -> dict[str, dict[str, int]]:
    stored = _stored(path)
    entries = stored.get(SOURCES_KEY, {}) if isinstance(stored, dict) else {}
    found: dict[str, dict[str, int]] = {}
    for source, entry in (entries.items() if isinstance(entries, dict) else []):
        if not isinstance(entry, dict) or len(found) >= MAX_SOURCES:
            continue
        found[str(source)] = {counter: value if isinstance(value := entry.get(counter, 0), int) and value >= 0 else 0
                              for counter in ("accepted", "rejected")}
    return found


def read_counts(path: Path) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {kind: dict.fromkeys(COUNTERS, 0) for kind in KINDS}
    stored = _stored(path)
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
        self.sources: dict[str, dict[str, int]] = read_source_counts(path) if path else {}
        self._kinds: OrderedDict[str, tuple[Kind, str]] = OrderedDict()  # suggestion id → kind, source; bounded

    def shown(self, kind: Kind, ids: list[str], sources: list[str] | None = None) -> None:
        self.counts[kind]["shown"] += len(ids)
        for suggestion_id, source in zip(ids, sources or [""] * len(ids), strict=True):
            self._kinds[suggestion_id] = (kind, source)
        while len(self._kinds) > MAX_TRACKED_IDS:
            self._kinds.popitem(last=False)

    def sources_shown(self) -> dict[str, str]:
        """Suggestion id → the source that wrote it, for the ids still awaiting feedback."""
        return {suggestion_id: source for suggestion_id, (_, source) in self._kinds.items()}

    def feedback(self, suggestion_id: str, accepted: bool) -> bool:
        """Count one accept/dismiss; False for an id this server never gave out."""
        known = self._kinds.pop(suggestion_id, None)
        if known is None:
            return False
        kind, source = known
        counter = "accepted" if accepted else "rejected"
        self.counts[kind][counter] += 1
        if source and (source in self.sources or len(self.sources) < MAX_SOURCES):
            self.sources.setdefault(source, {"accepted": 0, "rejected": 0})[counter] += 1
        self.save()
        return True

    def save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({**self.counts, SOURCES_KEY: self.sources}, indent=1) + "\n")
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("could not save usage counts to %s: %s", self.path, exc)


def format_source_counts(sources: dict[str, dict[str, int]], threshold: float) -> str:
    """Ghost text's accepts and dismissals per source, with the threshold each now gets."""
    from lsp_server.feedback_thresholds import raised_thresholds

    if not sources:
        return ""
    raised = raised_thresholds(sources, threshold)
    lines = [f"{'ghost text from':18} {'accepted':>9} {'rejected':>9} {'threshold':>10}"]
    for source, row in sorted(sources.items()):
        lines.append(f"{source:18} {row['accepted']:9d} {row['rejected']:9d} {raised.get(source, threshold):10.2f}")
    return "\n".join(lines)


def format_counts(counts: dict[str, dict[str, int]]) -> str:
    lines = [f"{'kind':18} {'shown':>7} {'accepted':>9} {'rejected':>9} {'accept rate':>12}"]
    for kind in KINDS:
        row = counts[kind]
        decided = row["accepted"] + row["rejected"]
        rate = f"{row['accepted'] / decided:.1%}" if decided else "–"
        lines.append(f"{kind:18} {row['shown']:7d} {row['accepted']:9d} {row['rejected']:9d} {rate:>12}")
    return "\n".join(lines)

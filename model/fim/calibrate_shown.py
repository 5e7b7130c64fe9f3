"""``redraft calibrate --only shown``: the map of each source's confidence to the precision
of what is shown, per language family and cursor place (``shown_calibration.py``), fitted
on held-out spans completed as the server completes them as you type.

Judged leave-package-out: each package's spans are scored by maps fitted on the other
packages only, since a user's code is always a package the maps never saw. Fitted on half
the spans and judged on the other half, the maps looked right on the packages they had
seen and were not on new ones (the issue's unseen packages: 49% right where the fitting
sets said 67%). The stored maps are then fitted on every span.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from model.data.corpus import SourceFile
from model.fim.calibrate import percent, workspaces
from model.fim.completion_request import AS_YOU_TYPE_MAX_STEPS, CompletionRequest
from model.fim.fim_patterns import RelatedLines
from model.fim.held_out_cases import cut_from_files, same_code
from model.fim.inference import FimCompleter
from model.fim.shown_calibration import CONFIG_KEY as SHOWN_KEY
from model.fim.shown_calibration import ShownAt, Win, fit_shown, leave_package_out, source_of
from model.languages import language_for
from model.model_folder import store_calibration
from model.runtime.serving import load_served_model

SHOWN_CASES = 6_000  # the whole served pipeline each (~25 ms): a few minutes
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class Served:
    """One held-out span completed as served: where it was, and what won (None: nothing offered)."""

    at: ShownAt
    package: str
    win: Win | None


def served_spans(model_dir: Path, files: list[SourceFile], count: int = SHOWN_CASES, seed: int = 10) -> list[Served]:
    """Spans cut from ``files`` (of any served language), each completed as served as you
    type, with its package's other files as the workspace, before any shown map (the
    sources' own confidences)."""
    loaded = load_served_model(model_dir)
    calibration = loaded.metadata.get("calibration")
    if isinstance(calibration, dict):
        calibration.pop(SHOWN_KEY, None)
    completer = FimCompleter(loaded)
    served = [f for f in files if language_for(f.path) is not None]
    indexes = workspaces(served)
    spans = []
    for source, prefix, middle, suffix in cut_from_files(served, count, seed):
        lines, runs = indexes[source.package]
        language = language_for(source.path)
        assert language is not None  # served files only
        request = CompletionRequest(prefix, suffix, max_steps=AS_YOU_TYPE_MAX_STEPS, language=language,
                                    related=RelatedLines(lines, skip=source.path, runs=runs))
        candidates = completer.complete(request)
        win = None if not candidates else Win(source_of(candidates[0].copied), candidates[0].confidence,
                                              same_code(candidates[0].text, middle), request.shown_at, source.package)
        spans.append(Served(request.shown_at, source.package, win))
    return spans


def curve_table(confidences: Sequence[tuple[float, bool] | None]) -> str:
    """Shown share and precision at each threshold, of (confidence, right) per span (None:
    nothing offered)."""
    rows = [f"{'threshold':>9} {'shown':>7} {'precision':>10}"]
    for threshold in THRESHOLDS:
        shown = [right for c in confidences if c is not None for confidence, right in [c] if confidence >= threshold]
        rows.append(f"{threshold:9.1f} {len(shown) / max(1, len(confidences)):7.1%} "
                    f"{percent(sum(shown) / len(shown) if shown else None):>10}")
    return "\n".join(rows)


def by_source_table(spans: Sequence[Served], mapped: dict[int, float], threshold: float) -> str:
    """Per source: the spans it won, how many of those clear ``threshold`` once mapped, and
    how many of those were right."""
    rows = [f"{'source':>14} {'won':>6} {'shown':>6} {'right':>6} {'precision':>10}"]
    wins = [s.win for s in spans if s.win is not None]
    for source in sorted({w.source for w in wins}):
        own = [w for w in wins if w.source == source]
        shown = [w.right for w in own if mapped[id(w)] >= threshold]
        rows.append(f"{source:>14} {len(own):6d} {len(shown):6d} {sum(shown):6d} "
                    f"{percent(sum(shown) / len(shown) if shown else None):>10}")
    return "\n".join(rows)


def calibrate_shown(model_dir: Path, dev_files: list[SourceFile], count: int = SHOWN_CASES, seed: int = 10,
                    threshold: float = 0.75) -> str:
    """Fit the maps on every served span of ``dev_files``, write them into
    ``model_dir/config.json``, and report each family's curve leave-package-out, with the
    sources' own confidences beside it, and each source's share at ``threshold`` (the
    server's default). Run after every other FIM calibrator: it maps their confidences."""
    spans = served_spans(model_dir, dev_files, count, seed)
    wins = [s.win for s in spans if s.win is not None]
    store_calibration(model_dir, SHOWN_KEY, fit_shown(wins).to_dict())
    mapped = dict(zip(map(id, wins), leave_package_out(wins), strict=True))
    reports = [f"shown suggestions: {len(spans)} held-out spans completed as served, from "
               f"{len({s.package for s in spans})} packages; maps fitted on every span and stored"]
    for family in sorted({s.at.family for s in spans}):
        ours = [s for s in spans if s.at.family == family]
        counts = Counter(s.win.source for s in ours if s.win is not None)
        reports.append(f"\n{family}: {len(ours)} spans; winners by source: "
                       + ", ".join(f"{source} {n}" for source, n in sorted(counts.items())))
        reports.append("own confidence:\n" + curve_table(
            [None if s.win is None else (s.win.confidence, s.win.right) for s in ours]))
        reports.append("mapped, each package by maps fitted on the others:\n" + curve_table(
            [None if s.win is None else (mapped[id(s.win)], s.win.right) for s in ours]))
        reports.append(f"by source, mapped as above, at threshold {threshold:g}:\n"
                       + by_source_table(ours, mapped, threshold))
    return "\n".join(reports)

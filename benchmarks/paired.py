"""``redraft bench fim --save`` / ``--against``: two models compared case by case.

Two runs of 1,000 cases whose totals differ by a handful can't be told apart by their
totals: one standard error of a 14% pass rate over 1,033 HumanEval cases is ~11 cases. But
most cases go the same way under both models, so the totals' noise is mostly shared. The
paired test looks only at the cases where the two runs disagree: if neither model is
better, each such case is a coin flip, and the two-sided sign test (exact binomial, p = 1/2)
says how surprising the split is. Same cases in the same order, or no comparison.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.fim import CaseResult, FimReport

FORMAT = "redraft-fim-cases/1"  # the saved file's first line, so a foreign file is refused clearly


def save_results(report: FimReport, path: Path) -> None:
    """One JSON line per case, after a header line naming the format, threshold and data."""
    header = {"format": FORMAT, "data": report.data_path.name, "threshold": report.threshold,
              "encoding": report.encoding, "tested": report.tested}
    lines = [json.dumps(header)] + [json.dumps(asdict(result)) for result in report.results]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_results(path: Path) -> FimReport:
    """A file ``save_results`` wrote, as the report it was saved from (``data_path`` is the
    data's file name only); ValueError with the reason otherwise."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0]) if lines else {}
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError("it is not a file saved by `redraft bench fim --save`")
        results = tuple(CaseResult(**json.loads(line)) for line in lines[1:] if line.strip())
        return FimReport(Path(str(header["data"])), float(header["threshold"]), str(header["encoding"]), results,
                         bool(header["tested"]))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc


def sign_test(wins: int, losses: int) -> float:
    """Two-sided p-value of ``wins`` against ``losses`` when each is a fair coin flip."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class PairedRow:
    metric: str
    this_run: int  # cases with the property in this run
    saved_run: int
    only_this: int  # cases with it here and not in the saved run
    only_saved: int
    p_value: float


def compare(this: FimReport, saved: FimReport) -> list[PairedRow]:
    """Case-by-case differences in shown, exact and (when tested) passed cases."""
    if [r.task_id for r in this.results] != [r.task_id for r in saved.results]:
        raise ValueError(f"the saved run has other cases ({len(saved.results)} saved, {this.cases} now): "
                         "run both with the same data, --limit and --dev/--data")
    metrics: list[tuple[str, Callable[[CaseResult], bool]]] = [
        ("shown", lambda r: r.completion is not None), ("exact", lambda r: r.exact)]
    if this.tested and saved.tested:
        metrics.append(("pass@1", lambda r: r.passed))
    rows = []
    for name, has in metrics:
        pairs = [(has(a), has(b)) for a, b in zip(this.results, saved.results, strict=True)]
        only_this = sum(a and not b for a, b in pairs)
        only_saved = sum(b and not a for a, b in pairs)
        rows.append(PairedRow(name, sum(a for a, _ in pairs), sum(b for _, b in pairs), only_this, only_saved,
                              sign_test(only_this, only_saved)))
    return rows


def format_comparison(rows: Sequence[PairedRow], saved_path: Path, threshold_note: str = "") -> str:
    header = f"{'against ' + saved_path.name:28} {'this run':>9} {'saved':>7} {'only this':>10} {'only saved':>11} " \
             f"{'p (sign test)':>14}"
    lines = [header, "-" * len(header)]
    lines += [f"{row.metric:28} {row.this_run:>9} {row.saved_run:>7} {row.only_this:>10} {row.only_saved:>11} "
              f"{row.p_value:>14.3f}" for row in rows]
    if threshold_note:
        lines.append(threshold_note)
    return "\n".join(lines)

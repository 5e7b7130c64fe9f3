"""Figures saved next to what they describe: the loss curve of a training run, and the
precision-vs-shown curve of a calibration.

matplotlib's Agg backend draws to files without a display; it is imported only when a
figure is drawn, so serving never pays for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LOSS_CURVE = "loss_curve.png"


def read_history(path: Path) -> list[dict[str, Any]]:
    """The evaluation records of a run's ``history.jsonl`` (later records of a step win)."""
    by_step: dict[int, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                by_step[int(record["step"])] = record
    return [by_step[step] for step in sorted(by_step)]


def plot_loss_curve(history_path: Path, target: Path | None = None) -> Path | None:
    """Train and held-out losses against tokens seen; None when there is nothing to draw."""
    records = read_history(history_path)
    if not records:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tokens = [r["tokens"] / 1e6 for r in records]
    figure, axis = plt.subplots(figsize=(7, 4), dpi=100)
    for key, label, style in (("diffusion", "train FIM canvas (last batch)", ":"),
                              ("dev_diffusion", "held-out FIM canvas", "-"),
                              ("dev_next_token", "held-out next token", "-"),
                              ("dev_written", "held-out head at the cursor", "-"),
                              ("dev_full_mask", "held-out FIM canvas masked whole", "-"),
                              ("dev_next_edit", "held-out next edit", "-")):
        points = [(t, r[key]) for t, r in zip(tokens, records, strict=True) if key in r]
        if points:
            axis.plot([p[0] for p in points], [p[1] for p in points], style, marker=".", label=label)
    axis.set_xlabel("tokens seen (millions)")
    axis.set_ylabel("loss (nats/token)")
    axis.set_title(f"{history_path.parent.name}: step {records[-1]['step']}")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    out = target or history_path.parent / LOSS_CURVE
    figure.savefig(out)
    plt.close(figure)
    return out


def plot_precision_curve(
    thresholds: Sequence[float], precision: Sequence[float], shown: Sequence[float], target: Path, title: str
) -> Path:
    """Precision of shown suggestions and the share shown, against the threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4), dpi=100)
    axis.plot(thresholds, [100 * p for p in precision], marker="o", label="precision of shown (% exact)")
    axis.plot(thresholds, [100 * s for s in shown], marker="s", label="shown (% of cases)")
    axis.set_xlabel("confidence threshold")
    axis.set_ylabel("%")
    axis.set_ylim(0, 100)
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(target)
    plt.close(figure)
    return target

"""Figures: the loss curve of a run and the precision-vs-shown curve are written as PNGs."""

import json
from pathlib import Path

from model.training.plots import plot_loss_curve, plot_precision_curve, read_history

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_the_loss_curve_is_drawn_from_the_run_history(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    records = [{"step": s, "tokens": s * 7000, "diffusion": 3.0 - s / 500, "dev_diffusion": 2.5 - s / 900,
                "dev_next_token": 4.6 - s / 1000} for s in (250, 500, 500, 750)]
    history.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert [r["step"] for r in read_history(history)] == [250, 500, 750]  # a repeated step counts once
    out = plot_loss_curve(history)
    assert out == tmp_path / "loss_curve.png" and out.read_bytes().startswith(PNG_SIGNATURE)
    assert plot_loss_curve(tmp_path / "missing.jsonl") is None


def test_the_precision_curve_is_drawn(tmp_path: Path) -> None:
    out = plot_precision_curve([0.1, 0.5, 0.9], [0.2, 0.5, 0.9], [0.6, 0.3, 0.05], tmp_path / "curve.png", "t")
    assert out.read_bytes().startswith(PNG_SIGNATURE)

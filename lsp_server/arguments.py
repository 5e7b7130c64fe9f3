"""Argument types shared by the ``redraft`` commands: each rejects a bad value with a message
argparse prints as the command's usage error."""

from __future__ import annotations

import argparse
from pathlib import Path


def parse_location(spec: str) -> tuple[Path, int, int]:
    """``PATH:LINE:COL`` with 1-based line and column."""
    try:
        path, line, col = spec.rsplit(":", 2)
        return Path(path), int(line), int(col)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected PATH:LINE:COL (1-based), got {spec!r}") from None


# The largest canvas the model was trained on (``TrainConfig.canvas_sizes``) and the server accepts.
MAX_CANVAS = 64


def canvas_size(text: str) -> int:
    """A canvas holds at least a token and the end of the middle, and at most what the
    model was trained on: a larger one decodes for seconds and writes nothing useful."""
    try:
        size = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of canvas positions, got {text!r}") from None
    if size < 2:
        raise argparse.ArgumentTypeError(f"a canvas needs at least 2 positions (a token and the end), got {size}")
    if size > MAX_CANVAS:
        raise argparse.ArgumentTypeError(f"a canvas of at most {MAX_CANVAS} positions (the most the model was "
                                         f"trained on), got {size}")
    return size

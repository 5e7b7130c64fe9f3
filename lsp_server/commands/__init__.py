"""Bodies of the one-shot commands (``complete``, ``train``, ``bench``). Their output is
for a person at a terminal, so it goes to stdout. One module per kind of command:
``suggestions`` (``complete``, ``demo``), ``training`` (``train``, ``ablate``, ``distill``,
``average``), ``data`` (``corpus``, ``heldout``, ``phrases``), ``calibration`` and
``benchmarks``."""

from __future__ import annotations

from lsp_server.commands.benchmarks import bench
from lsp_server.commands.calibration import calibrate
from lsp_server.commands.data import corpus, heldout, phrases
from lsp_server.commands.suggestions import complete, demo
from lsp_server.commands.training import ablate, average, distill, train, train_on_repo

__all__ = [
    "ablate",
    "average",
    "bench",
    "calibrate",
    "complete",
    "corpus",
    "demo",
    "distill",
    "heldout",
    "phrases",
    "train",
    "train_on_repo",
]

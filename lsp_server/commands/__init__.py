"""Bodies of the one-shot commands (``complete``, ``train``, ``heldout`` …; ``bench`` lives in
the ``benchmarks`` package). Their output is
for a person at a terminal, so it goes to stdout. One module per kind of command:
``suggestions`` (``complete``, ``demo``), ``training`` (``train``, ``ablate``, ``distill``,
``average``), ``data`` (``corpus``, ``heldout``, ``phrases``) and ``calibration``."""

from __future__ import annotations

from lsp_server.commands.calibration import calibrate
from lsp_server.commands.data import corpus, heldout, phrases
from lsp_server.commands.suggestions import complete, demo
from lsp_server.commands.training import ablate, average, distill, train, train_on_repo

__all__ = [
    "ablate",
    "average",
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

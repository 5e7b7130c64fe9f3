"""A second opinion on a copied line, from the network's first denoising pass.

A copied line (``fim_patterns.py``) that only one other line supports, or a majority of
disagreeing ones, is right about a third of the time. The network's first pass over the
fully masked canvas, which a request runs anyway, says how likely each of the copy's
tokens is at its place and how likely the middle is to end right after it. On held-out
copies of those two buckets, the lowest of these log-probabilities separated right from
wrong ones with an AUC of 0.72–0.75, so a small logistic model over them
(fitted by ``redraft calibrate``, stored in config.json as ``calibration.fim_copy_check``)
replaces the bucket's flat precision: fewer of these copies are shown, and more of the
shown ones are right.

The same two buckets of copies from the workspace's other files are checked too (session
34): at their flat precisions, measured on held-out packages (0.40 and 0.56), they were
right on only 9 of 27 shown in packages in no corpus, where one module's imports or test
names say little about another's. Through the server, at 0.3, on 1,000 spans of those
packages: 166 right of 254 shown → 168 of 244.
"""

from __future__ import annotations

import numpy as np

from model.fim.fim_patterns import AGREE_1, MAJORITY, WORKSPACE_AGREE_1, WORKSPACE_MAJORITY

CHECKED_KINDS = (AGREE_1, MAJORITY, WORKSPACE_AGREE_1, WORKSPACE_MAJORITY)
MAJORITY_KINDS = (MAJORITY, WORKSPACE_MAJORITY)
CHECK_FEATURES = ("mean_logp", "min_logp", "end_logp", "majority", "statement_parses")
STATEMENT_PARSES_AT = CHECK_FEATURES.index("statement_parses")
CONFIG_KEY = "fim_copy_check"


def check_features(
    first_pass: np.ndarray, copy_ids: list[int], end_id: int, kind: str, statement_parses: float
) -> list[float] | None:
    """The check's inputs: ``first_pass`` (canvas positions, vocab) holds the first pass's
    distributions, ``statement_parses`` is ``cursor_statement.statement_parses`` (or unknown);
    None when the copy doesn't fit the canvas with its end."""
    length = len(copy_ids)
    if not 0 < length < first_pass.shape[0]:
        return None
    targets = np.array([*copy_ids, end_id])
    logs = np.log(np.maximum(first_pass[np.arange(length + 1), targets], 1e-9))
    return [float(logs[:length].mean()), float(logs.min()), float(logs[length]), float(kind in MAJORITY_KINDS),
            statement_parses]

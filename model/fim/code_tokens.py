"""Code split into tokens as a reader sees them, for the n-gram continuations: a line break
with the next line's indentation, a run of spaces, a word, or one punctuation character.

The file's continuations (``line_continuation.py``), the workspace's runs (``run_index.py``)
and the training phrases (``phrase_table.py``) must split text the same way for their runs
to meet, so the splitting and the growing vocabulary live here, below all three.
"""

from __future__ import annotations

import re
from itertools import islice

import numpy as np

MAX_ORDER = 6  # tokens of context matched at most
TOKEN = re.compile(r"\n[ \t]*|[ \t]+|\w+|[^\w\s]")
WORD = re.compile(r"\w+")


def encode_tokens(tokens: list[str], ids: dict[str, int], strings: list[str], dtype: type) -> np.ndarray:
    """``tokens`` as ids of a growing vocabulary (``ids``: text → id, ``strings``: id → text),
    new tokens added to both."""
    before = len(ids)
    # setdefault's default is evaluated first: a new token gets the next id.
    encoded: np.ndarray = np.fromiter((ids.setdefault(token, len(ids)) for token in tokens), dtype=dtype,
                                      count=len(tokens))
    if len(ids) > before:
        strings.extend(islice(ids, before, None))
    return encoded

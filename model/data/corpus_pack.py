"""A sample of the built corpus small enough to carry to a machine that can't fetch it (a lent
GPU takes the working tree and little else): every held-out file, every npm file, and Python
training files drawn at random in proportion to their length (up to ``FILE_WEIGHT_CAP``)
until the compressed budget is spent, plus a share of the real edit pairs.

Each split is written as ``NAME.jsonl.gz``; ``gunzip`` gives back the files ``redraft train``
reads, and ``PACK.json`` says what was kept of what.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

from model.data.npm_corpus import NPM_CORPUS_INDEX, NPM_DEV_FILE, NPM_TRAIN_FILE

log = logging.getLogger(__name__)

PACK_MANIFEST = "PACK.json"
FILE_WEIGHT_CAP = 20_000  # characters: a huge file is drawn like a long one, as in training
EDITS_SHARE = 0.1  # of the budget, for real edit pairs (next-edit training)
WHOLE = ("dev.jsonl", NPM_DEV_FILE, "edits_dev.jsonl", NPM_TRAIN_FILE)  # carried whole, first


def _lines(path: Path) -> Iterator[str]:
    if path.is_file():
        with open(path) as handle:
            yield from (line for line in handle if line.strip())


def _drawn(path: Path, rng: random.Random) -> list[str]:
    """The file's records in a random order where longer texts tend to come first (each
    record's key is u^(1/weight), so the first k are a weighted sample without replacement)."""
    keyed = []
    for line in _lines(path):
        record = json.loads(line)
        weight = max(1, min(FILE_WEIGHT_CAP, len(record.get("text") or record.get("new") or "")))
        keyed.append((rng.random() ** (1.0 / weight), line))
    keyed.sort(key=lambda pair: pair[0], reverse=True)
    return [line for _, line in keyed]


def _write_until(lines: list[str], out: Path, budget: int) -> int:
    """Write ``lines`` gzipped into ``out`` while the compressed size stays under ``budget``
    bytes; how many were written."""
    written = 0
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed:
        for line in lines:
            if raw.tell() >= budget:
                break
            packed.write(line.encode())
            packed.flush()  # so that the file's size is what it holds so far (a sync flush costs bytes, not ratio)
            written += 1
    return written


def pack_corpus(corpus_dir: Path, out_dir: Path, max_bytes: int, seed: int = 0) -> dict[str, list[int]]:
    """Write the pack of ``corpus_dir`` into ``out_dir``; {file: [kept, of]} for each split.
    ValueError when the splits carried whole already take the budget."""
    if not (corpus_dir / "train.jsonl").is_file():
        raise FileNotFoundError(f"no corpus in {corpus_dir}: `redraft train` builds it")
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    kept: dict[str, list[int]] = {}
    used = 0
    for name in WHOLE:
        lines = list(_lines(corpus_dir / name))
        if lines:
            count = _write_until(lines, out_dir / f"{name}.gz", max_bytes)
            used += (out_dir / f"{name}.gz").stat().st_size
            kept[name] = [count, len(lines)]
    if used >= max_bytes:
        raise ValueError(f"the held-out splits and the npm files alone take {used / 1e6:.1f} MB of the "
                         f"{max_bytes / 1e6:.1f} MB allowed: allow more")
    edits = _drawn(corpus_dir / "edits_train.jsonl", rng)
    if edits:
        count = _write_until(edits, out_dir / "edits_train.jsonl.gz", int(EDITS_SHARE * (max_bytes - used)))
        used += (out_dir / "edits_train.jsonl.gz").stat().st_size
        kept["edits_train.jsonl"] = [count, len(edits)]
    python = _drawn(corpus_dir / "train.jsonl", rng)
    kept["train.jsonl"] = [_write_until(python, out_dir / "train.jsonl.gz", max_bytes - used), len(python)]
    if (corpus_dir / NPM_CORPUS_INDEX).is_file():
        shutil.copyfile(corpus_dir / NPM_CORPUS_INDEX, out_dir / NPM_CORPUS_INDEX)
    (out_dir / PACK_MANIFEST).write_text(json.dumps({"from": str(corpus_dir), "max_bytes": max_bytes, "seed": seed,
                                                     "kept_of": kept}, indent=1) + "\n")
    log.info("corpus pack in %s: %s", out_dir, kept)
    return kept

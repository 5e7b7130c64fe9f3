"""The steps of ``redraft train``: corpus → tokenizer → network → shipped weights.

Each step skips itself when its output already exists, so a run can be resumed (and the
same command runs under torchrun, where every rank sees the same files).
"""

from __future__ import annotations

import logging
import random
import shutil
from pathlib import Path

import torch

from model.checkpoint import load_model, save_model
from model.data.corpus import build_corpus, pinned_packages, read_corpus
from model.data.edit_corpus import build_edit_pairs, download_previous_releases
from model.data.npm_corpus import NPM_CORPUS_INDEX, NPM_TARBALL_FOLDER, build_npm_corpus, pinned_npm_packages
from model.data.sdist_download import download_sdists
from model.model_folder import SHIPPED_DIR
from model.tokenizer import CodeTokenizer

log = logging.getLogger(__name__)

TOKENIZER_SAMPLE_CHARS = 40_000_000


def prepare_corpus(work_dir: Path, download: bool, max_files: int | None = None) -> Path:
    """``work_dir/corpus/{train,dev}.jsonl`` and the npm part beside them, each built once."""
    corpus_dir = work_dir / "corpus"
    sdist_dir, previous_dir = work_dir / "sdists", work_dir / "sdists_previous"
    if not (corpus_dir / "train.jsonl").is_file():
        if download:
            log.info("downloading pinned sdists into %s", sdist_dir)
            download_sdists(pinned_packages(), sdist_dir)
        counts = build_corpus(sdist_dir, corpus_dir, max_files=max_files)
        log.info("corpus: %d train files, %d dev files, %d dropped", counts["train"], counts["dev"],
                 counts["dropped"])
    if not (corpus_dir / NPM_CORPUS_INDEX).is_file():
        prepare_npm_corpus(work_dir, corpus_dir, download)
    if download and not (corpus_dir / "edits_train.jsonl").is_file():
        log.info("downloading the previous releases into %s", previous_dir)
        download_previous_releases(pinned_packages(), previous_dir)
        pairs = build_edit_pairs(sdist_dir, previous_dir, corpus_dir)
        log.info("real edits: %d train file pairs, %d dev file pairs", pairs["train"], pairs["dev"])
    return corpus_dir


def prepare_npm_corpus(work_dir: Path, corpus_dir: Path, download: bool) -> None:
    """The corpus's JavaScript and TypeScript (``npm_corpus.py``), from tarballs fetched with
    npm; without downloads, from those already fetched, if any."""
    tarballs = work_dir / NPM_TARBALL_FOLDER
    if not download and not tarballs.is_dir():
        log.info("no npm tarballs in %s and downloads are off: the corpus is Python only", tarballs)
        return
    if download and shutil.which("npm") is None:
        raise RuntimeError("npm is not on PATH: install Node.js to fetch the corpus's JavaScript and TypeScript "
                           "(corpus_npm_packages.txt), or pass --no-download for a Python-only corpus")
    index = build_npm_corpus(pinned_npm_packages(), tarballs, corpus_dir, download)
    log.info("npm corpus: %d releases, %.1fM characters", len(index), sum(p.characters for p in index) / 1e6)


def training_sample(corpus_dir: Path, max_chars: int) -> list[str]:
    """Whole files of the training split, in a fixed random order, until ``max_chars``."""
    files = read_corpus(corpus_dir / "train.jsonl")
    random.Random(0).shuffle(files)
    sample, size = [], 0
    for source in files:
        sample.append(source.text)
        size += len(source.text)
        if size > max_chars:
            break
    return sample


def prepare_tokenizer(corpus_dir: Path, path: Path, vocab_size: int) -> CodeTokenizer:
    """Train the byte-level BPE on a sample of the training split, once."""
    if path.is_file():
        return CodeTokenizer.load(path)
    sample = training_sample(corpus_dir, TOKENIZER_SAMPLE_CHARS)
    tokenizer = CodeTokenizer.train(sample, vocab_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(path)
    log.info("tokenizer: %d tokens trained on %.1fM characters", tokenizer.vocab_size,
             sum(map(len, sample)) / 1e6)
    return tokenizer


def export_model(run_dir: Path, target: Path = SHIPPED_DIR) -> Path:
    """Write the run's weights as fp16 safetensors + config + tokenizer into ``target``."""
    loaded = load_model(run_dir)
    save_model(loaded.network, loaded.tokenizer, target, loaded.metadata, dtype=torch.float16)
    log.info("exported %s → %s", run_dir, target)
    return target

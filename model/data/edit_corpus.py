"""Real edits for the next-edit objective: the same file in two consecutive releases.

``pip download`` fetches the release before each pinned one (PyPI's JSON API when pip
can't prepare it, as for the pinned releases); files present in both with
different text become (old, new) pairs. Split by package like the FIM corpus.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from model.data.corpus import (
    DEV_PACKAGES,
    EXCLUDED_NAMES,
    is_excluded_path,
    looks_usable,
    package_name,
    sdist_files,
)
from model.data.sdist_download import fetch_sdist
from model.training.next_edit_examples import EditPair, line_hunks

log = logging.getLogger(__name__)

MAX_HUNKS = 60


def download_previous_releases(requirements: Iterable[str], dest: Path, workers: int = 4) -> None:
    """For each ``name==version``, the newest sdist older than ``version``."""
    dest.mkdir(parents=True, exist_ok=True)

    def fetch(requirement: str) -> None:
        name, _, version = requirement.partition("==")
        if package_name(name) in EXCLUDED_NAMES or not version:
            return
        if (error := fetch_sdist(f"{name}<{version}", dest)) is not None:
            log.warning("no earlier release of %s: %s", name, error)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(fetch, requirements))


def _by_package(folder: Path) -> dict[str, Path]:
    archives: dict[str, Path] = {}
    for archive in sorted(folder.iterdir()) if folder.exists() else []:
        files = iter(sdist_files(archive))
        first = next(files, None)
        if first is not None:
            archives[first.package] = archive
    return archives


def release_pairs(current_dir: Path, previous_dir: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(package, ``{path, old, new}``) for each file that two releases hold with different text."""
    current, previous = _by_package(current_dir), _by_package(previous_dir)
    for package in sorted(set(current) & set(previous)):
        if package in EXCLUDED_NAMES:
            continue
        old_files = {f.path: f.text for f in sdist_files(previous[package])}
        for new_file in sdist_files(current[package]):
            old_text = old_files.get(new_file.path)
            if (old_text is None or old_text == new_file.text or is_excluded_path(new_file.path)
                    or not looks_usable(old_text) or not looks_usable(new_file.text)):
                continue
            if len(line_hunks(old_text, new_file.text)) > MAX_HUNKS:
                continue
            yield package, {"path": f"{package}/{new_file.path}", "old": old_text, "new": new_file.text}


def build_edit_pairs(current_dir: Path, previous_dir: Path, out_dir: Path) -> dict[str, int]:
    """Write ``edits_train.jsonl`` and ``edits_dev.jsonl``; return pair counts."""
    counts = {"train": 0, "dev": 0}
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "edits_train.jsonl", "w") as train, open(out_dir / "edits_dev.jsonl", "w") as dev:
        for package, record in release_pairs(current_dir, previous_dir):
            split = "dev" if package in DEV_PACKAGES else "train"
            (dev if split == "dev" else train).write(json.dumps(record) + "\n")
            counts[split] += 1
    return counts


def write_release_pairs(current_dir: Path, previous_dir: Path, path: Path) -> int:
    """Every release pair into one file (a held-out set's ``edits.jsonl``); how many."""
    count = 0
    with open(path, "w") as handle:
        for _, record in release_pairs(current_dir, previous_dir):
            handle.write(json.dumps(record) + "\n")
            count += 1
    return count


def read_edit_pairs(path: Path) -> list[EditPair]:
    if not path.is_file():
        return []
    with open(path) as handle:
        return [EditPair(**json.loads(line)) for line in handle if line.strip()]

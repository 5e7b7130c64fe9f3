"""A corpus from one user's repository, for ``redraft train --repo``: its Python files and
its git history (each commit's changed Python files → (old, new) pairs for next edit).

Read-only: files are read, git is asked with read-only commands (``ls-files``, ``log``,
``show``); nothing is written inside the repository. Files git ignores (or, without git,
the usual environment and build folders) are skipped, as are huge and minified files.
A few files are held out for a dev loss that says whether fine-tuning helped.
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
from dataclasses import asdict
from pathlib import Path

from model.data.corpus import SourceFile, looks_usable
from model.training.next_edit_examples import EditPair

log = logging.getLogger(__name__)

SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules", "venv", ".venv", "env", ".env", "build", "dist",
                             "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "site-packages"})
MAX_COMMITS = 400
GIT_TIMEOUT_S = 60
DEV_SHARE = 0.1


class RepoError(ValueError):
    """The repository can't be used for fine-tuning; the message says why."""


def _git(root: Path, *args: str) -> str | None:
    """Output of a read-only git command in ``root``, or None if git fails or is absent."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=GIT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def python_paths(root: Path) -> list[str]:
    """Relative paths of the repository's Python files: what git tracks or would track
    (``.gitignore`` applied), else a walk that skips environments and build output."""
    listed = _git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.py")
    if listed is not None:
        paths = [p for p in listed.split("\0") if p.endswith(".py")]
    else:
        paths = [p.relative_to(root).as_posix() for p in root.rglob("*.py")]
    return sorted(p for p in paths if not SKIPPED_FOLDERS.intersection(p.split("/")[:-1]))


def repo_sources(root: Path) -> list[SourceFile]:
    sources = []
    for rel in python_paths(root):
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if looks_usable(text):
            sources.append(SourceFile(root.name, rel, text))
    return sources


def history_pairs(root: Path, max_commits: int = MAX_COMMITS) -> list[EditPair]:
    """(old, new) Python files of the newest ``max_commits`` non-merge commits."""
    log_text = _git(root, "log", "--no-merges", f"-n{max_commits}", "--format=%H")
    if not log_text:
        return []
    pairs = []
    for commit in log_text.split():
        changed = _git(root, "diff-tree", "--no-commit-id", "-r", "--name-only", "--diff-filter=M", "-z",
                       f"{commit}^", commit)
        for rel in (changed or "").split("\0"):
            if not rel.endswith(".py") or SKIPPED_FOLDERS.intersection(rel.split("/")[:-1]):
                continue
            old, new = _git(root, "show", f"{commit}^:{rel}"), _git(root, "show", f"{commit}:{rel}")
            if old is not None and new is not None and old != new and looks_usable(old) and looks_usable(new):
                pairs.append(EditPair(rel, old, new))
    return pairs


def build_repo_corpus(root: Path, out_dir: Path, seed: int = 0) -> dict[str, int]:
    """Write ``train/dev.jsonl`` and ``edits_train/dev.jsonl`` for ``root`` into ``out_dir``."""
    if not root.is_dir():
        raise RepoError(f"{root} is not a directory")
    sources = repo_sources(root)
    if not sources:
        raise RepoError(f"{root} has no Python files to learn from")
    pairs = history_pairs(root)
    rng = random.Random(seed)
    rng.shuffle(sources)
    rng.shuffle(pairs)
    # At least one file held out (when there are two), so the dev loss always exists.
    dev_files = max(1 if len(sources) > 1 else 0, int(len(sources) * DEV_SHARE))
    # A held-out file's history is held out with it: its versions in training pairs would
    # put its text in training, and the held-out losses would flatter the fine-tune.
    held_out = {source.path for source in sources[:dev_files]}
    apart = [pair for pair in pairs if pair.path not in held_out]
    dev_pairs = int(len(apart) * DEV_SHARE)
    out_dir.mkdir(parents=True, exist_ok=True)
    splits: dict[str, list[SourceFile] | list[EditPair]] = {
        "train.jsonl": sources[dev_files:], "dev.jsonl": sources[:dev_files],
        "edits_train.jsonl": apart[dev_pairs:],
        "edits_dev.jsonl": apart[:dev_pairs] + [pair for pair in pairs if pair.path in held_out]}
    for name, records in splits.items():
        with open(out_dir / name, "w") as handle:
            for record in records:
                handle.write(json.dumps(asdict(record)) + "\n")
    counts = {name.removesuffix(".jsonl"): len(records) for name, records in splits.items()}
    log.info("repository corpus of %s: %s", root, counts)
    return counts

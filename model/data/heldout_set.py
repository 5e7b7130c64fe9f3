"""Sets of packages in no corpus: code no model here has trained on, to benchmark on.

A set is a few pinned sdists (``name==version``), filtered as the corpus filters its files,
with at most ``max_files_per_package`` files of each (drawn with ``seed``) so that one big
package does not decide the figures. It is written as ``files.jsonl`` (the corpus format,
which ``redraft bench fim --dev`` cuts spans from) and as a source tree ``src/PACKAGE/…``
(for ``redraft bench rename``). The same arguments give the same files byte for byte, so a
set can be rebuilt on a fresh machine from the command in the README.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from model.data.corpus import (
    DEV_PACKAGES,
    EXCLUDED_NAMES,
    SourceFile,
    is_excluded_path,
    looks_usable,
    package_name,
    pinned_packages,
    sdist_files,
    sdist_metadata,
    sdist_package,
)
from model.data.sdist_download import download_sdists

log = logging.getLogger(__name__)

FILES_NAME = "files.jsonl"
EDITS_NAME = "edits.jsonl"  # with --edits: each package's files changed since its previous release


@dataclass(frozen=True)
class PackageCount:
    package: str
    usable: int  # files that pass the corpus's filters
    kept: int  # of those, in the set


def refuse_known_packages(requirements: list[str], pinned: list[str]) -> None:
    """A set must hold only code that is in no corpus, dev set or hidden evaluation."""
    corpus = {package_name(req) for req in pinned}
    for requirement in requirements:
        name = package_name(requirement)
        if "==" not in requirement:
            hint = " (an npm release? add --npm)" if "@" in requirement else ""
            raise ValueError(f"{requirement!r}: pin a version (name==version) so the set can be rebuilt{hint}")
        if name in EXCLUDED_NAMES:
            raise ValueError(f"{name} is used by the hidden evaluation and stays out of every set")
        if name in DEV_PACKAGES:
            raise ValueError(f"{name} is a held-out dev package (calibration sees it)")
        if name in corpus:
            raise ValueError(f"{name} is in the training corpus (model/data/corpus_packages.txt)")


def same_version(found: str, pinned: str) -> bool:
    try:
        return Version(found) == Version(pinned)
    except InvalidVersion:
        return found == pinned


def usable_files(files: list[SourceFile]) -> list[SourceFile]:
    """The files the corpus would keep, and only those a source tree can hold safely."""
    return [f for f in files if not is_excluded_path(f.path) and looks_usable(f.text)
            and not Path(f.path).is_absolute() and ".." not in Path(f.path).parts]


def draw_files(usable: list[SourceFile], max_files: int | None, seed: int) -> list[SourceFile]:
    """All of a package's usable files, or ``max_files`` of them drawn with ``seed``."""
    if max_files is not None and len(usable) > max_files:
        return random.Random(seed).sample(usable, max_files)
    return usable


def build_heldout_set(requirements: list[str], out_dir: Path, max_files_per_package: int | None = None,
                      seed: int = 0, pinned: list[str] | None = None) -> list[PackageCount]:
    """Fetch the sdists into ``out_dir/sdists`` (those not there yet) and write the set."""
    refuse_known_packages(requirements, pinned_packages() if pinned is None else pinned)
    sdist_dir = out_dir / "sdists"
    download_sdists(requirements, sdist_dir)
    wanted = {package_name(req) for req in requirements}
    archives = sorted(p for p in sdist_dir.iterdir() if p.is_file() and sdist_package(p) in wanted)
    missing = wanted - {sdist_package(p) for p in archives}
    if missing:
        raise RuntimeError(f"no sdist for {', '.join(sorted(missing))} (see the warnings above)")
    # download_sdists keeps a package's archive whatever its version, so a folder used before
    # could hold another release than the one pinned: the set would not be the one asked for.
    pins = {package_name(req): req.split("==", 1)[1].strip() for req in requirements}
    for archive in archives:
        found = sdist_metadata(archive)[0]
        if not same_version(found, pins[sdist_package(archive)]):
            raise RuntimeError(f"{sdist_dir} holds {archive.name} (version {found}), not "
                               f"{sdist_package(archive)}=={pins[sdist_package(archive)]}: use a new folder")
    counts, records = [], []
    for archive in archives:
        usable = usable_files(list(sdist_files(archive)))
        kept = draw_files(usable, max_files_per_package, seed)
        counts.append(PackageCount(sdist_package(archive), len(usable), len(kept)))
        records.extend(kept)
    write_set(records, out_dir)
    log.info("held-out set: %d files of %d packages in %s", len(records), len(counts), out_dir)
    return counts


def write_set(records: list[SourceFile], out_dir: Path) -> None:
    """``files.jsonl`` and the source tree ``src/PACKAGE/PATH``, whatever registry the files came from.
    The tree is written afresh: files of an earlier build's draw would join ``bench rename``'s cases."""
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / "src", ignore_errors=True)
    with open(out_dir / FILES_NAME, "w") as handle:
        for source in records:
            handle.write(json.dumps({"package": source.package, "path": source.path, "text": source.text}) + "\n")
    for source in records:
        target = out_dir / "src" / source.package / source.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.text)


def format_counts(counts: list[PackageCount]) -> str:
    rows = [f"{'package':<24} {'usable':>6} {'kept':>6}"]
    rows += [f"{c.package:<24} {c.usable:>6} {c.kept:>6}" for c in counts]
    rows.append(f"{'total':<24} {sum(c.usable for c in counts):>6} {sum(c.kept for c in counts):>6}")
    return "\n".join(rows)

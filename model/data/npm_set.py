"""Held-out sets of JavaScript and TypeScript: pinned npm releases, as ``heldout_set`` builds
them from PyPI sdists.

The set is written the same way (``files.jsonl`` of ``{package, path, text}`` and the tree
``src/PACKAGE/PATH``), so ``redraft bench fim --dev`` reads it unchanged, and beside them
``packages.json``: each release's version, licence, integrity and file counts. The tarballs
stay in ``OUT/tarballs``, checked against the registry's sha512 on every build.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from model.data.corpus import SourceFile
from model.data.heldout_set import draw_files, write_set
from model.data.js_sources import handwritten_sources, language_of
from model.data.npm_corpus import NPM_DEV_PACKAGES, npm_corpus_names
from model.data.npm_download import fetch_tarballs, licence_of, read_tarball, refuse_npm_requirements, sri_sha512

log = logging.getLogger(__name__)

NPM_INDEX_NAME = "packages.json"
TARBALL_FOLDER = "tarballs"


@dataclass(frozen=True)
class NpmPackage:
    """One release of a set, as recorded in ``packages.json``."""

    package: str
    version: str
    licence: str
    integrity: str  # the tarball's sha512, checked against the registry's
    usable: int  # files that pass the filters of ``js_sources``
    kept: int  # of those, in the set
    javascript: int  # of the kept files, by language
    typescript: int


def build_npm_set(requirements: list[str], out_dir: Path, max_files_per_package: int | None = None,
                  seed: int = 0) -> list[NpmPackage]:
    """Fetch and check the tarballs into ``out_dir/tarballs`` and write the set. A release
    of a package the training corpus holds (in any version) or holds out is refused."""
    pins = refuse_npm_requirements(requirements)
    known = npm_corpus_names() | NPM_DEV_PACKAGES
    for pin in pins:
        if pin.name in known:
            held = "holds out for its dev split" if pin.name in NPM_DEV_PACKAGES else "trains on"
            raise ValueError(f"{pin.name} is a package the corpus {held} (corpus_npm_packages.txt): "
                             "a held-out set holds only code in no corpus")
    tarballs = fetch_tarballs(pins, out_dir / TARBALL_FOLDER)
    packages, records = [], []
    for pin in sorted(pins, key=lambda p: p.name):
        manifest, files = read_tarball(tarballs[pin.name])
        if manifest.get("name") != pin.name or manifest.get("version") != pin.version:
            raise RuntimeError(f"{tarballs[pin.name]} holds {manifest.get('name')}@{manifest.get('version')}, "
                               f"not {pin.spec}")
        usable = [SourceFile(pin.name, path, text) for path, text in handwritten_sources(files)]
        if not usable:
            log.warning("%s has no hand-written sources (only built output?)", pin.spec)
        kept = draw_files(usable, max_files_per_package, seed)
        languages = [language_of(source.path) for source in kept]
        packages.append(NpmPackage(pin.name, pin.version, licence_of(manifest),
                                   sri_sha512(tarballs[pin.name].read_bytes()),
                                   len(usable), len(kept), languages.count("javascript"),
                                   languages.count("typescript")))
        records.extend(kept)
    write_set(records, out_dir)
    (out_dir / NPM_INDEX_NAME).write_text(json.dumps([asdict(p) for p in packages], indent=1) + "\n")
    log.info("npm held-out set: %d files of %d packages in %s", len(records), len(packages), out_dir)
    return packages


def format_npm_packages(packages: list[NpmPackage]) -> str:
    """The set as a table: one row per release, then the totals."""
    width = max([len("package"), *(len(p.package) for p in packages)])
    header = f"{'package':<{width}} {'version':<10} {'licence':<14} {'usable':>6} {'kept':>5} {'js':>4} {'ts':>4}"
    rows = [header]
    rows += [f"{p.package:<{width}} {p.version:<10} {p.licence:<14} {p.usable:>6} {p.kept:>5} "
             f"{p.javascript:>4} {p.typescript:>4}" for p in packages]
    rows.append(f"{'total':<{width}} {'':<10} {'':<14} {sum(p.usable for p in packages):>6} "
                f"{sum(p.kept for p in packages):>5} {sum(p.javascript for p in packages):>4} "
                f"{sum(p.typescript for p in packages):>4}")
    return "\n".join(rows)

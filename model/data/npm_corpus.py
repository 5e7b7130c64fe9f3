"""The corpus's JavaScript and TypeScript: the hand-written sources of pinned npm releases
(``corpus_npm_packages.txt``), beside the Python of ``corpus.py``.

Each tarball is fetched with ``npm pack`` and checked against the registry's sha512
(``npm_download.py``); only the files ``js_sources.py`` takes for hand-written are kept
(no ``dist/`` bundles, minified files, declarations or compiled twins). The split is by
package, as for Python: the releases of ``NPM_DEV_PACKAGES`` are held out. The files go
to ``npm_train.jsonl`` and ``npm_dev.jsonl`` (not into the Python files, so a run chooses
each language's share of its examples, and the Python dev split the calibration reads
stays as it was), and ``npm_packages.json`` records each release's version, licence,
integrity, split and size. The index is written last: a build cut short is built again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from model.data.corpus import SourceFile, looks_usable, pinned_packages, read_corpus
from model.data.js_sources import handwritten_sources
from model.data.npm_download import (
    NPM_EXCLUDED_NAMES,
    NpmRequirement,
    fetch_tarballs,
    licence_of,
    read_tarball,
    refuse_npm_requirements,
    sri_sha512,
)

log = logging.getLogger(__name__)

NPM_PACKAGE_LIST = Path(__file__).parent / "corpus_npm_packages.txt"
NPM_TRAIN_FILE = "npm_train.jsonl"
NPM_DEV_FILE = "npm_dev.jsonl"
NPM_CORPUS_INDEX = "npm_packages.json"
NPM_TARBALL_FOLDER = "npm_tarballs"  # under the work directory, beside ``sdists``

# Held out by package, as corpus.DEV_PACKAGES: the dev loss of JavaScript and TypeScript.
NPM_DEV_PACKAGES = frozenset({"mnemonist", "peggy", "@internationalized/date", "pdf-lib"})


@dataclass(frozen=True)
class NpmCorpusPackage:
    """One release of the npm corpus, as ``npm_packages.json`` records it."""

    package: str
    version: str
    licence: str
    integrity: str  # the tarball's sha512 (checked against the registry's when fetched)
    split: str
    files: int
    characters: int


def pinned_npm_packages(path: Path = NPM_PACKAGE_LIST) -> list[str]:
    """``name@version`` lines of the pinned list, read as the PyPI list is."""
    return pinned_packages(path)


def npm_corpus_names(path: Path = NPM_PACKAGE_LIST) -> frozenset[str]:
    """The npm packages the corpus holds, in any version: a held-out set must hold none."""
    return frozenset(requirement.name for requirement in refuse_npm_requirements(pinned_npm_packages(path)))


def _names_the_evaluation(path: str) -> bool:
    """A file whose folders or module name one of the evaluation's packages (a vendored copy)."""
    return any(part.lower().split(".")[0] in NPM_EXCLUDED_NAMES for part in path.split("/"))


def _present_tarballs(pins: list[NpmRequirement], folder: Path) -> dict[str, Path]:
    """The tarballs already fetched (no registry to check them against: their sha512 is still
    recorded); a missing one is left out with a warning."""
    found = {}
    for pin in pins:
        path = folder / pin.tarball_name
        if path.is_file():
            found[pin.name] = path
        else:
            log.warning("%s is not in %s and downloads are off: left out", pin.spec, folder)
    return found


def build_npm_corpus(requirements: list[str], tarball_dir: Path, corpus_dir: Path,
                     download: bool = True) -> list[NpmCorpusPackage]:
    """Write ``npm_train.jsonl``, ``npm_dev.jsonl`` and ``npm_packages.json`` into
    ``corpus_dir`` from the releases' tarballs (fetched into ``tarball_dir`` and checked,
    or with ``download`` off, those already there)."""
    pins = refuse_npm_requirements(requirements)
    tarballs = fetch_tarballs(pins, tarball_dir) if download else _present_tarballs(pins, tarball_dir)
    corpus_dir.mkdir(parents=True, exist_ok=True)
    index: list[NpmCorpusPackage] = []
    written = {split: corpus_dir / f".{name}.partial" for split, name in (("train", NPM_TRAIN_FILE),
                                                                           ("dev", NPM_DEV_FILE))}
    try:
        _write_splits(pins, tarballs, written, index)
    except BaseException:
        for path in written.values():
            path.unlink(missing_ok=True)
        raise
    written["train"].replace(corpus_dir / NPM_TRAIN_FILE)
    written["dev"].replace(corpus_dir / NPM_DEV_FILE)
    (corpus_dir / NPM_CORPUS_INDEX).write_text(json.dumps([asdict(p) for p in index], indent=1) + "\n")
    log.info("npm corpus: %d train and %d dev files of %d releases", sum(p.files for p in index if p.split == "train"),
             sum(p.files for p in index if p.split == "dev"), len(index))
    return index


def _write_splits(pins: list[NpmRequirement], tarballs: dict[str, Path], written: dict[str, Path],
                  index: list[NpmCorpusPackage]) -> None:
    """Each release's kept files into ``written[split]``, its record appended to ``index``."""
    seen: set[str] = set()
    with open(written["train"], "w") as train, open(written["dev"], "w") as dev:
        handles = {"train": train, "dev": dev}
        for pin in sorted(pins, key=lambda p: p.name):
            if pin.name not in tarballs:
                continue
            manifest, files = read_tarball(tarballs[pin.name])
            if manifest.get("name") != pin.name or manifest.get("version") != pin.version:
                raise RuntimeError(f"{tarballs[pin.name]} holds {manifest.get('name')}@{manifest.get('version')}, "
                                   f"not {pin.spec}")
            split = "dev" if pin.name in NPM_DEV_PACKAGES else "train"
            kept = characters = 0
            for path, text in handwritten_sources(files):
                key = hashlib.sha1(text.strip().encode()).hexdigest()
                if key in seen or _names_the_evaluation(path) or not looks_usable(text):
                    continue
                seen.add(key)
                handles[split].write(json.dumps(asdict(SourceFile(pin.name, path, text))) + "\n")
                kept += 1
                characters += len(text)
            if not kept:
                log.warning("%s has no hand-written sources (only built output?)", pin.spec)
            index.append(NpmCorpusPackage(pin.name, pin.version, licence_of(manifest),
                                          sri_sha512(tarballs[pin.name].read_bytes()), split, kept, characters))


def read_npm_index(corpus_dir: Path) -> list[NpmCorpusPackage]:
    """The releases ``build_npm_corpus`` recorded; none when it has not run."""
    path = corpus_dir / NPM_CORPUS_INDEX
    if not path.is_file():
        return []
    return [NpmCorpusPackage(**entry) for entry in json.loads(path.read_text())]


def read_npm_split(corpus_dir: Path, split: str) -> list[SourceFile]:
    """The npm corpus's ``train`` or ``dev`` files; none when it was not built."""
    path = corpus_dir / (NPM_TRAIN_FILE if split == "train" else NPM_DEV_FILE)
    return read_corpus(path) if path.is_file() else []


def npm_package_table(index: list[NpmCorpusPackage]) -> str:
    """The npm corpus as a Markdown table, one row per release."""
    rows = ["| package | version | licence | split | files | characters |", "| --- | --- | --- | --- | ---: | ---: |"]
    rows += [f"| {p.package} | {p.version} | {p.licence.replace('|', '/')} | {p.split} | {p.files:,} | "
             f"{p.characters:,} |" for p in index]
    train = [p for p in index if p.split == "train"]
    rows.append(f"| **{len(train)} train / {len(index) - len(train)} dev releases** | | | | "
                f"{sum(p.files for p in index):,} | {sum(p.characters for p in index):,} |")
    return "\n".join(rows)

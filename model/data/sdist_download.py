"""Fetching the pinned sdists the corpus reads: from PyPI's JSON API (that release, or the
newest final one before it), checked against its published sha256, else with pip; several
at a time, and only those not in the folder yet."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from model.data.corpus import EXCLUDED_NAMES, package_name, sdist_package

log = logging.getLogger(__name__)


def download_sdist(requirement: str, name: str, dest: Path) -> str | None:
    """Fetch one sdist with pip (no dependencies) into ``dest``; pip's last words on failure."""
    # Build isolation: pip reads an sdist's metadata with its own build backend (hatchling,
    # flit, poetry…), which a fresh venv does not have. Only the package itself must be an
    # sdist: with ``--no-binary :all:`` the backends' own dependencies were built from
    # source too, and those that need Rust or a newer backend failed (mypy, bidict…).
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", name,
           "--ignore-requires-python", "-d", str(dest), requirement]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    return None if done.returncode == 0 else done.stderr.strip()[-200:]


PYPI_PROJECT_JSON = "https://pypi.org/pypi/{name}/json"


def _sdist_entries(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in files if entry["packagetype"] == "sdist"]


def _newest_release_before(releases: dict[str, list[dict[str, Any]]], version: str) -> str | None:
    """The newest final release older than ``version`` with an sdist not yanked, as
    ``pip download "name<version"`` chooses (pre-releases and unparsable versions skipped)."""
    below = Version(version)
    found: list[tuple[Version, str]] = []
    for text, files in releases.items():
        try:
            candidate = Version(text)
        except InvalidVersion:
            continue
        if candidate < below and not candidate.is_prerelease and \
                any(not entry.get("yanked", False) for entry in _sdist_entries(files)):
            found.append((candidate, text))
    return max(found)[1] if found else None


def fetch_sdist_from_index(requirement: str, dest: Path) -> str | None:
    """The source archive of ``name==version`` (that release) or ``name<version`` (the
    newest final release before it) straight from PyPI's JSON API; the error on failure.

    pip must build an sdist's metadata before it saves the archive, and that fails where
    the build needs a compiler (numpy, pandas): the archive itself is all the corpus reads.
    """
    earlier = "==" not in requirement
    name, version = (part.strip() for part in requirement.split("<" if earlier else "==", 1))
    url = PYPI_PROJECT_JSON.format(name=name)
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            project = json.load(response)
        releases = project["releases"]
        chosen = _newest_release_before(releases, version) if earlier else version
        if chosen is None:
            return f"PyPI has no sdist before {version}"
        sdists = [entry for entry in _sdist_entries(releases.get(chosen, []))
                  if not (earlier and entry.get("yanked", False))]
        if not sdists:
            return f"PyPI has no sdist of {chosen}"
        entry = sdists[0]
        with urllib.request.urlopen(urllib.parse.urljoin(url, entry["url"]), timeout=600) as response:
            data = response.read()
    except (OSError, ValueError, KeyError) as error:  # InvalidVersion is a ValueError
        return f"PyPI: {error}"
    if hashlib.sha256(data).hexdigest() != entry["digests"]["sha256"]:
        return "PyPI: the archive does not match its published sha256"
    target = dest / Path(entry["filename"]).name
    partial = target.with_name(target.name + ".part")  # never a half-written archive in dest
    try:
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        return f"could not save {target.name}: {error}"
    return None


def fetch_sdist(requirement: str, dest: Path) -> str | None:
    """One sdist (``name==version`` or ``name<version``) into ``dest``: from PyPI's JSON API,
    else with pip (an index pip is configured for, where pypi.org is out of reach); both
    errors on failure.

    The index comes first because it only downloads: pip prepares each sdist's metadata in a
    fresh build environment. On a 2-core machine pip fetched about 20 pins a minute, the
    index 305 in 40 seconds."""
    if (index_error := fetch_sdist_from_index(requirement, dest)) is None:
        return None
    if (pip_error := download_sdist(requirement, package_name(requirement.split("<")[0]), dest)) is None:
        return None
    return f"{index_error}; pip: {pip_error}"


def download_sdists(requirements: Iterable[str], dest: Path, workers: int = 4) -> None:
    """Fetch the pinned source distributions (those not in ``dest`` yet)."""
    dest.mkdir(parents=True, exist_ok=True)

    def fetch(req: str) -> None:
        name = package_name(req)
        # The exact package: ``requests`` is not ``requests-oauthlib``, downloaded first.
        if name in EXCLUDED_NAMES or any(sdist_package(p) == name for p in dest.iterdir() if p.is_file()):
            return
        if (error := fetch_sdist(req, dest)) is not None:
            log.warning("could not download %s: %s", req, error)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(fetch, requirements))

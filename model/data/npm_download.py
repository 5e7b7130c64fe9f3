"""Fetching pinned npm tarballs with ``npm pack``, each checked against the sha512 the
registry publishes for that release (``dist.integrity``), and reading what they hold.

The check hashes the file here rather than trusting npm's word for it, and covers a tarball
already in the folder as well as a new one: a set is only the set its command names if every
byte came from the registry's release.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from model.data.corpus import MAX_FILE_BYTES, MAX_LICENCE_CHARS

log = logging.getLogger(__name__)

# The hidden evaluation uses these npm packages; they, and packages named after them, stay out
# of every set (see ``excluded_word``).
NPM_EXCLUDED_NAMES = frozenset({"rxjs", "zod", "immer", "commander", "express"})

# An exact release: a range (^1.2.0), a tag (latest) or a partial version (1.2) could name
# another release tomorrow, and the set could not be rebuilt.
EXACT_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
PACKAGE_NAME = re.compile(r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")
NPM_TIMEOUT_S = 600


class IntegrityError(RuntimeError):
    """A tarball whose bytes are not those the registry published."""


@dataclass(frozen=True)
class NpmRequirement:
    name: str  # as the registry spells it, scope included: "@tanstack/query-core"
    version: str

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def tarball_name(self) -> str:
        """The file name ``npm pack`` gives it: ``@scope/name`` becomes ``scope-name``."""
        return f"{self.name.removeprefix('@').replace('/', '-')}-{self.version}.tgz"


def parse_npm_requirement(text: str) -> NpmRequirement:
    """``name@version`` or ``@scope/name@version`` with an exact version; ValueError otherwise."""
    at = text.rfind("@")
    if at <= 0:  # no "@" past a scope's leading one: no version given
        raise ValueError(f"{text!r}: pin a version (name@version) so the set can be rebuilt")
    name, version = text[:at].strip(), text[at + 1:].strip()
    if not PACKAGE_NAME.fullmatch(name):
        raise ValueError(f"{text!r}: {name!r} is not an npm package name")
    if not EXACT_VERSION.fullmatch(version):
        raise ValueError(f"{text!r}: pin an exact version (name@1.2.3), not a range or a tag, "
                         "so the set can be rebuilt")
    return NpmRequirement(name, version)


def excluded_word(name: str) -> str | None:
    """The evaluation's package that ``name`` is named after, if any.

    A name is split into words at ``@ / - . _``: ``@types/express``, ``rxjs-compat``,
    ``zod-to-json-schema`` and ``@zod/mini`` all hold or mirror that package's code or API,
    so they are refused with it. The cost is a few unrelated packages (``express-session``)."""
    words = set(re.split(r"[@/._-]+", name.lower()))
    found = sorted(words & NPM_EXCLUDED_NAMES)
    return found[0] if found else None


def refuse_npm_requirements(requirements: Sequence[str]) -> list[NpmRequirement]:
    """The requirements parsed, or ValueError for the first unpinned, excluded or repeated one."""
    parsed: list[NpmRequirement] = []
    for text in requirements:
        requirement = parse_npm_requirement(text)
        if (word := excluded_word(requirement.name)) is not None:
            raise ValueError(f"{requirement.name}: {word} is used by the hidden evaluation, so it and packages "
                             f"named after it (@types/{word}, {word}-…) stay out of every set")
        if any(other.name == requirement.name for other in parsed):
            raise ValueError(f"{requirement.name} is named twice: one release of each package")
        parsed.append(requirement)
    return parsed


def sri_sha512(data: bytes) -> str:
    """``data``'s Subresource Integrity string, as the registry writes ``dist.integrity``."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def sha512_of(integrity: str) -> str | None:
    """The ``sha512-…`` entry of an integrity string (it may list several hashes), if any."""
    return next((token for token in integrity.split() if token.startswith("sha512-")), None)


def check_tarball(path: Path, integrity: str, advice: str = "") -> None:
    """IntegrityError (ending with ``advice``) unless the file's sha512 is the one in ``integrity``."""
    expected = sha512_of(integrity)
    if expected is None:
        raise IntegrityError(f"{path.name}: the registry publishes no sha512 for it ({integrity!r}), "
                             "so it cannot be checked")
    actual = sri_sha512(path.read_bytes())
    if actual != expected:
        raise IntegrityError(f"{path.name}: its sha512 ({actual[:24]}…) is not the registry's ({expected[:24]}…)"
                             + (f": {advice}" if advice else ""))


def _npm(arguments: list[str], cwd: Path) -> str:
    """npm's stdout, or RuntimeError with npm's own reason."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: install Node.js to build an npm set")
    # cwd is a folder of our own, so no package.json or .npmrc of the caller's project applies.
    done = subprocess.run([npm, *arguments], cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT_S,
                          check=False)
    if done.returncode == 0:
        return done.stdout
    try:  # with --json, npm writes its error to stdout as {"error": {"summary": ...}}
        reason = str(json.loads(done.stdout)["error"]["summary"])
    except (ValueError, KeyError, TypeError):
        reason = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
    raise RuntimeError(f"npm {arguments[0]}: {reason}")


def registry_integrity(requirement: NpmRequirement) -> str:
    """The ``dist.integrity`` the registry publishes for the release."""
    with tempfile.TemporaryDirectory(prefix="redraft-npm-") as folder:
        out = _npm(["view", requirement.spec, "dist.integrity", "--json"], Path(folder))
    try:
        integrity = json.loads(out) if out.strip() else None
    except ValueError:
        integrity = None
    if not isinstance(integrity, str) or not integrity:
        raise RuntimeError(f"the registry gives no integrity for {requirement.spec}")
    return integrity


def npm_pack(requirement: NpmRequirement, folder: Path) -> tuple[Path, str]:
    """Download the release's tarball into ``folder``: (its path, the integrity npm reports)."""
    out = _npm(["pack", requirement.spec, "--json", "--ignore-scripts", "--pack-destination", str(folder)], folder)
    try:
        entry = json.loads(out)[0]
        return folder / Path(str(entry["filename"])).name, str(entry["integrity"])
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise RuntimeError(f"npm pack {requirement.spec}: unexpected output ({error})") from error


def fetch_tarball(requirement: NpmRequirement, dest: Path) -> Path:
    """The release's tarball in ``dest``, fetched unless it is there, checked either way."""
    expected = registry_integrity(requirement)
    target = dest / requirement.tarball_name
    if target.is_file():
        check_tarball(target, expected, f"{target} is corrupt or another release; delete it to fetch it again")
        return target
    # Packed into a folder of its own, so a failed or half-written download never lands in dest.
    with tempfile.TemporaryDirectory(dir=dest, prefix=".pack-") as folder:
        packed, reported = npm_pack(requirement, Path(folder))
        if sha512_of(reported) != sha512_of(expected):
            raise IntegrityError(f"{requirement.spec}: npm pack reports integrity {reported[:31]}…, the registry "
                                 f"{expected[:31]}…")
        check_tarball(packed, expected, "the download is corrupt, so it was not kept")
        packed.replace(target)
    log.info("fetched %s (%s)", requirement.spec, expected[:31])
    return target


def fetch_tarballs(requirements: Sequence[NpmRequirement], dest: Path, workers: int = 4) -> dict[str, Path]:
    """Each release's checked tarball in ``dest``, by package name; RuntimeError naming every
    package that could not be fetched or checked."""
    dest.mkdir(parents=True, exist_ok=True)

    def fetch(requirement: NpmRequirement) -> Path | str:
        try:
            return fetch_tarball(requirement, dest)
        except (RuntimeError, OSError, subprocess.SubprocessError) as error:
            return str(error)

    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(pool.map(fetch, requirements))
    failures = [f"{r.spec}: {o}" for r, o in zip(requirements, outcomes, strict=True) if isinstance(o, str)]
    if failures:
        raise RuntimeError("could not fetch every tarball:\n  " + "\n  ".join(failures))
    return {r.name: o for r, o in zip(requirements, outcomes, strict=True) if isinstance(o, Path)}


def read_tarball(archive: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(package.json, {path: text}) of an npm tarball, its top folder (``package/``) stripped;
    files that are not UTF-8, too large, or whose paths climb out of the package are left out."""
    manifest: dict[str, Any] = {}
    files: dict[str, str] = {}
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 2 or member.size > MAX_FILE_BYTES \
                    or member.name.startswith("/") or ".." in parts:
                continue
            handle = tf.extractfile(member)
            if handle is None:
                continue
            path = "/".join(parts[1:])
            try:
                text = io.TextIOWrapper(io.BytesIO(handle.read()), "utf-8").read()
            except UnicodeDecodeError:
                continue
            if path == "package.json":
                try:
                    manifest = json.loads(text)
                except ValueError:
                    log.warning("%s: package.json is not JSON", archive.name)
            else:
                files[path] = text
    return manifest, files


def licence_of(manifest: dict[str, Any]) -> str:
    """package.json's ``license`` (an SPDX expression), or the older ``{type}`` and
    ``licenses: [{type}]`` forms; "unknown" when it names none."""
    declared = manifest.get("license")
    if isinstance(declared, dict):
        declared = declared.get("type")
    if not declared and isinstance(manifest.get("licenses"), list):
        declared = " OR ".join(str(entry.get("type")) for entry in manifest["licenses"]
                               if isinstance(entry, dict) and entry.get("type"))
    text = str(declared or "").strip()
    return text if text and len(text) <= MAX_LICENCE_CHARS else "unknown"

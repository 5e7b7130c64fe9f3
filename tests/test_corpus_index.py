"""The corpus index: every package with its version, licence, split and size."""

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from model.data import corpus, sdist_download
from model.data.corpus import PACKAGE_INDEX, PackageInfo, SourceFile, build_corpus, package_table, sdist_metadata


def write_tar(archive: Path, members: dict[str, str]) -> Path:
    with tarfile.open(archive, "w:gz") as tf:
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return archive


def fake_sdist(folder: Path, name: str, version: str, headers: str, code: str) -> Path:
    return write_tar(folder / f"{name}-{version}.tar.gz", {
        f"{name}-{version}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{headers}",
        f"{name}-{version}/{name}/core.py": code})


def test_licence_comes_from_the_expression_then_a_short_field_then_classifiers(tmp_path: Path) -> None:
    expression = fake_sdist(tmp_path, "alpha", "1.0", "License-Expression: MIT\nLicense: whatever\n", "a = 1\n")
    short = fake_sdist(tmp_path, "beta", "2.0", "License: BSD-3-Clause\n", "b = 2\n")
    classified = fake_sdist(tmp_path, "gamma", "3.0", "License: " + "x" * 200 + "\n"
                            "Classifier: License :: OSI Approved :: Apache Software License\n", "c = 3\n")
    silent = fake_sdist(tmp_path, "delta", "4.0", "", "d = 4\n")
    assert sdist_metadata(expression) == ("1.0", "MIT")
    assert sdist_metadata(short) == ("2.0", "BSD-3-Clause")
    assert sdist_metadata(classified) == ("3.0", "Apache Software License")
    assert sdist_metadata(silent) == ("4.0", "unknown")


def test_building_the_corpus_writes_the_index_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stdlib = [SourceFile("stdlib", "json/tool.py", "import json\n")]
    monkeypatch.setattr(corpus, "stdlib_files", lambda: iter(stdlib))
    sdists = tmp_path / "sdists"
    sdists.mkdir()
    fake_sdist(sdists, "bottle", "0.13", "License: MIT\n", "def route(path):\n    return path\n")
    fake_sdist(sdists, "widget", "1.2", "License-Expression: Apache-2.0\n", "class Widget:\n    size = 3\n")
    build_corpus(sdists, tmp_path / "corpus")
    index = {row["package"]: row for row in json.loads((tmp_path / "corpus" / PACKAGE_INDEX).read_text())}
    assert index["widget"] == {"package": "widget", "version": "1.2", "licence": "Apache-2.0", "split": "train",
                               "files": 1, "characters": len("class Widget:\n    size = 3\n")}
    assert index["bottle"]["split"] == "dev" and index["bottle"]["licence"] == "MIT"
    assert index["stdlib"]["licence"] == "PSF-2.0"
    table = package_table([PackageInfo(**row) for row in index.values()])
    assert "| widget | 1.2 | Apache-2.0 | train | 1 |" in table


def test_a_training_package_s_copy_of_a_dev_module_stays_out_and_the_dev_file_stays_held_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sqlmap ships bottle.py in its thirdparty folder; sorted first, its copy took the file.
    monkeypatch.setattr(corpus, "stdlib_files", lambda: iter([]))
    sdists = tmp_path / "sdists"
    sdists.mkdir()
    dev_code = "def route(path):\n    return path\n"
    write_tar(sdists / "aardvark-1.0.tar.gz", {"aardvark-1.0/aardvark/thirdparty/bottle/bottle.py": dev_code,
                                               "aardvark-1.0/aardvark/scheduler.py": "jobs = []\n"})
    fake_sdist(sdists, "bottle", "0.13", "License: MIT\n", dev_code)
    build_corpus(sdists, tmp_path / "corpus")
    def records(split: str) -> list[tuple[str, str]]:
        lines = (tmp_path / "corpus" / f"{split}.jsonl").read_text().splitlines()
        return [(row["package"], row["path"]) for row in map(json.loads, lines)]
    assert records("train") == [("aardvark", "aardvark/scheduler.py")]
    assert records("dev") == [("bottle", "bottle/core.py")]


def test_only_the_package_itself_must_be_an_sdist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its build backend's dependencies may come as wheels: built from source, some needed
    # Rust or a newer backend, and mypy, bidict and isort dropped out of the corpus.
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        failed = "broken==1.0" in cmd
        return subprocess.CompletedProcess(cmd, 1 if failed else 0, "", "no metadata" if failed else "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    assert sdist_download.download_sdist("mypy==2.4.1", "mypy", tmp_path) is None
    assert sdist_download.download_sdist("broken==1.0", "broken", tmp_path) == "no metadata"
    first = calls[0]
    assert first[first.index("--no-binary") + 1] == "mypy"
    assert ":all:" not in first and "--no-deps" in first and first[-1] == "mypy==2.4.1"


class FakeResponse(io.BytesIO):
    def __enter__(self) -> "FakeResponse":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def fake_index(monkeypatch: pytest.MonkeyPatch, archive: bytes, sha256: str) -> list[str]:
    opened: list[str] = []
    # The pinned release, not the newest; a file's address may be relative to the page's.
    project = {"urls": [{"packagetype": "sdist", "url": "numpy-2.6.0.tar.gz", "filename": "numpy-2.6.0.tar.gz",
                         "digests": {"sha256": sha256}}],
               "releases": {"2.5.5": [
                   {"packagetype": "bdist_wheel", "url": "w.whl", "filename": "w.whl", "digests": {}},
                   {"packagetype": "sdist", "url": "../../packages/ab/numpy-2.5.5.tar.gz",
                    "filename": "numpy-2.5.5.tar.gz", "digests": {"sha256": sha256}}]}}

    def urlopen(url: str, timeout: float) -> FakeResponse:
        opened.append(url)
        return FakeResponse(json.dumps(project).encode() if url.endswith("/json") else archive)

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    return opened


def test_a_pinned_sdist_comes_straight_from_the_index_checked_by_its_sha256_without_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pip would prepare numpy's metadata (a compiler); the archive alone is all the corpus reads.
    archive = b"pretend this is a tarball"
    ran_pip: list[str] = []
    monkeypatch.setattr(sdist_download, "download_sdist", lambda req, name, dest: ran_pip.append(req))
    opened = fake_index(monkeypatch, archive, hashlib.sha256(archive).hexdigest())
    sdist_download.download_sdists(["numpy==2.5.5"], tmp_path, workers=1)
    assert opened == ["https://pypi.org/pypi/numpy/json", "https://pypi.org/packages/ab/numpy-2.5.5.tar.gz"]
    assert [p.name for p in tmp_path.iterdir()] == ["numpy-2.5.5.tar.gz"]
    assert (tmp_path / "numpy-2.5.5.tar.gz").read_bytes() == archive
    assert ran_pip == []

    other = tmp_path / "other"
    other.mkdir()
    fake_index(monkeypatch, archive, "0" * 64)
    assert "sha256" in (sdist_download.fetch_sdist_from_index("numpy==2.5.5", other) or "")
    assert list(other.iterdir()) == []


def test_pip_fetches_what_the_index_cannot_and_both_errors_are_logged_when_neither_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    archive = b"pretend this is a tarball"
    fake_index(monkeypatch, archive, "0" * 64)  # the index's archive fails its checksum
    ran_pip: list[tuple[str, str]] = []

    def pip(req: str, name: str, dest: Path) -> str | None:
        ran_pip.append((req, name))
        return None if name == "numpy" else "no such version"

    monkeypatch.setattr(sdist_download, "download_sdist", pip)
    assert sdist_download.fetch_sdist("numpy==2.5.5", tmp_path) is None
    assert sdist_download.fetch_sdist("numpy<2.5.5", tmp_path) is None
    with caplog.at_level("WARNING", logger="model.data.sdist_download"):
        sdist_download.download_sdists(["scipy==1.0"], tmp_path, workers=1)
    assert ran_pip == [("numpy==2.5.5", "numpy"), ("numpy<2.5.5", "numpy"), ("scipy==1.0", "scipy")]
    assert "scipy==1.0: PyPI has no sdist of 1.0; pip: no such version" in caplog.text


def test_a_package_is_not_skipped_for_another_whose_name_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # requests-oauthlib downloaded first once made requests look present: it was left out.
    (tmp_path / "requests_oauthlib-2.0.0.tar.gz").write_bytes(b"")
    fetched: list[str] = []
    monkeypatch.setattr(sdist_download, "fetch_sdist", lambda req, dest: fetched.append(req))
    sdist_download.download_sdists(["requests==2.34.2", "requests-oauthlib==2.0.0"], tmp_path, workers=1)
    assert fetched == ["requests==2.34.2"]


def test_the_pinned_list_names_each_package_once_with_a_version_and_never_an_evaluation_package() -> None:
    pins = corpus.pinned_packages()
    names = [corpus.package_name(pin) for pin in pins]
    assert len(names) == len(set(names)) >= 200
    assert all(pin.count("==") == 1 and pin.split("==")[1] for pin in pins)
    assert not set(names) & corpus.EXCLUDED_NAMES
    assert set(names) >= corpus.DEV_PACKAGES  # the held-out split is downloaded like the rest


def test_the_release_before_a_pin_comes_from_the_index_without_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model.data import edit_corpus

    archive = b"pretend this is last release's tarball"
    digest = hashlib.sha256(archive).hexdigest()

    def sdist(version: str, yanked: bool = False) -> dict[str, object]:
        return {"packagetype": "sdist", "url": f"numpy-{version}.tar.gz", "filename": f"numpy-{version}.tar.gz",
                "digests": {"sha256": digest}, "yanked": yanked}

    # Newest before 2.5.5: not the pin, a pre-release, a yanked one, wheels only, nor a
    # version that doesn't parse; 2.4.10 sorts after 2.4.9 as a version, not as text.
    releases = {"2.5.5": [sdist("2.5.5")], "2.5.5rc1": [sdist("2.5.5rc1")], "2.5.1": [sdist("2.5.1", yanked=True)],
                "2.5.0": [{"packagetype": "bdist_wheel", "url": "w.whl", "filename": "w.whl", "digests": {}}],
                "2.4.9": [sdist("2.4.9")], "2.4.10": [sdist("2.4.10")], "junk-version": [sdist("junk")]}
    opened: list[str] = []

    def urlopen(url: str, timeout: float) -> FakeResponse:
        opened.append(url)
        return FakeResponse(json.dumps({"releases": releases}).encode() if url.endswith("/json") else archive)

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    ran_pip: list[str] = []
    monkeypatch.setattr(sdist_download, "download_sdist", lambda req, name, dest: ran_pip.append(req))
    edit_corpus.download_previous_releases(["numpy==2.5.5"], tmp_path, workers=1)
    assert opened[-1] == "https://pypi.org/pypi/numpy/numpy-2.4.10.tar.gz"
    assert [p.name for p in tmp_path.iterdir()] == ["numpy-2.4.10.tar.gz"]
    assert ran_pip == []
    assert "before 2.4.9" in (sdist_download.fetch_sdist_from_index("numpy<2.4.9", tmp_path / "none") or "")


def test_a_held_out_set_s_release_pairs_are_its_files_changed_since_the_previous_release(tmp_path: Path) -> None:
    from model.data.edit_corpus import read_edit_pairs, write_release_pairs

    code = "def total(items):\n    return sum(items)\n\n\n" + "".join(f"X{n} = {n}\n" for n in range(20))
    current, previous = tmp_path / "sdists", tmp_path / "sdists_previous"
    current.mkdir()
    previous.mkdir()
    fake_sdist(current, "tallies", "1.1", "License: MIT\n", code.replace("sum(items)", "sum(items, 0)"))
    fake_sdist(previous, "tallies", "1.0", "License: MIT\n", code)
    fake_sdist(current, "steady", "2.0", "License: MIT\n", code)  # no release before it: no pair
    assert write_release_pairs(current, previous, tmp_path / "edits.jsonl") == 1
    [pair] = read_edit_pairs(tmp_path / "edits.jsonl")
    assert pair.path == "tallies/tallies/core.py" and pair.old == code and "sum(items, 0)" in pair.new

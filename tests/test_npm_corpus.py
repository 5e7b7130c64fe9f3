"""The corpus's JavaScript and TypeScript: pinned npm releases' hand-written sources, split by
package, recorded with licences, kept out of held-out sets, and drawn at their share."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from model.data.corpus import SourceFile
from model.data.npm_corpus import (
    NPM_CORPUS_INDEX,
    NPM_DEV_FILE,
    NPM_DEV_PACKAGES,
    NPM_TRAIN_FILE,
    build_npm_corpus,
    npm_corpus_names,
    npm_package_table,
    pinned_npm_packages,
    read_npm_index,
    read_npm_split,
)
from model.data.npm_download import NpmRequirement, refuse_npm_requirements, sri_sha512
from model.data.npm_set import build_npm_set
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.tokenizer import CodeTokenizer
from model.training.batches import TrainingSources, batch_stream
from model.training.train_config import TrainConfig
from tests.test_npm_heldout import COMPILED, JS_MODULE, TS_MODULE, make_tarball

ROOT = Path(__file__).resolve().parents[1]
DEV_PACKAGE = sorted(NPM_DEV_PACKAGES)[0]


def _tarball(folder: Path, name: str, version: str, files: dict[str, str], licence: str = "MIT") -> bytes:
    manifest = json.dumps({"name": name, "version": version, "license": licence})
    return make_tarball(folder / NpmRequirement(name, version).tarball_name, {"package.json": manifest, **files})


def test_sources_are_split_by_package_and_recorded_with_licence_and_integrity(tmp_path: Path) -> None:
    tarballs, corpus = tmp_path / "tarballs", tmp_path / "corpus"
    tarballs.mkdir()
    train_bytes = _tarball(tarballs, "@acme/util", "1.2.0", {
        "src/add.ts": TS_MODULE,
        "src/again.ts": TS_MODULE,  # the same text twice: kept once
        "src/vendor/zod/index.js": JS_MODULE.replace("add", "vendored"),  # the evaluation's code, vendored
        "lib/add.js": COMPILED,
        "dist/add.js": JS_MODULE,
    }, licence="Apache-2.0")
    _tarball(tarballs, DEV_PACKAGE, "3.0.0", {"lib/index.js": JS_MODULE.replace("add", "sum")})

    index = build_npm_corpus(["@acme/util@1.2.0", f"{DEV_PACKAGE}@3.0.0", "absent@1.0.0"], tarballs, corpus,
                             download=False)

    train, dev = read_npm_split(corpus, "train"), read_npm_split(corpus, "dev")
    assert [(s.package, s.path) for s in train] == [("@acme/util", "src/add.ts")]
    assert [(s.package, s.path) for s in dev] == [(DEV_PACKAGE, "lib/index.js")]
    assert "sum" in dev[0].text
    by_name = {p.package: p for p in read_npm_index(corpus)}
    assert by_name == {p.package: p for p in index}
    assert set(by_name) == {"@acme/util", DEV_PACKAGE}  # the release with no tarball is left out
    util = by_name["@acme/util"]
    assert (util.version, util.licence, util.split, util.files) == ("1.2.0", "Apache-2.0", "train", 1)
    assert util.characters == len(TS_MODULE) and util.integrity == sri_sha512(train_bytes)
    assert by_name[DEV_PACKAGE].split == "dev"
    table = npm_package_table(index)
    assert "| @acme/util | 1.2.0 | Apache-2.0 | train | 1 |" in table
    assert "**1 train / 1 dev releases**" in table
    assert not list(corpus.glob(".*partial"))


def test_a_tarball_holding_another_release_stops_the_build_and_writes_no_index(tmp_path: Path) -> None:
    tarballs, corpus = tmp_path / "tarballs", tmp_path / "corpus"
    tarballs.mkdir()
    manifest = json.dumps({"name": "other", "version": "9.9.9"})
    make_tarball(tarballs / NpmRequirement("acme", "1.0.0").tarball_name, {"package.json": manifest,
                                                                          "src/a.js": JS_MODULE})
    with pytest.raises(RuntimeError, match=re.escape("holds other@9.9.9, not acme@1.0.0")):
        build_npm_corpus(["acme@1.0.0"], tarballs, corpus, download=False)
    assert not (corpus / NPM_CORPUS_INDEX).exists()
    assert not (corpus / NPM_TRAIN_FILE).exists() and not (corpus / NPM_DEV_FILE).exists()


def test_the_pinned_list_is_exact_admissible_and_holds_its_dev_packages() -> None:
    pins = refuse_npm_requirements(pinned_npm_packages())  # pinned, none of the evaluation's, none twice
    names = {pin.name for pin in pins}
    assert len(pins) >= 40
    assert names >= NPM_DEV_PACKAGES


def test_no_benchmark_set_in_the_docs_holds_a_corpus_package() -> None:
    """Every npm set docs/benchmarks.md builds was built before the corpus had npm code, so
    the corpus must stay clear of all of them (and ``build_npm_set`` refuses new overlaps)."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    in_sets = {match.rsplit("@", 1)[0] for line in re.findall(r"redraft heldout \S+ --npm[^`\n]*", text)
               for match in re.findall(r"(@?[a-z0-9][\w.~/-]*@\d[\w.+-]*)", line)}
    assert len(in_sets) >= 30
    assert not in_sets & (npm_corpus_names() | NPM_DEV_PACKAGES)


def test_a_held_out_set_refuses_a_corpus_package_before_fetching(tmp_path: Path) -> None:
    trained = sorted(npm_corpus_names() - NPM_DEV_PACKAGES)[0]
    with pytest.raises(ValueError, match="the corpus trains on"):
        build_npm_set([f"{trained}@0.0.1"], tmp_path / "set")
    with pytest.raises(ValueError, match="holds out"):
        build_npm_set([f"{DEV_PACKAGE}@0.0.1"], tmp_path / "set")
    assert not (tmp_path / "set").exists()


def test_fim_examples_come_from_npm_files_at_their_share() -> None:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
    python = SourceFile("pkg", "m.py", "".join(f"value_{i} = compute({i})\n" for i in range(60)))
    javascript = SourceFile("js", "m.js", "".join(f"const item{i} = build({i});\n" for i in range(60)))

    def npm_rows(share: float) -> float:
        config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=8, canvas_sizes=(32,),
                             npm_share=share)
        stream = batch_stream(TrainingSources([python], [], npm_files=[javascript]), tokenizer, config,
                              random.Random(0), 0.0)
        rows = [row for _ in range(10) for row in next(stream).context.tolist()]
        texts = [tokenizer.decode([t for t in row if t != tokenizer.pad_id]) for row in rows]
        return sum(("const" in text) for text in texts) / len(texts)

    assert npm_rows(0.0) == 0.0
    assert npm_rows(1.0) == 1.0
    assert 0.15 < npm_rows(0.4) < 0.65

"""A corpus pack: every held-out and npm file, Python drawn to a compressed budget, read back
by gunzip as the files training reads."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from model.data.corpus import read_corpus
from model.data.corpus_pack import PACK_MANIFEST, pack_corpus


def _write(path: Path, records: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _corpus(folder: Path) -> None:
    rng = random.Random(0)
    def text(n: int) -> str:  # incompressible enough that the budget bites
        return "".join(f"v{rng.randrange(10**9)} = {rng.randrange(10**9)}\n" for _ in range(n))
    folder.mkdir()
    _write(folder / "train.jsonl", [{"package": f"p{i}", "path": "m.py", "text": text(200)} for i in range(60)])
    _write(folder / "dev.jsonl", [{"package": "d", "path": "m.py", "text": text(20)}])
    _write(folder / "npm_train.jsonl", [{"package": "js", "path": "a.js", "text": "const a = 1;\n"}])
    _write(folder / "npm_dev.jsonl", [{"package": "jsd", "path": "b.js", "text": "let b = 2;\n"}])
    _write(folder / "edits_train.jsonl", [{"path": "m.py", "old": "a = 1\n", "new": f"a = {i}\n"} for i in range(30)])
    (folder / "npm_packages.json").write_text("[]\n")


def test_the_pack_keeps_held_out_and_npm_files_whole_and_draws_python_to_the_budget(tmp_path: Path) -> None:
    corpus, pack = tmp_path / "corpus", tmp_path / "pack"
    _corpus(corpus)
    kept = pack_corpus(corpus, pack, max_bytes=60_000)
    assert kept["dev.jsonl"] == [1, 1] and kept["npm_train.jsonl"] == [1, 1] and kept["npm_dev.jsonl"] == [1, 1]
    assert 0 < kept["train.jsonl"][0] < 60 and kept["train.jsonl"][1] == 60
    assert 0 < kept["edits_train.jsonl"][0] <= 30
    total = sum(path.stat().st_size for path in pack.iterdir())
    assert total < 60_000 * 1.3  # the last record written may pass the budget by its own size
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    for path in pack.glob("*.gz"):
        (unpacked / path.name.removesuffix(".gz")).write_bytes(gzip.decompress(path.read_bytes()))
    python = read_corpus(unpacked / "train.jsonl")
    assert len(python) == kept["train.jsonl"][0]
    assert len({s.package for s in python}) == len(python)  # drawn without replacement
    assert {s.package for s in python} <= {s.package for s in read_corpus(corpus / "train.jsonl")}
    assert json.loads((pack / PACK_MANIFEST).read_text())["kept_of"] == kept
    assert (pack / "npm_packages.json").read_text() == "[]\n"
    again = tmp_path / "again"
    pack_corpus(corpus, again, max_bytes=60_000)
    assert (again / "train.jsonl.gz").read_bytes() == (pack / "train.jsonl.gz").read_bytes()


def test_a_budget_the_held_out_files_already_fill_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    _corpus(corpus)
    with pytest.raises(ValueError, match="allow more"):
        pack_corpus(corpus, tmp_path / "pack", max_bytes=50)

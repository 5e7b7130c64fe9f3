"""``redraft ablate`` in miniature: arms train from scratch, decode held-out spans with the
real sampler, and land in one table; the length-head arm trains and decodes its own way."""

import json
import random
import sysconfig
from pathlib import Path

import pytest
import torch

from model.architecture import NetworkConfig
from model.checkpoint import LoadedModel, load_model
from model.data.corpus import SourceFile
from model.fim.inference import FimCompleter
from model.formats import middle_from_canvas
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.network import DiffusionEditor
from model.runtime.torch_serving import serve_in_torch
from model.tokenizer import CodeTokenizer
from model.training import ablations
from model.training.ablations import ARMS, arms_named, decode_length_head, format_results, run_ablations
from model.training.batches import TrainingSources, batch_stream
from model.training.fim_examples import SpanKind, parse_span_mix
from model.training.objective import losses
from model.training.train_config import TrainConfig

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def write_corpus(corpus: Path) -> None:
    corpus.mkdir(parents=True)
    names = {"train.jsonl": ["textwrap.py", "shlex.py", "fnmatch.py"], "dev.jsonl": ["glob.py", "bisect.py"]}
    for split, files in names.items():
        with open(corpus / split, "w") as handle:
            for name in files:
                text = (STDLIB / name).read_text()
                handle.write(json.dumps({"package": name[:-3], "path": name, "text": text}) + "\n")
    for split in ("edits_train.jsonl", "edits_dev.jsonl"):
        (corpus / split).write_text("")


def test_two_arms_train_decode_and_land_in_one_table(tmp_path: Path) -> None:
    write_corpus(tmp_path / "corpus")
    results = run_ablations(tmp_path, SHIPPED_DIR / TOKENIZER_FILE, steps=2, names=["base", "length_head"],
                            cases_count=3, batch_size=4)
    assert [r.name for r in results] == ["base", "length_head"]
    for result in results:
        assert result.steps == 2 and 0.0 <= result.exact <= 1.0 and 0.0 <= result.edit_similarity <= 1.0
        assert result.middle_nll > 0 and 0.0 <= result.length_right <= 1.0
        assert result.passes >= 1 and result.ms_per_pass > 0 and result.dev_next_token > 0
    assert load_model(tmp_path / "ablations" / "length_head").network.config.length_head
    saved = json.loads((tmp_path / "ablations" / "results.json").read_text())
    assert {r["name"] for r in saved} == {"base", "length_head"}
    table = format_results(results).splitlines()
    assert table[0].split()[:2] == ["arm", "question"] and table[2].startswith("length_head")


def test_every_ablation_question_has_an_arm_and_unknown_arms_are_refused() -> None:
    questions = {arm.question for arm in ARMS}
    assert {"length handling", "context next-token loss", "canvas size", "FIM span mix",
            "width vs depth"} <= questions
    with pytest.raises(ValueError, match="unknown arms"):
        arms_named(["base", "no_such_arm"])


def test_the_length_head_arm_masks_only_the_middle_and_learns_the_length() -> None:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64, length_head=True))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4, canvas_sizes=(32,))
    source = TrainingSources([SourceFile("glob", "glob.py", (STDLIB / "glob.py").read_text())], [])
    batch = next(batch_stream(source, tokenizer, config, random.Random(0), 0.0))
    diffusion = losses(network, network, batch, tokenizer, config, torch.Generator().manual_seed(0)).diffusion
    assert diffusion.item() > 0
    diffusion.backward()  # type: ignore[no-untyped-call]
    assert network.length is not None and network.length.weight.grad is not None  # the head is trained
    # Without a length head the same network class has none, and saved configs stay as they were.
    plain = NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64)
    assert "length_head" not in plain.to_dict() and DiffusionEditor(plain).length is None


def test_length_head_decoding_stops_the_middle_where_the_head_says(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64, length_head=True)).eval()
    assert network.length is not None
    with torch.no_grad():  # a head that always says "3 tokens"
        network.length.weight.zero_()
        network.length.bias.zero_()
        network.length.bias[3] = 10.0
    completer = FimCompleter(serve_in_torch(LoadedModel(network, tokenizer, {})))
    canvases: list[list[int]] = []  # what the sampler committed (re-encoding the text may split it differently)
    def recording_middle(tok: CodeTokenizer, canvas: list[int]) -> str:
        canvases.append(list(canvas))
        return middle_from_canvas(tok, canvas)
    monkeypatch.setattr(ablations, "middle_from_canvas", recording_middle)
    text, passes = decode_length_head(completer, "def f(x):\n    return ", "\n", canvas_size=32)
    assert 1 <= passes <= 3
    (canvas,) = canvases
    assert canvas[3] == tokenizer.end_of_middle_id and set(canvas[4:]) == {tokenizer.pad_id}
    assert tokenizer.mask_id not in canvas[:3] and text == tokenizer.decode(canvas[:3])


def test_a_span_mix_names_known_kinds_with_some_weight() -> None:
    assert parse_span_mix({"random_span": 1.0}) == {SpanKind.RANDOM_SPAN: 1.0}
    with pytest.raises(ValueError):
        parse_span_mix({"whole_file": 1.0})
    with pytest.raises(ValueError, match="no positive weight"):
        parse_span_mix({"rest_of_line": 0.0})

"""Averaging runs trained on from one another (weight_averaging.py, `redraft average`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from lsp_server.cli import main
from model.architecture import NetworkConfig
from model.checkpoint import load_model, save_model
from model.fim.phrase_table import PHRASES_FILE
from model.model_folder import SHIPPED_DIR
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.weight_averaging import average_models

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
CONFIG = NetworkConfig(vocab_size=TOKENIZER.vocab_size, n_layer=1, n_head=2, d_model=32, mlp_hidden=48)


def network(seed: int, config: NetworkConfig = CONFIG) -> DiffusionEditor:
    torch.manual_seed(seed)
    return DiffusionEditor(config)


def trained_on(start: DiffusionEditor, seed: int) -> DiffusionEditor:
    """``start`` moved a little, as a warm-started run moves its weights."""
    moved = DiffusionEditor(start.config)
    generator = torch.Generator().manual_seed(seed)
    moved.load_state_dict({name: tensor + 0.02 * tensor.std() * torch.randn(tensor.shape, generator=generator)
                           for name, tensor in start.state_dict().items()})
    return moved


def saved(net: DiffusionEditor, folder: Path, metadata: dict[str, object]) -> Path:
    save_model(net, TOKENIZER, folder, metadata)
    return folder


def test_the_average_is_the_mean_of_the_weights_and_keeps_the_last_folder_s_config(tmp_path: Path) -> None:
    start = network(0)
    first, second = trained_on(start, 1), trained_on(start, 2)
    a = saved(first, tmp_path / "a", {"step": 10})
    b = saved(second, tmp_path / "b", {"step": 20, "calibration": {"fim": {"bias": 0.5}}})
    (b / PHRASES_FILE).write_bytes(b"phrase table bytes")

    assert main(["average", str(a), str(b), "--into", str(tmp_path / "mean")]) == 0

    averaged = load_model(tmp_path / "mean")
    for name, tensor in averaged.network.state_dict().items():
        expected = (first.state_dict()[name] + second.state_dict()[name]) / 2
        torch.testing.assert_close(tensor, expected.half().float())  # written as fp16, as export writes
    assert averaged.metadata["step"] == 20
    assert averaged.metadata["calibration"] == {"fim": {"bias": 0.5}}
    assert averaged.metadata["averaged_from"] == [str(a), str(b)]
    assert (tmp_path / "mean" / PHRASES_FILE).read_bytes() == b"phrase table bytes"
    spreads = average_models([a, b]).spreads
    assert all(0 < spread < 0.1 for spread in spreads)


def test_averaging_refuses_what_would_not_be_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    start = network(0)
    run = saved(trained_on(start, 1), tmp_path / "run", {})
    sibling = saved(trained_on(start, 2), tmp_path / "sibling", {})
    unrelated = saved(network(7), tmp_path / "unrelated", {})
    wider = saved(network(0, NetworkConfig(vocab_size=TOKENIZER.vocab_size, n_layer=1, n_head=2, d_model=64,
                                           mlp_hidden=48)), tmp_path / "wider", {})

    with pytest.raises(ValueError, match="far from the others"):
        average_models([run, unrelated])
    with pytest.raises(ValueError, match="different network"):
        average_models([run, wider])
    with pytest.raises(ValueError, match="at least two"):
        average_models([run])

    # Through the command line: a one-line message, and no folder overwritten.
    assert main(["average", str(run), str(sibling), "--into", str(sibling)]) == 1
    assert "not to one of its inputs" in capsys.readouterr().err
    torch.testing.assert_close(load_model(sibling).network.state_dict()["embed.weight"],
                               trained_on(start, 2).state_dict()["embed.weight"])
    assert main(["average", str(run), str(tmp_path / "missing"), "--into", str(tmp_path / "out")]) == 1
    assert "missing" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()

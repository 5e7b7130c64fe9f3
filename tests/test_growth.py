"""Growing a trained network deeper (model/training/growth.py, `redraft train --init-from … --layers N`):
the grown network computes what the old one did, in training and in serving, and a
training run starts from it."""

import json
from pathlib import Path

import pytest
import torch

from model.architecture import NetworkConfig
from model.checkpoint import load_model
from model.network import DiffusionEditor
from model.training.growth import grow_depth, insertion_points
from tests.test_training_smoke import TINY, redraft


def trained_like(config: NetworkConfig) -> DiffusionEditor:
    """A network whose residual projections are not small, as a trained one's are not."""
    torch.manual_seed(0)
    network = DiffusionEditor(config)
    with torch.no_grad():
        for block in network.blocks:
            block.attn.out.weight.normal_(std=0.05)
            block.ff.down.weight.normal_(std=0.05)
    return network.eval()


def test_new_blocks_are_spread_evenly_and_a_network_never_shrinks() -> None:
    assert insertion_points(6, 9) == [1, 3, 5]
    assert insertion_points(6, 12) == [0, 1, 2, 3, 4, 5]
    assert insertion_points(6, 8) == [2, 5]
    assert insertion_points(4, 4) == []
    with pytest.raises(ValueError, match="cannot grow 6 layers to 4"):
        insertion_points(6, 4)


def test_the_grown_network_computes_what_the_old_one_did() -> None:
    config = NetworkConfig(vocab_size=300, n_layer=3, n_head=2, d_model=32, mlp_hidden=96)
    old = trained_like(config)
    grown = grow_depth(old, 5).eval()
    assert grown.config.n_layer == 5 and len(grown.blocks) == 5
    assert sum(p.numel() for p in grown.parameters()) > sum(p.numel() for p in old.parameters())
    context = torch.randint(0, 300, (2, 20))
    canvas = torch.randint(0, 300, (2, 8))
    valid = torch.ones_like(context, dtype=torch.bool)
    with torch.no_grad():
        # The training pass, and serving's: the context's cache, then a denoising pass on it.
        torch.testing.assert_close(grown.logits(grown(context, valid, canvas)), old.logits(old(context, valid, canvas)))
        old_cache, grown_cache = old.encode_context(context[:1]), grown.encode_context(context[:1])
        assert len(grown_cache) == 5
        torch.testing.assert_close(grown.denoise(canvas[:1], grown_cache), old.denoise(canvas[:1], old_cache))
    # The old network is left as it was; the new blocks are separate parameters.
    assert len(old.blocks) == 3
    assert grown.blocks[1].attn.qkv.weight.data_ptr() != old.blocks[0].attn.qkv.weight.data_ptr()


def test_a_warm_start_grows_its_model_and_trains_it(tmp_path: Path) -> None:
    first, export = tmp_path / "first", tmp_path / "exported"
    done = redraft("train", "--work-dir", str(first), "--steps", "1", "--export", str(export), *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert load_model(export).network.config.n_layer == 1
    grown_export = tmp_path / "grown"
    args = [a for a in TINY if a not in ("--layers", "1")]
    grown = redraft("-v", "train", "--work-dir", str(tmp_path / "second"), "--steps", "2", "--init-from", str(export),
                    "--layers", "3", "--export", str(grown_export), *args, cwd=tmp_path)
    assert grown.returncode == 0, grown.stderr
    assert "growing" in grown.stderr and "from 1 to 3 layers" in grown.stderr
    assert load_model(grown_export).network.config.n_layer == 3
    config = json.loads((grown_export / "config.json").read_text())
    assert config["network"]["n_layer"] == 3
    shrunk = redraft("train", "--work-dir", str(tmp_path / "third"), "--steps", "1", "--init-from",
                     str(grown_export), "--layers", "2", *args, cwd=tmp_path)
    assert shrunk.returncode != 0
    assert "cannot grow 3 layers to 2" in shrunk.stderr and "Traceback" not in shrunk.stderr

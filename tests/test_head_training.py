"""The next-token head trains on what it writes at the cursor (``FimExample.written``)."""

import random
import sysconfig
from dataclasses import replace
from pathlib import Path

import torch

from model.architecture import NetworkConfig
from model.data.corpus import SourceFile
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.batches import TrainingSources, batch_stream
from model.training.objective import losses
from model.training.train_config import TrainConfig

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
SOURCE = TrainingSources([SourceFile("glob", "glob.py",
                                     (Path(sysconfig.get_paths()["stdlib"]) / "glob.py").read_text())], [])


def test_the_head_s_loss_on_what_it_writes_trains_it_and_can_be_turned_off() -> None:
    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4, canvas_sizes=(32,))
    batch = next(batch_stream(SOURCE, TOKENIZER, config, random.Random(0), 0.0))
    assert batch.written is not None and batch.written_valid is not None
    assert 0 < batch.written.shape[1] <= config.written_tokens
    measured = losses(network, network, batch, TOKENIZER, config, torch.Generator().manual_seed(0))
    # An untrained network is about as unsure of the written tokens as of any.
    assert abs(measured.written.item() - measured.next_token.item()) < 1.0
    measured.written.backward()  # type: ignore[no-untyped-call]
    assert network.embed.weight.grad is not None and network.embed.weight.grad.abs().sum() > 0

    off = replace(config, written_loss_weight=0.0)
    batch = next(batch_stream(SOURCE, TOKENIZER, off, random.Random(0), 0.0))
    assert batch.written is None
    assert losses(network, network, batch, TOKENIZER, off, torch.Generator().manual_seed(0)).written.item() == 0.0

"""``redraft train --compile``: the training pass under ``torch.compile`` is one graph and
computes what the eager pass does, on batches padded to fixed shapes that train alike."""

import random
import sysconfig
from dataclasses import replace
from pathlib import Path

import torch
import torch._dynamo

from model.architecture import NetworkConfig
from model.data.corpus import SourceFile
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.batches import Batch, TrainingSources, batch_stream
from model.training.objective import losses
from model.training.train_config import TrainConfig

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
SOURCE = TrainingSources([SourceFile("glob", "glob.py",
                                     (Path(sysconfig.get_paths()["stdlib"]) / "glob.py").read_text())], [])
CONFIG = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4, canvas_sizes=(32,))


def _network_and_batch() -> tuple[DiffusionEditor, Batch]:
    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64))
    batch = next(batch_stream(SOURCE, TOKENIZER, CONFIG, random.Random(0), 0.0))
    assert batch.written is not None  # the head's rows, whose positions once broke the graph
    return network, batch


def test_the_training_pass_compiles_to_one_graph() -> None:
    network, batch = _network_and_batch()
    torch._dynamo.reset()
    explained = torch._dynamo.explain(network)(batch.context, batch.context_valid, batch.targets, None,
                                               batch.written, batch.written_valid)
    assert explained.graph_break_count == 0, explained.break_reasons


def test_the_compiled_pass_gives_the_eager_pass_s_losses_and_gradients() -> None:
    network, batch = _network_and_batch()
    eager = losses(network, network, batch, TOKENIZER, CONFIG, torch.Generator().manual_seed(1))
    sum(eager).backward()  # type: ignore[no-untyped-call]
    expected = {name: p.grad.clone() for name, p in network.named_parameters() if p.grad is not None}
    network.zero_grad(set_to_none=True)
    torch._dynamo.reset()
    compiled = losses(torch.compile(network), network, batch, TOKENIZER, CONFIG,
                      torch.Generator().manual_seed(1))
    sum(compiled).backward()  # type: ignore[no-untyped-call]
    for before, after in zip(eager, compiled, strict=True):
        assert torch.allclose(before, after, rtol=1e-4, atol=1e-5)
    for name, p in network.named_parameters():
        if name in expected:
            assert p.grad is not None and torch.allclose(p.grad, expected[name], rtol=1e-3, atol=1e-6), name


def test_a_batch_padded_to_fixed_shapes_has_the_same_losses() -> None:
    network, batch = _network_and_batch()
    assert batch.written is not None
    every_position = replace(CONFIG, context_loss_fraction=1.0)  # no draw over the context's shape
    padded = batch.padded_to(batch.context.shape[1] + 7, batch.written.shape[1] + 5, TOKENIZER.pad_id)
    assert padded.context.shape[1] == batch.context.shape[1] + 7
    assert padded.written is not None and padded.written.shape[1] == batch.written.shape[1] + 5
    before = losses(network, network, batch, TOKENIZER, every_position, torch.Generator().manual_seed(2))
    after = losses(network, network, padded, TOKENIZER, every_position, torch.Generator().manual_seed(2))
    for a, b in zip(before, after, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5)
    same = batch.padded_to(1, 1, TOKENIZER.pad_id)  # already wider: left as it is
    assert torch.equal(same.context, batch.context) and same.written is not None
    assert torch.equal(same.written, batch.written)

"""A share of training canvases masked whole, the state the server's one-pass decode starts from."""

import random
import sysconfig
from pathlib import Path

import torch

from model.architecture import NetworkConfig
from model.data.corpus import SourceFile
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.batches import TrainingSources, batch_stream
from model.training.objective import evaluate
from model.training.schedule import MIN_MASK_RATE, sample_mask_rate
from model.training.train_config import TrainConfig

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
SOURCE = TrainingSources([SourceFile("glob", "glob.py",
                                     (Path(sysconfig.get_paths()["stdlib"]) / "glob.py").read_text())], [])


def test_the_full_mask_share_sets_t_to_one_and_leaves_the_drawn_rates_alone_at_zero() -> None:
    # t ~ U(ε, 1) from the generator's first draws, as before the option existed.
    drawn = MIN_MASK_RATE + (1 - MIN_MASK_RATE) * torch.rand(4000, generator=torch.Generator().manual_seed(3))
    assert torch.equal(sample_mask_rate(4000, torch.Generator().manual_seed(3), 0.0), drawn)
    assert torch.equal(sample_mask_rate(4000, torch.Generator().manual_seed(3), 1.0), torch.ones(4000))
    mixed = sample_mask_rate(4000, torch.Generator().manual_seed(3), 0.5)
    whole = mixed == 1.0
    assert 0.45 < whole.float().mean().item() < 0.55
    assert torch.equal(mixed[~whole], drawn[~whole])  # the others keep their drawn rate


def test_held_out_losses_do_not_depend_on_the_run_s_share_and_report_the_whole_mask_loss() -> None:
    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4, canvas_sizes=(32,))
    stream = batch_stream(SOURCE, TOKENIZER, config, random.Random(0), 0.0)
    dev = [next(stream) for _ in range(2)]
    plain = evaluate(network, dev, [], TOKENIZER, config, autocast=False)
    mixed = evaluate(network, dev, [], TOKENIZER, TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4,
                                                              canvas_sizes=(32,), full_mask_fraction=0.5),
                     autocast=False)
    assert plain == mixed
    # Masked whole, every canvas token counts with weight 1: an untrained network's loss is
    # about the log of the vocabulary, where the drawn rates' 1/t weights scatter it.
    assert abs(plain["dev_full_mask"] - torch.log(torch.tensor(float(TOKENIZER.vocab_size))).item()) < 1.5

"""The expand/delete length arm: training canvases of the wrong length that still describe
the middle exactly, a loss over them, and decoding that grows and shrinks the canvas."""

import random
import sysconfig
from pathlib import Path

import torch
from torch import Tensor

from model.architecture import NetworkConfig
from model.data.corpus import SourceFile
from model.formats import canvas_targets
from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.batches import TrainingSources, batch_stream
from model.training.expand_delete import (
    DELETE_TOKEN,
    EXPAND_TOKEN,
    INITIAL_MASKS,
    MAX_MERGE,
    canvas_text,
    denoise_expand_delete,
    noise_canvas,
)
from model.training.objective import losses
from model.training.train_config import TrainConfig

STDLIB = Path(sysconfig.get_paths()["stdlib"])
TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / TOKENIZER_FILE)
EXPAND, DELETE = TOKENIZER.id_of(EXPAND_TOKEN), TOKENIZER.id_of(DELETE_TOKEN)


def test_noised_canvases_of_any_length_still_spell_the_middle() -> None:
    middles = [TOKENIZER.encode("    return sorted(items, key=len)\n"), TOKENIZER.encode("x"), []]
    targets = torch.tensor([canvas_targets(TOKENIZER, m, 32) for m in middles] * 20)
    rates = torch.tensor([0.3, 0.7, 1.0] * 20)
    noised = noise_canvas(TOKENIZER, targets, rates, torch.Generator().manual_seed(0))
    lengths_seen = set()
    for row in range(targets.shape[0]):
        middle = middles[row % 3]
        valid = noised.canvas_valid[row]
        n = int(valid.sum())
        assert bool(valid[:n].all()) and not bool(valid[n:].any())  # padding only at the tail
        assert not bool(noised.masked[row, n:].any())
        inputs, wanted, masked = (t[row, :n].tolist() for t in (noised.canvas, noised.targets, noised.masked))
        for token, target, is_masked in zip(inputs, wanted, masked, strict=True):
            assert token == (TOKENIZER.mask_id if is_masked else target)
        ordinary = [t for t in wanted if t not in (EXPAND, DELETE)]
        expands = wanted.count(EXPAND)
        # Ordinary targets keep the middle's order; each expand stands for 2…MAX_MERGE tokens.
        iterator = iter(middle)
        assert all(any(t == m for m in iterator) for t in ordinary)
        assert 2 * expands <= len(middle) - len(ordinary) <= MAX_MERGE * expands
        if not middle:
            assert wanted and set(wanted) == {DELETE}
        lengths_seen.add(n - len(middle))
    assert min(lengths_seen) < 0 < max(lengths_seen)  # too short and too long both occur


def test_the_expand_delete_loss_trains_on_wrong_length_canvases() -> None:
    network = DiffusionEditor(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=4, canvas_sizes=(32,),
                         length_handling="expand_delete")
    source = TrainingSources([SourceFile("glob", "glob.py", (STDLIB / "glob.py").read_text())], [])
    batch = next(batch_stream(source, TOKENIZER, config, random.Random(0), 0.0))
    diffusion = losses(network, network, batch, TOKENIZER, config, torch.Generator().manual_seed(0)).diffusion
    assert torch.isfinite(diffusion) and diffusion.item() > 0
    diffusion.backward()  # type: ignore[no-untyped-call]
    assert network.embed.weight.grad is not None


class ScriptedNetwork(DiffusionEditor):
    """Denoises towards ``truth``: a canvas too short expands its first mask, one too
    long deletes the positions past the truth's length, one of the right length is read off."""

    def __init__(self, truth: list[int]) -> None:
        super().__init__(NetworkConfig(n_layer=1, n_head=2, d_model=32, mlp_hidden=64))
        self.truth = truth

    def denoise(self, canvas: Tensor, cache: object, where: Tensor | None = None) -> Tensor:
        length = canvas.shape[1]
        rows = torch.zeros(len(where if where is not None else range(length)), self.config.vocab_size)
        for row, position in enumerate((where if where is not None else torch.arange(length)).tolist()):
            if length < len(self.truth):
                rows[row, EXPAND if row == 0 else self.truth[min(position, len(self.truth) - 1)]] = 5.0 if row else 50.0
            elif position >= len(self.truth):
                rows[row, DELETE] = 50.0
            else:
                rows[row, self.truth[position]] = 50.0
        return rows


def test_decoding_grows_a_short_canvas_and_shrinks_a_long_one() -> None:
    for text in ("    return sorted(items, key=lambda item: item.name)\n", "x"):
        truth = TOKENIZER.encode(text)
        grown = denoise_expand_delete(ScriptedNetwork(truth), [], TOKENIZER, max_length=63)
        assert canvas_text(TOKENIZER, grown.tokens) == text
        expected_passes = max(0, len(truth) - INITIAL_MASKS) + 1
        assert grown.steps == expected_passes


def test_the_step_cap_leaves_no_masks_and_no_growth_tokens() -> None:
    truth = TOKENIZER.encode("value = compute(first, second, third, fourth, fifth)\n")
    grown = denoise_expand_delete(ScriptedNetwork(truth), [], TOKENIZER, max_steps=2)
    assert grown.steps == 2
    assert not {TOKENIZER.mask_id, EXPAND, DELETE} & set(grown.tokens)

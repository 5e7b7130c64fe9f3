"""Training batches: FIM examples from corpus files, and next-edit examples from real
release diffs and synthetic edits, padded into one shape the network trains on."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor

from model.data.corpus import SourceFile
from model.tokenizer import CodeTokenizer
from model.training.fim_examples import FimExample, make_example, parse_span_mix
from model.training.next_edit_examples import EditPair, replay_example, synthetic_example

if TYPE_CHECKING:
    from model.training.train_config import TrainConfig

REAL_EDIT_SHARE = 0.5  # of next-edit examples, when real edit pairs exist
FILE_WEIGHT_CAP = 20_000  # characters: a huge file is drawn like a long one
PACKAGE_WEIGHT_CAP = 8_000_000  # characters: one package's files, all together


@dataclass(frozen=True)
class Batch:
    context: Tensor  # (batch, C) left-padded
    context_valid: Tensor  # (batch, C) bool
    targets: Tensor  # (batch, L)
    # What the head writes after the context (FimExample.written), right-padded: (batch, W),
    # and which of it is real; None when no example has any.
    written: Tensor | None = None
    written_valid: Tensor | None = None
    # (batch,) bool: rows whose canvas trains masked whole (t = 1) whatever rate is drawn,
    # the teacher's examples (distill.py); None when there are none.
    full_mask: Tensor | None = None

    def to(self, device: torch.device) -> Batch:
        def moved(tensor: Tensor | None) -> Tensor | None:
            return None if tensor is None else tensor.to(device)

        return Batch(self.context.to(device), self.context_valid.to(device), self.targets.to(device),
                     moved(self.written), moved(self.written_valid), moved(self.full_mask))

    def padded_to(self, context: int, written: int, pad_id: int) -> Batch:
        """The same examples with the context left-padded to at least ``context`` positions and
        what the head writes right-padded to at least ``written``, none of it valid: the same
        losses, in shapes that stay put from batch to batch (a compiled pass is compiled again
        for every new shape)."""
        extra = max(0, context - self.context.shape[1])
        padded = replace(self, context=F.pad(self.context, (extra, 0), value=pad_id),
                         context_valid=F.pad(self.context_valid, (extra, 0), value=False))
        if self.written is None or self.written_valid is None:
            return padded
        extra = max(0, written - self.written.shape[1])
        return replace(padded, written=F.pad(self.written, (0, extra), value=pad_id),
                       written_valid=F.pad(self.written_valid, (0, extra), value=False))


@dataclass(frozen=True)
class TrainingSources:
    files: list[SourceFile]
    edit_pairs: list[EditPair]
    # A teacher's FIM examples by canvas size (distill.py), drawn for TrainConfig.distill_fraction
    # of FIM examples.
    distilled: dict[int, list[FimExample]] = field(default_factory=dict)
    # JavaScript and TypeScript (npm_corpus.py): TrainConfig.npm_share of the FIM examples
    # are cut from these, the rest from ``files``. Next edits are made from ``files`` alone.
    npm_files: list[SourceFile] = field(default_factory=list)


def collate(examples: list[FimExample], pad_id: int, full_mask: list[bool] | None = None) -> Batch:
    """``full_mask``: which examples train with the canvas masked whole (Batch.full_mask)."""
    width = max(len(e.context) for e in examples)
    context = torch.full((len(examples), width), pad_id, dtype=torch.long)
    valid = torch.zeros((len(examples), width), dtype=torch.bool)
    for row, example in enumerate(examples):
        n = len(example.context)
        context[row, width - n :] = torch.tensor(example.context)
        valid[row, width - n :] = True
    targets = torch.tensor([e.targets for e in examples], dtype=torch.long)
    whole = torch.tensor(full_mask, dtype=torch.bool) if full_mask and any(full_mask) else None
    longest = max(len(e.written) for e in examples)
    if longest == 0:
        return Batch(context, valid, targets, full_mask=whole)
    written = torch.full((len(examples), longest), pad_id, dtype=torch.long)
    written_valid = torch.zeros((len(examples), longest), dtype=torch.bool)
    for row, example in enumerate(examples):
        written[row, : len(example.written)] = torch.tensor(example.written, dtype=torch.long)
        written_valid[row, : len(example.written)] = True
    return Batch(context, valid, targets, written, written_valid, whole)


MAX_ATTEMPTS_PER_EXAMPLE = 50


def sampling_weights(files: Sequence[SourceFile]) -> list[float]:
    """How likely each file is to be drawn: in proportion to its length (up to
    ``FILE_WEIGHT_CAP``), each package's files together counting for at most
    ``PACKAGE_WEIGHT_CAP``, so that no one project's idioms fill the batches (uncapped,
    homeassistant's 11,000 files were a tenth of the draws)."""
    lengths = [min(len(f.text), FILE_WEIGHT_CAP) for f in files]
    totals: Counter[str] = Counter()
    for source, length in zip(files, lengths, strict=True):
        totals[source.package] += length
    return [length * min(1.0, PACKAGE_WEIGHT_CAP / totals[source.package])
            for source, length in zip(files, lengths, strict=True)]


def batch_stream(
    sources: TrainingSources, tokenizer: CodeTokenizer, config: TrainConfig, rng: random.Random,
    next_edit_fraction: float,
) -> Iterator[Batch]:
    """Endless batches, each of one task; files drawn by ``sampling_weights``."""
    files = sources.files
    cumulative = list(itertools.accumulate(sampling_weights(files)))
    npm_cumulative = list(itertools.accumulate(sampling_weights(sources.npm_files)))
    npm_share = config.npm_share if sources.npm_files else 0.0
    if not files:  # a corpus of npm sources alone
        files, cumulative, npm_share = sources.npm_files, npm_cumulative, 0.0
    span_mix = parse_span_mix(config.span_mix) if config.span_mix else None
    while True:
        next_edit = rng.random() < next_edit_fraction
        canvas_size = config.next_edit_canvas if next_edit else rng.choice(config.canvas_sizes)
        examples: list[FimExample] = []
        from_teacher: list[bool] = []
        attempts = 0
        while len(examples) < config.batch_size:
            attempts += 1
            if attempts > MAX_ATTEMPTS_PER_EXAMPLE * config.batch_size:
                # Files too small or too plain for this task (a tiny repository): a next-edit
                # batch becomes a FIM batch; a FIM batch that can't be made is an error.
                if not next_edit:
                    raise ValueError("no training example can be cut from these files (too few or too short)")
                next_edit, canvas_size, attempts = False, rng.choice(config.canvas_sizes), 0
            example: FimExample | None
            taught = not next_edit and bool(sources.distilled.get(canvas_size)) \
                and rng.random() < config.distill_fraction
            if taught:
                example = rng.choice(sources.distilled[canvas_size])
            elif next_edit and sources.edit_pairs and rng.random() < REAL_EDIT_SHARE:
                pair = rng.choice(sources.edit_pairs)
                example = replay_example(tokenizer, pair, rng, config.next_edit_budget, canvas_size)
            elif next_edit:
                source = rng.choices(files, cum_weights=cumulative)[0]
                example = synthetic_example(tokenizer, f"{source.package}/{source.path}", source.text, rng,
                                            config.next_edit_budget, canvas_size)
            else:
                from_npm = npm_share > 0 and rng.random() < npm_share
                text = (rng.choices(sources.npm_files, cum_weights=npm_cumulative)[0] if from_npm
                        else rng.choices(files, cum_weights=cumulative)[0]).text
                example = make_example(tokenizer, text, rng, config.budget, canvas_size, span_mix,
                                       config.written_tokens if config.written_loss_weight > 0 else 0)
            if example is not None:
                examples.append(example)
                from_teacher.append(taught)
        yield collate(examples, tokenizer.pad_id, from_teacher)

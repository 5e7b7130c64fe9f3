"""What a training run is told: its data, its length and learning rate, its objectives'
weights and the network it trains (or warm-starts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from model.architecture import NetworkConfig
from model.formats import ContextBudget, NextEditBudget

LENGTH_HANDLING = ("eom", "expand_delete")


@dataclass
class TrainConfig:
    corpus_dir: Path
    run_dir: Path
    steps: int = 20_000
    batch_size: int = 16
    lr: float = 2e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 200
    decay_fraction: float | None = None  # WSD's cooldown share of the steps; None: cosine
    weight_decay: float = 0.1
    context_tokens: int = 256
    max_suffix_tokens: int = 96
    canvas_sizes: tuple[int, ...] = (32, 64)
    span_mix: dict[str, float] | None = None  # SpanKind value → weight; None = fim_examples.SPAN_MIX
    # "eom": the canvas learns <|eom|> + padding (shipped); "expand_delete": canvases of the
    # wrong length learn <|expand|>/<|delete|> (the ablation arm, expand_delete.py).
    length_handling: str = "eom"
    # Share of FIM examples cut from the corpus's JavaScript and TypeScript (npm_corpus.py),
    # when it has any: drawn by length alone they would be ~2% of the examples.
    npm_share: float = 0.3
    next_edit_fraction: float = 0.0  # share of batches with the next-edit objective
    next_edit_canvas: int = 64
    context_loss_weight: float = 0.5
    context_loss_fraction: float = 0.25  # share of context positions scored per step
    # The head's loss on what it writes at the cursor (FimExample.written; 0: not trained),
    # and at most how many tokens of it: the head writes lines of up to 16 tokens.
    written_loss_weight: float = 0.5
    written_tokens: int = 40
    # Share of FIM examples whose canvas is masked whole (t = 1) instead of at a drawn rate:
    # as you type the server decodes the canvas in one pass from all masks, which the
    # uniform schedule trains on only near t = 1.
    full_mask_fraction: float = 0.0
    # One-pass distillation (distill.py): a teacher's examples, drawn for this share of FIM
    # examples and trained masked whole on the teacher's canvas.
    distill_file: Path | None = None
    distill_fraction: float = 0.0
    eval_every: int = 250
    eval_examples: int = 256
    checkpoint_seconds: float = 300.0
    time_limit_seconds: float | None = None
    seed: int = 0
    init_from: Path | None = None
    # Grow the warm start to this many layers (growth.py); its optimizer state no longer fits
    # the parameters, so the optimizer starts afresh, with the warmup.
    grow_to_layers: int | None = None
    evaluate_first: bool = False  # held-out losses of the starting weights, as before_dev_*
    # torch.compile the training pass (batches padded to fixed shapes): on a
    # machine with AMX (bf16, batch 24) ~1.5x the tokens a second, after ~1 minute of compiling.
    compile: bool = False
    network: NetworkConfig = field(default_factory=NetworkConfig)

    @property
    def budget(self) -> ContextBudget:
        return ContextBudget(self.context_tokens, self.max_suffix_tokens)

    @property
    def next_edit_budget(self) -> NextEditBudget:
        return NextEditBudget()

"""The training loop: batches → the objective (``objective.py``) → AdamW, with checkpoints,
held-out losses and a loss curve; a run's settings are a ``TrainConfig`` (``train_config.py``).

Runs as a plain process or under ``torchrun`` (DDP, gloo on CPU, nccl on CUDA). Resumes
from ``run_dir`` when a checkpoint is there; ``init_from`` warm-starts from a model folder
(for example the shipped weights) with a fresh optimizer.

Learning rate: linear warmup, then a cosine to ``min_lr_ratio`` of the peak, or — with
``decay_fraction`` — warmup, stable, decay (WSD): the peak held until the last
``decay_fraction`` of the steps, then a 1 − √progress cooldown to the same floor. A run of
a few hours per session is a series of short runs; warm-starting each from the last one's
annealed weights costs the start of every run climbing back (the held-out loss rises by
~0.1 nats for the first ~1,500 steps). WSD keeps the weights *before* the cooldown in
``run_dir/stable`` (with the optimizer state), and ``init_from`` that folder continues at
the peak with no warmup and no climb, while the cooled-down weights are the ones shipped.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from safetensors.torch import load_file
from torch.nn.parallel import DistributedDataParallel

from model.checkpoint import load_model, save_model
from model.data.corpus import read_corpus
from model.data.edit_corpus import read_edit_pairs
from model.data.npm_corpus import read_npm_split
from model.model_folder import WEIGHTS_FILE, read_folder
from model.network import DiffusionEditor
from model.precision import use_bf16_autocast
from model.tokenizer import CodeTokenizer
from model.training.batches import Batch, TrainingSources, batch_stream
from model.training.distill import read_teacher_examples
from model.training.fim_examples import FimExample
from model.training.growth import grow_depth
from model.training.next_edit_examples import EditPair
from model.training.objective import evaluate, losses
from model.training.plots import plot_loss_curve
from model.training.train_config import LENGTH_HANDLING, TrainConfig

log = logging.getLogger(__name__)

OPTIMIZER_FILE = "optimizer.pt"
STATE_FILE = "state.json"
STABLE_DIR = "stable"  # a WSD run's weights and optimizer just before its cooldown


def progress_line(
    step: int, config: TrainConfig, tokens: int, diffusion: float, next_token: float,
    tokens_per_second: float, steps_per_second: float, elapsed_seconds: float,
) -> str:
    """One line per few steps: where the run is, its losses, its speed and when it ends."""
    remaining = (config.steps - step) / max(1e-9, steps_per_second)
    if config.time_limit_seconds is not None:
        remaining = min(remaining, max(0.0, config.time_limit_seconds - elapsed_seconds))
    return (f"step {step}/{config.steps} ({step / max(1, config.steps):.0%})  tokens {tokens / 1e6:.2f}M  "
            f"diffusion {diffusion:.3f}  next-token {next_token:.3f}  lr {learning_rate(step, config):.2e}  "
            f"{tokens_per_second:.0f} tok/s  ends in {remaining / 60:.0f} min")


def learning_rate(step: int, config: TrainConfig) -> float:
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    floor = config.lr * config.min_lr_ratio
    if config.decay_fraction is not None:
        start = cooldown_start(config)
        if step < start:
            return config.lr
        progress = min(1.0, (step - start) / max(1, config.steps - start))
        return floor + (config.lr - floor) * (1 - math.sqrt(progress))
    progress = min(1.0, (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps))
    return floor + (config.lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))


# Draws per teacher example above which a run is told its file is small for it: run v40
# drew each ~4 times and lost on every benchmark (the cause is not separated).
MANY_TEACHER_DRAWS = 4.0


def teacher_draws_per_example(config: TrainConfig, examples_by_canvas: dict[int, int], steps: int) -> float:
    """How often a run of ``steps`` draws each teacher example, at most over canvas sizes:
    batch_stream picks a canvas size per FIM batch, then a teacher example for each of the
    batch's rows with probability ``distill_fraction``."""
    fim_rows_per_size = steps * config.batch_size * (1 - config.next_edit_fraction) / len(config.canvas_sizes)
    return max((fim_rows_per_size * config.distill_fraction / examples_by_canvas[size]
                for size in config.canvas_sizes if examples_by_canvas.get(size)), default=0.0)


def cooldown_start(config: TrainConfig) -> int:
    """The first step of a WSD run's cooldown (``steps`` when there is none)."""
    if config.decay_fraction is None:
        return config.steps
    if not 0 < config.decay_fraction <= 1:
        raise ValueError(f"decay_fraction must be in (0, 1], not {config.decay_fraction}")
    return round(config.steps * (1 - config.decay_fraction))


class _Run:
    """Checkpoint bookkeeping of one run folder."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.dir = config.run_dir
        self.history_path = self.dir / "history.jsonl"

    def state(self) -> dict[str, Any] | None:
        path = self.dir / STATE_FILE
        return json.loads(path.read_text()) if path.is_file() else None

    def save(
        self, core: DiffusionEditor, optimizer: torch.optim.Optimizer, tokenizer: CodeTokenizer,
        step: int, tokens: int, folder: Path | None = None,
    ) -> None:
        """A checkpoint in the run folder (or in ``folder``, the stable snapshot)."""
        folder = folder or self.dir
        folder.mkdir(parents=True, exist_ok=True)
        save_model(core, tokenizer, folder, {"step": step, "tokens": tokens,
                                            "context_tokens": self.config.context_tokens,
                                            "max_suffix_tokens": self.config.max_suffix_tokens})
        torch.save(optimizer.state_dict(), folder / (OPTIMIZER_FILE + ".tmp"))
        (folder / (OPTIMIZER_FILE + ".tmp")).replace(folder / OPTIMIZER_FILE)
        (folder / STATE_FILE).write_text(json.dumps({"step": step, "tokens": tokens}) + "\n")

    def record(self, entry: dict[str, Any]) -> None:
        with open(self.history_path, "a") as handle:
            handle.write(json.dumps(entry) + "\n")


def _distributed() -> tuple[int, int]:
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def train(config: TrainConfig, tokenizer: CodeTokenizer) -> dict[str, float]:
    """Train until ``steps`` or the time limit; returns the last dev losses."""
    if config.length_handling not in LENGTH_HANDLING:
        raise ValueError(f"length_handling must be one of {LENGTH_HANDLING}, not {config.length_handling!r}")
    if config.length_handling != "eom" and config.next_edit_fraction > 0:
        raise ValueError("expand/delete canvases are an FIM ablation: set next_edit_fraction to 0")
    if not 0.0 <= config.distill_fraction <= 1.0:
        raise ValueError(f"distill_fraction must be in [0, 1], not {config.distill_fraction}")
    if config.distill_file is not None and config.length_handling != "eom":
        raise ValueError("the teacher's canvases end with <|eom|>: distil only with length_handling 'eom'")
    growing = (config.init_from is not None and config.grow_to_layers is not None
               and config.grow_to_layers != read_folder(config.init_from).config.n_layer)
    if config.init_from is not None and (config.init_from / OPTIMIZER_FILE).is_file() and not growing:
        # A stable snapshot (or a run folder): its optimizer continues at the peak, no warmup.
        config = replace(config, warmup_steps=0)
    owns_group = not dist.is_initialized()
    rank, world = _distributed()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
    # bf16 autocast only where it is measured faster (CUDA, or a CPU with native bf16).
    use_bf16 = device.type == "cuda" or use_bf16_autocast()
    torch.manual_seed(config.seed + rank)
    rng = random.Random(config.seed * 1000 + rank + int(time.time()))
    run = _Run(config)
    config.run_dir.mkdir(parents=True, exist_ok=True)

    state = run.state()
    step, tokens = (state["step"], state["tokens"]) if state else (0, 0)
    if state:
        core = DiffusionEditor(load_model(config.run_dir).network.config)
        core.load_state_dict(load_file(str(config.run_dir / WEIGHTS_FILE)))
    elif config.init_from is not None:
        core = load_model(config.init_from).network.float()
        if growing and config.grow_to_layers is not None:
            log.info("growing %s from %d to %d layers", config.init_from, core.config.n_layer, config.grow_to_layers)
            core = grow_depth(core, config.grow_to_layers)
    else:
        core = DiffusionEditor(config.network)
    if core.config.vocab_size != tokenizer.vocab_size:
        raise ValueError("tokenizer and network disagree on the vocabulary size")
    core.to(device).train()
    network: torch.nn.Module = DistributedDataParallel(core) if world > 1 else core
    if config.compile:
        log.info("compiling the training pass: the first steps take about a minute longer")
        # Batches are padded to fixed shapes below, so each canvas size is compiled once; with
        # shapes left free (dynamic=True), the graph was specialised and compiled again for
        # every context length (eight times, then no more: the rest ran eager).
        network = torch.compile(network)  # type: ignore[assignment]
    decay = [p for n, p in core.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in core.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr, betas=(0.9, 0.95),
    )
    optimizer_from = config.run_dir if state else None if growing else config.init_from
    if optimizer_from is not None and (optimizer_from / OPTIMIZER_FILE).is_file():
        optimizer.load_state_dict(torch.load(optimizer_from / OPTIMIZER_FILE, weights_only=True))
        if not state:
            log.info("continuing the optimizer state of %s at the peak learning rate", optimizer_from)
    stable_at = cooldown_start(config) if config.decay_fraction is not None else None

    train_files = read_corpus(config.corpus_dir / "train.jsonl")
    def edit_pairs(name: str) -> list[EditPair]:  # half a gigabyte of memory: read only when used
        return read_edit_pairs(config.corpus_dir / name) if config.next_edit_fraction > 0 else []

    distilled: dict[int, list[FimExample]] = {}
    if config.distill_file is not None and config.distill_fraction > 0:
        distilled = read_teacher_examples(config.distill_file, tokenizer, config.budget)
        if not distilled.keys() & set(config.canvas_sizes):
            raise ValueError(f"{config.distill_file} has canvases of {sorted(distilled)} tokens, this run trains "
                             f"{list(config.canvas_sizes)}")
        examples_by_canvas = {size: len(examples) for size, examples in distilled.items()}
        log.info("distilling: %.0f%% of FIM examples from %d teacher examples in %s", 100 * config.distill_fraction,
                 sum(examples_by_canvas.values()), config.distill_file)
        left = config.steps - step
        repeats = teacher_draws_per_example(config, examples_by_canvas, left)
        log.info("each teacher example will be drawn ~%.1f times in the %d steps left%s", repeats, left,
                 " (a larger file would repeat less)" if repeats > MANY_TEACHER_DRAWS else "")
    if not 0.0 <= config.npm_share <= 1.0:
        raise ValueError(f"npm_share must be in [0, 1], not {config.npm_share}")
    npm_train = read_npm_split(config.corpus_dir, "train") if config.npm_share > 0 else []
    train = TrainingSources(train_files, edit_pairs("edits_train.jsonl"), distilled, npm_train)
    dev_files = read_corpus(config.corpus_dir / "dev.jsonl") or train_files[:50]
    dev = TrainingSources(dev_files, edit_pairs("edits_dev.jsonl"))
    dev_count = max(1, config.eval_examples // config.batch_size)
    dev_fim_stream = batch_stream(dev, tokenizer, config, random.Random(99), next_edit_fraction=0.0)
    dev_fim = [next(dev_fim_stream) for _ in range(dev_count)]
    # JavaScript and TypeScript held out by package: their own losses, beside Python's.
    npm_dev = read_npm_split(config.corpus_dir, "dev") if npm_train else []
    dev_npm_fim: list[Batch] = []
    if npm_dev:
        npm_stream = batch_stream(TrainingSources([], [], npm_files=npm_dev), tokenizer, config,
                                  random.Random(97), next_edit_fraction=0.0)
        dev_npm_fim = [next(npm_stream) for _ in range(dev_count)]
    dev_edits: list[Batch] = []
    if config.next_edit_fraction > 0:
        dev_edit_stream = batch_stream(dev, tokenizer, config, random.Random(98), next_edit_fraction=1.0)
        dev_edits = [next(dev_edit_stream) for _ in range(dev_count)]
    stream = batch_stream(train, tokenizer, config, rng, config.next_edit_fraction)

    started = last_save = time.time()
    last_log, window_tokens, window_steps, dev_losses = time.time(), 0, 0, {}
    parameters = sum(p.numel() for p in core.parameters()) / 1e6
    if npm_train:
        log.info("%.0f%% of FIM examples from %d JavaScript and TypeScript files", 100 * config.npm_share,
                 len(npm_train))
    log.info("training %.1fM parameters from step %d on %d files (next-token loss weight %g on the context, %g on "
             "what the head writes)", parameters, step, len(train_files), config.context_loss_weight,
             config.written_loss_weight)
    def held_out_losses() -> dict[str, float]:
        found = evaluate(core, dev_fim, dev_edits, tokenizer, config, use_bf16)
        if dev_npm_fim:
            npm = evaluate(core, dev_npm_fim, [], tokenizer, config, use_bf16)
            found.update({f"dev_npm_{name.removeprefix('dev_')}": value for name, value in npm.items()})
        return found

    before: dict[str, float] = {}
    if config.evaluate_first and rank == 0:
        before = {f"before_{k}": v for k, v in held_out_losses().items()}
        log.info("before training: %s", "  ".join(f"{k} {v:.3f}" for k, v in before.items()))
    while step < config.steps:
        if rank == 0 and step == stable_at:
            run.save(core, optimizer, tokenizer, step, tokens, config.run_dir / STABLE_DIR)
            log.info("cooldown starts: the weights before it are in %s", config.run_dir / STABLE_DIR)
        batch = next(stream)
        batch_tokens = batch.context.numel() + batch.targets.numel()
        batch_tokens += 0 if batch.written is None else batch.written.numel()
        if config.compile:  # a canvas size is then one shape, compiled once
            batch = batch.padded_to(config.context_tokens, config.written_tokens, tokenizer.pad_id)
        batch = batch.to(device)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, config)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            diffusion, next_token, written = losses(network, core, batch, tokenizer, config)
            loss = diffusion + config.context_loss_weight * next_token + config.written_loss_weight * written
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(core.parameters(), 1.0)
        optimizer.step()
        step += 1
        tokens += batch_tokens * world
        window_tokens += batch_tokens * world
        window_steps += 1
        done = step >= config.steps or (
            config.time_limit_seconds is not None and time.time() - started > config.time_limit_seconds
        )
        if rank == 0 and (step % 25 == 0 or done):
            seconds = max(1e-6, time.time() - last_log)
            log.info("%s", progress_line(step, config, tokens, diffusion.item(), next_token.item(),
                                         window_tokens / seconds, window_steps / seconds, time.time() - started))
            last_log, window_tokens, window_steps = time.time(), 0, 0
        if rank == 0 and (step % config.eval_every == 0 or done):
            dev_losses = held_out_losses()
            run.record({"step": step, "tokens": tokens, "diffusion": diffusion.item(),
                        "next_token": next_token.item(), **dev_losses, "time": time.time()})
            log.info("step %d  %s", step, "  ".join(f"{k} {v:.3f}" for k, v in dev_losses.items()))
            try:
                plot_loss_curve(run.history_path)
            except Exception:  # a figure must never stop a training run
                log.warning("could not draw the loss curve", exc_info=True)
        if rank == 0 and (done or time.time() - last_save > config.checkpoint_seconds):
            run.save(core, optimizer, tokenizer, step, tokens)
            last_save = time.time()
        if done:
            break
    if dist.is_initialized():
        dist.barrier()
        # The DDP wrapper's reducer holds the group: freed first, while the group still works.
        del network
        gc.collect()
        if owns_group:  # a gloo thread still running when the process exits aborts it (SIGABRT)
            dist.destroy_process_group()
    return {**before, **dev_losses}


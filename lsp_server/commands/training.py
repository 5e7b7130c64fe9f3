"""The commands that make a model: ``redraft train`` (also on one repository with ``--repo``),
``ablate``, ``distill`` (the teacher's examples for training) and ``average``."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def train(args: argparse.Namespace) -> int:
    import torch

    from model.architecture import NetworkConfig
    from model.model_folder import TOKENIZER_FILE
    from model.tokenizer import CodeTokenizer
    from model.training.pipeline import export_model, prepare_corpus, prepare_tokenizer
    from model.training.train import train as run_training
    from model.training.train_config import TrainConfig

    torch.set_num_threads(max(1, min(torch.get_num_threads(), os.cpu_count() or 1)))
    if args.repo is not None:
        return train_on_repo(args)
    corpus_dir = prepare_corpus(args.work_dir, download=not args.no_download, max_files=args.max_files)
    run_dir = args.work_dir / "runs" / args.run_name
    # A resumed run or a warm start keeps the tokenizer its weights were trained with.
    existing = run_dir if (run_dir / TOKENIZER_FILE).is_file() else args.init_from
    if existing is not None:
        tokenizer = CodeTokenizer.load(Path(existing) / TOKENIZER_FILE)
    else:
        tokenizer = prepare_tokenizer(corpus_dir, args.work_dir / f"tokenizer-{args.vocab}.json", args.vocab)
    config = TrainConfig(
        corpus_dir=corpus_dir,
        run_dir=run_dir,
        steps=args.steps or 20_000,
        batch_size=args.batch_size,
        lr=args.lr or 1.5e-3,
        context_tokens=args.context_tokens,
        time_limit_seconds=args.minutes * 60 if args.minutes else None,
        init_from=args.init_from,
        decay_fraction=args.decay_fraction,
        next_edit_fraction=args.next_edit_fraction,
        npm_share=args.npm_share,
        context_loss_weight=args.context_loss_weight,
        written_loss_weight=args.written_loss_weight,
        full_mask_fraction=args.full_mask_fraction,
        compile=args.compile,
        distill_file=args.distill_file,
        distill_fraction=args.distill_fraction if args.distill_file is not None else 0.0,
        eval_every=max(1, min(250, args.steps or 20_000)),
        grow_to_layers=args.layers if args.init_from is not None else None,
        network=NetworkConfig(vocab_size=tokenizer.vocab_size, n_layer=args.layers or 6, n_head=args.heads,
                              d_model=args.width, mlp_hidden=3 * args.width),
    )
    losses = run_training(config, tokenizer)
    print("dev losses: " + ", ".join(f"{k} {v:.3f}" for k, v in losses.items()))
    if args.export and int(os.environ.get("RANK", "0")) == 0:
        print(f"exported to {export_model(config.run_dir, args.export)}")
    return 0


DEFAULT_MODELS_DIR = Path.home() / ".cache" / "redraft" / "models"
REPO_STEPS = 200
REPO_LR = 3e-4


def train_on_repo(args: argparse.Namespace) -> int:
    """``redraft train --repo PATH``: fine-tune a model on one repository, export it."""
    import hashlib
    import shutil

    from model.checkpoint import load_model
    from model.data.corpus import read_corpus
    from model.data.repo_corpus import build_repo_corpus
    from model.fim.calibrate import calibrate_int8
    from model.fim.phrase_table import PHRASES_FILE
    from model.model_folder import CONFIG_FILE, SHIPPED_DIR
    from model.training.pipeline import export_model
    from model.training.train import train as run_training
    from model.training.train_config import TrainConfig

    root = args.repo.expanduser().resolve()
    start_from = args.init_from or SHIPPED_DIR
    name = root.name or "repo"
    export = (args.export or DEFAULT_MODELS_DIR / name).expanduser().resolve()
    if export == root or root in export.parents:
        raise ValueError(f"--export {export} is inside the repository; Redraft never writes there")
    work = args.work_dir / "repos" / f"{name}-{hashlib.sha1(str(root).encode()).hexdigest()[:8]}"
    counts = build_repo_corpus(root, work / "corpus")
    print(f"{root}: {counts['train']} training files, {counts['dev']} held out; "
          f"{counts['edits_train']} + {counts['edits_dev']} changed files from git history")
    starting = load_model(start_from)
    run_dir = work / "runs" / "repo"
    shutil.rmtree(run_dir, ignore_errors=True)  # each fine-tune starts from the model, not a previous run
    steps = args.steps or REPO_STEPS
    config = TrainConfig(
        corpus_dir=work / "corpus", run_dir=run_dir, steps=steps, batch_size=args.batch_size,
        lr=args.lr or REPO_LR, warmup_steps=min(20, max(1, steps // 10)),
        context_tokens=int(starting.metadata.get("context_tokens", args.context_tokens)),
        time_limit_seconds=args.minutes * 60 if args.minutes else None, init_from=Path(start_from),
        next_edit_fraction=args.next_edit_fraction if counts["edits_train"] else 0.0,
        eval_every=steps, eval_examples=64, evaluate_first=True, network=starting.network.config,
    )
    losses = run_training(config, starting.tokenizer)
    export_model(run_dir, export)
    # The edit patterns' measured precision, the FIM calibrators and the corpus phrase table
    # carry over from the start.
    if (Path(start_from) / PHRASES_FILE).is_file():
        shutil.copyfile(Path(start_from) / PHRASES_FILE, export / PHRASES_FILE)
    calibration = starting.metadata.get("calibration")
    if isinstance(calibration, dict):
        exported = json.loads((export / CONFIG_FILE).read_text())
        exported["calibration"] = calibration
        (export / CONFIG_FILE).write_text(json.dumps(exported, indent=2) + "\n")
    # The int8 graph the server runs is smoothed with scales measured for the weights they
    # sit beside; saving new weights drops the old ones. Without them a fine-tuned model
    # served int8 strays 4x further from its fp32 self (measured on deepdiff: mean KL
    # 0.0248 against 0.0061 nats), so they are measured again on the repository's code.
    print(calibrate_int8(export, read_corpus(work / "corpus" / "train.jsonl") + read_corpus(
        work / "corpus" / "dev.jsonl")))
    for key in ("dev_diffusion", "dev_next_token", "dev_next_edit"):
        if key in losses and f"before_{key}" in losses:
            print(f"held-out {key.removeprefix('dev_').replace('_', '-')} loss: "
                  f"{losses[f'before_{key}']:.3f} → {losses[key]:.3f}")
    print(f"model written to {export}\nserve it with: redraft --model {export} serve")
    return 0


def ablate(args: argparse.Namespace) -> int:
    """``redraft ablate``: small arms side by side; one table (also in ablations/results.json)."""
    import torch

    from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE
    from model.training.ablations import format_results, run_ablations

    torch.set_num_threads(max(1, min(torch.get_num_threads(), os.cpu_count() or 1)))
    names = [n.strip() for n in args.arms.split(",") if n.strip()] if args.arms else None
    results = run_ablations(args.work_dir, SHIPPED_DIR / TOKENIZER_FILE, args.steps, names, args.cases)
    print(format_results(results))
    return 0


def distill(args: argparse.Namespace) -> int:
    """``redraft distill``: the teacher's stepwise canvases for one-pass distillation (``distill.py``)."""
    from model.data.corpus import read_corpus
    from model.model_folder import SHIPPED_DIR
    from model.runtime.serving import load_served_model
    from model.training.distill import TeacherLength, write_teacher_examples

    train_split = args.work_dir / "corpus" / "train.jsonl"
    if not train_split.is_file():
        raise FileNotFoundError(f"no corpus in {train_split.parent}: `redraft train --work-dir {args.work_dir}` "
                                "builds it")
    teacher = args.model or SHIPPED_DIR
    summary = write_teacher_examples(load_served_model(teacher), read_corpus(train_split), args.examples, args.out,
                                     seed=args.seed, teacher_name=str(teacher),
                                     length=TeacherLength(args.teacher_length))
    print(f"{summary['examples']:,} teacher examples from {train_split} → {args.out}; the teacher wrote the "
          f"reference in {summary['agree_with_reference']:.1%}; {summary['skipped']:,} spans skipped (blank, "
          f"or the teacher did not end the canvas)\ntrain on them with: redraft train --distill-file {args.out}")
    return 0


def average(args: argparse.Namespace) -> int:
    """``redraft average``: the uniform mean of several runs' weights (``weight_averaging.py``)."""
    from model.training.weight_averaging import write_average

    averaged = write_average(args.folders, args.into)
    spreads = ", ".join(f"{folder}: {spread:.3f}" for folder, spread in zip(args.folders, averaged.spreads,
                                                                           strict=True))
    print(f"averaged {len(args.folders)} models into {args.into} (distance of each from the mean: {spreads})\n"
          f"its calibration is the last folder's: refit it with `redraft --model {args.into} calibrate --dev "
          f"CORPUS/dev.jsonl`")
    return 0

"""Bodies of the one-shot commands (``complete``, ``train``, ``bench``). Their output is
for a person at a terminal, so it goes to stdout."""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from types import ModuleType

from lsp_server.options import ServerOptions

log = logging.getLogger(__name__)


DEMO_SAMPLE = '''import os


def list_python_files(folder):
    """Return the paths of the Python files under folder."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                found.append(os.path.join(root, name))
    return found


class Counter:
    def __init__(self, start=0):
        self.value = start

    def increment(self, step=1):
        self.value += step
        return self.value

    def reset(self):
        self.value = 0
'''

# (text before the cursor, marker) pairs: the demo cuts the sample there.
DEMO_CURSORS = ("                found.append(", "        self.value = ", "    for root, dirs, files in ")


def _load_completer(model: Path | None) -> object:
    from model.inference import FimCompleter
    from model.model_folder import SHIPPED_DIR
    from model.serving import load_served_model

    return FimCompleter(load_served_model(model or SHIPPED_DIR))


def _show_completion(
    completer: object, prefix: str, suffix: str, args: argparse.Namespace, related: object = None
) -> None:
    """Print the top suggestion (its steps with ``--steps``) decoded as the server decodes
    it as you type, so that its confidence and whether an editor would show it are the
    server's."""
    from model.fim_patterns import WORKSPACE_KINDS, RelatedLines
    from model.inference import CompletionRequest, FimCompleter
    from model.left_to_right import KIND as LEFT_TO_RIGHT
    from model.line_continuation import KIND as CONTINUED
    from model.phrase_table import KIND as PHRASE

    assert isinstance(completer, FimCompleter)
    assert related is None or isinstance(related, RelatedLines)
    request = CompletionRequest(prefix, suffix, canvas_size=args.canvas, threshold=args.threshold,
                                max_steps=ServerOptions().automatic_max_steps, keep_trace=args.steps,
                                related=related)
    started = time.perf_counter()
    candidates = completer.complete(request)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if not candidates:
        print(f"  suggestion │ none: every answer repeated a line next to the cursor or a definition "
              f"({elapsed_ms:.0f} ms)")
        return
    best = candidates[0]
    if args.steps:
        for step, state in enumerate(best.trace, 1):
            print(f"  step {step:2d} │ {state!r}")
    threshold = ServerOptions().confidence_threshold
    source = f"{best.tokens} tokens in {best.steps} {'step' if best.steps == 1 else 'steps'}"
    if best.copied == CONTINUED:
        source = "the line continued as these tokens continue elsewhere in the file (or the workspace)"
    elif best.copied == PHRASE:
        source = "the line continued as these tokens most often continue in the training code"
    elif best.copied == LEFT_TO_RIGHT:
        source = (f"written left to right by the network's next-token head, {best.tokens} tokens in {best.steps} "
                  f"passes of a beam search")
    elif best.copied:
        source = "copied from the workspace's other files" if best.copied in WORKSPACE_KINDS \
            else "copied from a line of the file"
    verdict = "an editor would show it" if best.confidence >= threshold else "an editor would show nothing"
    print(f"  suggestion │ {best.text!r}")
    print(f"  confidence │ {best.confidence:.3f}  ({source}, {elapsed_ms:.0f} ms)")
    print(f"             │ at the server's default threshold {threshold}, {verdict}")


def complete(args: argparse.Namespace) -> int:
    path, line, column = args.location
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise ValueError(f"{path} has no line {line}, column {column}")
    offset = sum(len(s) + 1 for s in lines[: line - 1]) + column - 1
    related = None
    if not args.no_workspace:
        from lsp_server.project_root import project_root

        folder = args.workspace if args.workspace is not None else project_root(path.absolute())
        if folder is not None:
            print(f"  workspace  │ {folder}" + ("" if args.workspace is not None else " (the file's project)"))
            related = _workspace_lines(folder, path)
    completer = _load_completer(args.model)
    _show_completion(completer, text[:offset], text[offset:], args, related)
    if args.steps:
        _show_canvas(completer, text[:offset], text[offset:], args)
    return 0


def _workspace_lines(folder: Path, path: Path) -> object:
    """The other files' lines that the server would copy from, with ``folder`` as its workspace."""
    from lsp_server.edit_log import EditLog
    from lsp_server.file_watcher import SERVER_MAX_BYTES, SERVER_MAX_FILES, WorkspaceWatcher
    from lsp_server.workspace_lines import WorkspaceLines

    if not folder.is_dir():
        raise ValueError(f"--workspace {folder} is not a folder")
    lines = WorkspaceLines()
    watcher = WorkspaceWatcher([folder], EditLog(), lambda uri: False, max_files=SERVER_MAX_FILES,
                               max_total_bytes=SERVER_MAX_BYTES, lines=lines, indexed_suffixes={path.suffix})
    watcher.start()
    try:
        watcher.wait_ready(60)
        return lines.related(path)
    finally:
        watcher.stop()


def demo(args: argparse.Namespace) -> int:
    """Complete a sample file at a few places, showing the denoising steps."""
    completer = _load_completer(args.model)
    for marker in DEMO_CURSORS:
        offset = DEMO_SAMPLE.index(marker) + len(marker)
        line_end = DEMO_SAMPLE.index("\n", offset)
        # The rest of the cursor's line is what the model must write.
        prefix, suffix = DEMO_SAMPLE[:offset], DEMO_SAMPLE[line_end:]
        print(f"\n{marker.strip()}█   (expected: {DEMO_SAMPLE[offset:line_end]!r})")
        _show_completion(completer, prefix, suffix, args)
        _show_canvas(completer, prefix, suffix, args)
    print(EDITOR_HINT)
    return 0


def _show_canvas(completer: object, prefix: str, suffix: str, args: argparse.Namespace) -> None:
    """The canvas denoised alone, pass by pass up to one pass per position: the diffusion
    at work, which the server cuts to one pass as you type (and the suggestion above may
    have come from elsewhere: a copy, a continuation, the next-token head)."""
    from model.inference import CompletionRequest, FimCompleter

    assert isinstance(completer, FimCompleter)
    request = CompletionRequest(prefix, suffix, canvas_size=args.canvas, threshold=args.threshold,
                                max_steps=args.canvas, keep_trace=True, copy_lines=False, left_to_right=False,
                                drop_repeats=False)
    canvas = completer.complete(request)[0]
    print(f"  the canvas alone, denoised in parallel (up to {args.canvas} passes; the server stops at one):")
    for step, state in enumerate(canvas.trace, 1):
        print(f"  step {step:2d} │ {state!r}")
    print(f"      canvas │ {canvas.text!r}  (confidence {canvas.confidence:.3f})")


EDITOR_HINT = """
Attach an editor: point any LSP client at `redraft serve` (stdio) for Python files, e.g.
Neovim 0.11:  vim.lsp.config('redraft', { cmd = { 'redraft', 'serve' }, filetypes = { 'python' } })
              vim.lsp.enable('redraft')
See README.md, "Use it from an editor"."""


def train(args: argparse.Namespace) -> int:
    import torch

    from model.architecture import NetworkConfig
    from model.model_folder import TOKENIZER_FILE
    from model.pipeline import export_model, prepare_corpus, prepare_tokenizer
    from model.tokenizer import CodeTokenizer
    from model.train import TrainConfig
    from model.train import train as run_training

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
        context_loss_weight=args.context_loss_weight,
        written_loss_weight=args.written_loss_weight,
        full_mask_fraction=args.full_mask_fraction,
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
    from model.model_folder import CONFIG_FILE, SHIPPED_DIR
    from model.phrase_table import PHRASES_FILE
    from model.pipeline import export_model
    from model.repo_corpus import build_repo_corpus
    from model.train import TrainConfig
    from model.train import train as run_training

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
    for key in ("dev_diffusion", "dev_next_token", "dev_next_edit"):
        if key in losses and f"before_{key}" in losses:
            print(f"held-out {key.removeprefix('dev_').replace('_', '-')} loss: "
                  f"{losses[f'before_{key}']:.3f} → {losses[key]:.3f}")
    print(f"model written to {export}\nserve it with: redraft --model {export} serve")
    return 0


def ablate(args: argparse.Namespace) -> int:
    """``redraft ablate``: small arms side by side; one table (also in ablations/results.json)."""
    import torch

    from model.ablations import format_results, run_ablations
    from model.model_folder import SHIPPED_DIR, TOKENIZER_FILE

    torch.set_num_threads(max(1, min(torch.get_num_threads(), os.cpu_count() or 1)))
    names = [n.strip() for n in args.arms.split(",") if n.strip()] if args.arms else None
    results = run_ablations(args.work_dir, SHIPPED_DIR / TOKENIZER_FILE, args.steps, names, args.cases)
    print(format_results(results))
    return 0


def corpus(args: argparse.Namespace) -> int:
    """Write ``corpus/packages.json`` for the built corpus and print it as a table."""
    from model.corpus import package_table, write_package_index

    corpus_dir = args.work_dir / "corpus"
    if not (corpus_dir / "train.jsonl").is_file():
        raise FileNotFoundError(f"no corpus in {corpus_dir}: `redraft train --work-dir {args.work_dir}` builds it")
    print(package_table(write_package_index(corpus_dir, args.work_dir / "sdists")))
    return 0


def heldout(args: argparse.Namespace) -> int:
    """Build a set of packages in no corpus and print what it holds."""
    from model.heldout_set import FILES_NAME, build_heldout_set, format_counts

    if args.max_files_per_package is not None and args.max_files_per_package < 1:
        raise ValueError("--max-files-per-package must be at least 1")
    counts = build_heldout_set(args.requirements, args.out, args.max_files_per_package, args.seed)
    print(format_counts(counts))
    print(f"wrote {args.out / FILES_NAME} and {args.out / 'src'}")
    return 0


def phrases(args: argparse.Namespace) -> int:
    """``redraft phrases``: the corpus phrase table, written into a model folder."""
    from model.model_folder import SHIPPED_DIR
    from model.phrase_table import PHRASES_FILE, build_phrase_table
    from model.pipeline import training_sample

    corpus_dir = args.work_dir / "corpus"
    if not (corpus_dir / "train.jsonl").is_file():
        raise FileNotFoundError(f"no corpus in {corpus_dir}: `redraft train --work-dir {args.work_dir}` builds it")
    model_dir = args.into or args.model or SHIPPED_DIR
    if not model_dir.is_dir():
        raise FileNotFoundError(f"no model folder {model_dir}")
    sample = training_sample(corpus_dir, args.chars)
    table = build_phrase_table(sample, args.min_count)
    table.save(model_dir / PHRASES_FILE)
    print(f"{len(table):,} runs of up to 6 tokens ({len(table.vocabulary):,} distinct tokens) from "
          f"{sum(map(len, sample)) / 1e6:.1f} M characters of {corpus_dir / 'train.jsonl'} → "
          f"{model_dir / PHRASES_FILE}\ncalibrate it with: redraft --model {model_dir} calibrate --dev "
          f"{corpus_dir / 'dev.jsonl'} --only fim-copy")
    return 0


def distill(args: argparse.Namespace) -> int:
    """``redraft distill``: the teacher's stepwise canvases for one-pass distillation (``distill.py``)."""
    from model.corpus import read_corpus
    from model.distill import TeacherLength, write_teacher_examples
    from model.model_folder import SHIPPED_DIR
    from model.serving import load_served_model

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
    from model.weight_averaging import write_average

    averaged = write_average(args.folders, args.into)
    spreads = ", ".join(f"{folder}: {spread:.3f}" for folder, spread in zip(args.folders, averaged.spreads,
                                                                           strict=True))
    print(f"averaged {len(args.folders)} models into {args.into} (distance of each from the mean: {spreads})\n"
          f"its calibration is the last folder's: refit it with `redraft --model {args.into} calibrate --dev "
          f"CORPUS/dev.jsonl`")
    return 0


def calibrate(args: argparse.Namespace) -> int:
    from model.calibrate_fim import calibrate as fit_calibration
    from model.calibrate_fim import (
        calibrate_continuation,
        calibrate_copies,
        calibrate_copy_check,
        calibrate_int8,
        calibrate_left_to_right,
        calibrate_shown,
    )
    from model.calibrate_next_edit import calibrate_next_edit
    from model.corpus import read_corpus
    from model.model_folder import SHIPPED_DIR

    model_dir = args.into or args.model or SHIPPED_DIR
    dev_files = read_corpus(args.dev) if args.only != "next-edit" else []
    if args.only in (None, "fim", "fim-copy"):  # first: the confidences below are the smoothed network's
        print(calibrate_int8(model_dir, dev_files))
    if args.only in (None, "fim"):
        print(fit_calibration(model_dir, dev_files, args.cases, plot=args.plot))
    if args.only in (None, "fim", "fim-copy"):
        print(calibrate_copies(model_dir, dev_files))
        print(calibrate_copy_check(model_dir, dev_files))
        print(calibrate_continuation(model_dir, dev_files))
        print(calibrate_left_to_right(model_dir, dev_files))
        print(calibrate_shown(model_dir, dev_files))  # last: it maps the confidences fitted above
    if args.only in (None, "next-edit"):  # the real edit pairs sit beside dev.jsonl
        print(calibrate_next_edit(model_dir, args.dev.parent))
    return 0


def bench(args: argparse.Namespace) -> int:
    import sys

    if args.suite == "decode":
        from model.bench.decode import dev_cases, format_rows, read_cases, run_decode_bench
        from model.model_folder import SHIPPED_DIR
        from model.serving import load_served_model

        loaded = load_served_model(args.model or SHIPPED_DIR)
        cases = read_cases(args.data, args.limit) if args.data else dev_cases(args.dev, args.limit)
        print(format_rows(run_decode_bench(loaded, cases, args.canvas)))
        return 0

    command = [sys.executable, "-m", "lsp_server"]
    if args.model:
        command += ["--model", str(args.model)]
    command.append("serve")
    if args.suite == "fuzz":
        from lsp_server.bench.fuzz import format_fuzz, run_fuzz_bench

        print(format_fuzz(run_fuzz_bench(args.sessions, args.steps, command, args.seed)))
        return 0

    if args.suite == "soak":
        from lsp_server.bench.soak import format_soak, run_soak_bench

        print(format_soak(run_soak_bench(args.requests, args.files or None, command)))
        return 0

    if args.suite == "latency":
        from lsp_server.bench.latency import format_latency, run_latency_bench

        files = args.files or [Path(module.__file__ or "") for module in _latency_modules()]
        typed = run_latency_bench(files, args.lines, args.interval_ms, command, workspace=args.workspace,
                                  threshold=args.threshold, runs=args.runs)
        print(format_latency(typed, args.interval_ms))
        return 0

    if args.suite == "rename":
        from lsp_server.bench.rename import format_rename, run_rename_bench

        if not args.folder.is_dir():
            raise ValueError(f"{args.folder} is not a folder")
        renames = run_rename_bench(args.folder, args.limit, command, args.threshold, anywhere=args.at == "any",
                                   members=args.members)
        print(format_rename(renames, args.threshold))
        return 0

    if args.suite == "nextedit":
        from lsp_server.bench.nextedit import format_nextedit, run_nextedit_bench

        print(format_nextedit(run_nextedit_bench(args.data, args.limit, args.cases_per_pair, command,
                                                 threshold=args.threshold, bottom_up=args.bottom_up)))
        return 0

    from lsp_server.bench.fim import AUTOMATIC, INVOKED, format_report, held_out_cases, run_fim_bench
    from lsp_server.bench.paired import compare, format_comparison, load_results, save_results

    saved = load_results(args.against) if args.against is not None else None  # a bad file fails before the run
    trigger_kind = INVOKED if args.invoked else AUTOMATIC
    if args.dev is not None:
        with tempfile.TemporaryDirectory(prefix="redraft-bench-workspace-") as folder:
            workspace = None if args.no_workspace else Path(folder)
            spans = held_out_cases(args.dev, args.limit or 400, workspace)
            report = run_fim_bench(args.dev, None, args.threshold, command, cases=spans, workspace=workspace,
                                   trigger_kind=trigger_kind)
    else:
        report = run_fim_bench(Path(args.data), args.limit, args.threshold, command, trigger_kind=trigger_kind)
    print(format_report(report))
    if args.save is not None:
        save_results(report, args.save)
    if saved is not None:
        note = "" if saved.threshold == report.threshold else \
            f"(the saved run was at threshold {saved.threshold:g}, this one at {report.threshold:g})"
        print()
        print(format_comparison(compare(report, saved), args.against, note))
    return 0


def _latency_modules() -> list[ModuleType]:
    """Real, varied files that every Python install has."""
    import argparse as argparse_module
    import json.decoder
    import textwrap

    return [argparse_module, json.decoder, textwrap]

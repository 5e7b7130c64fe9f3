"""The ``redraft`` command: argv parsing and logging setup, nothing else.

Only this module configures logging handlers (stderr or ``--log-file``): in ``serve``,
stdout carries the protocol and nothing else.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from benchmarks.command import add_bench_parser
from lsp_server.arguments import MAX_CANVAS, canvas_size, parse_location
from lsp_server.http_api.command import add_http_parser

log = logging.getLogger("redraft")

DEFAULT_WORK_DIR = Path.home() / ".cache" / "redraft"

# Serving needs none of these: `pip install redraft` leaves them out, the `train` extra brings them.
TRAINING_MODULES = frozenset({"torch", "matplotlib"})
# The commands that train or rewrite weights, refused at once without the extra (the others
# that reach for it, such as `calibrate`, are told so when they do).
TRAINING_COMMANDS = frozenset({"train", "ablate", "distill", "average", "phrases"})


def training_extra_message(command: str) -> str:
    return (f"redraft {command}: needs the training extra (torch, matplotlib), which a serve-only install "
            "leaves out: pip install 'redraft[train]' (from a checkout: pip install -e '.[train]')")


def has_training_extra() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def configure_logging(verbose: int, log_file: Path | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="redraft", description="Local diffusion-model code suggestions over LSP.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("--log-file", type=Path, help="log here instead of stderr")
    parser.add_argument("--model", type=Path, help="model folder (default: the shipped model)")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("serve", help="run the language server on stdio")
    add_http_parser(commands)
    commands.add_parser("stats", help="local counts of suggestions shown, accepted and rejected")

    complete = commands.add_parser("complete", help="print the top FIM suggestion at a position")
    complete.add_argument("location", type=parse_location, help="PATH:LINE:COL, 1-based")
    folder = complete.add_mutually_exclusive_group()
    folder.add_argument("--workspace", type=Path,
                        help="copy and continue lines from this folder's other files too, as the server does "
                             "from its workspace (default: the file's project, as the server finds it when the "
                             "editor names no folder)")
    folder.add_argument("--no-workspace", action="store_true", help="the file alone")
    demo = commands.add_parser("demo", help="complete a sample file, showing the denoising steps")
    for command in (complete, demo):
        command.add_argument("--steps", action="store_true", default=command is demo,
                             help="print every denoising step")
        command.add_argument("--canvas", type=canvas_size, default=32,
                             help=f"most tokens to write, the end included (2–{MAX_CANVAS})")
        command.add_argument("--threshold", type=float, default=0.9, help="sampler commit threshold τ")

    train = commands.add_parser("train", help="build the corpus and train the model")
    train.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR, help="corpus, tokenizer and runs")
    train.add_argument("--run-name", default="main", help="run name under WORK_DIR/runs (resumed if present)")
    train.add_argument("--steps", type=int, help="optimizer steps (default 20000; 200 with --repo)")
    train.add_argument("--minutes", type=float, help="stop after this long (checkpointed)")
    train.add_argument("--batch-size", type=int, default=24)
    train.add_argument("--lr", type=float, help="peak learning rate (default 1.5e-3; 3e-4 with --repo)")
    train.add_argument("--layers", type=int,
                       help="transformer blocks (default 6); with --init-from, grow its model to this many: each "
                            "new block starts as a copy of the one before it that adds nothing, so the grown "
                            "model first computes what the old one did")
    train.add_argument("--width", type=int, default=256)
    train.add_argument("--heads", type=int, default=4)
    train.add_argument("--vocab", type=int, default=8192)
    train.add_argument("--context-tokens", type=int, default=256)
    train.add_argument("--no-download", action="store_true",
                       help="standard library (and npm tarballs already fetched) only, no pip or npm")
    train.add_argument("--max-files", type=int, help="cap the training files (smoke runs)")
    train.add_argument("--next-edit-fraction", type=float, default=0.3, help="share of next-edit batches")
    train.add_argument("--npm-share", type=float, default=0.3,
                       help="share of FIM examples cut from the corpus's JavaScript and TypeScript (npm releases)")
    train.add_argument("--context-loss-weight", type=float, default=0.5,
                       help="weight of the next-token loss on the context, which trains the head that writes "
                            "lines left to right (the canvas's loss has weight 1)")
    train.add_argument("--written-loss-weight", type=float, default=0.5,
                       help="weight of that head's loss on what it writes at the cursor (the middle and the "
                            "suffix's first line, after the prefix); 0: not trained")
    train.add_argument("--full-mask-fraction", type=float, default=0.0,
                       help="share of examples whose canvas is masked whole (t = 1), the state the server's "
                            "one-pass decode starts from; the rest draw t uniformly")
    train.add_argument("--distill-file", type=Path,
                       help="one-pass distillation: a teacher's stepwise canvases (`redraft distill`), trained "
                            "masked whole for --distill-fraction of the FIM examples")
    train.add_argument("--distill-fraction", type=float, default=0.3,
                       help="share of FIM examples drawn from --distill-file (default 0.3)")
    train.add_argument("--compile", action="store_true",
                       help="torch.compile the training pass, its batches padded to fixed shapes (~1.5x the "
                            "tokens a second here, after about a minute of compiling)")
    train.add_argument("--init-from", type=Path,
                       help="warm-start from a model folder; a run's stable/ folder also brings its optimizer "
                            "state and continues at the peak learning rate (no warmup)")
    train.add_argument("--decay-fraction", type=float,
                       help="warmup-stable-decay schedule: hold the peak learning rate, cool down over this last "
                            "share of the steps (e.g. 0.2), and keep the weights before the cooldown in "
                            "RUN/stable to continue from (default: cosine)")
    train.add_argument("--export", type=Path, help="write the trained model (fp16) to this folder")
    train.add_argument("--repo", type=Path,
                       help="fine-tune the shipped model (or --init-from) on this repository's Python files and "
                            "git history; writes a model folder to --export (default ~/.cache/redraft/models/NAME)")

    corpus = commands.add_parser("corpus", help="index the built corpus: packages, versions, licences, sizes")
    corpus.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR, help="where `redraft train` built it")
    corpus.add_argument("--pack", type=Path, metavar="DIR",
                        help="instead, write a gzipped sample of it into DIR, small enough to carry to a machine "
                             "that can't fetch it (docs/development.md)")
    corpus.add_argument("--max-mb", type=float, default=24.0, help="--pack: the pack's compressed size")
    corpus.add_argument("--seed", type=int, default=0, help="--pack: which Python files are drawn")

    heldout = commands.add_parser(
        "heldout", help="build a benchmark set from pinned packages in no corpus (spans for `bench fim --dev`)")
    heldout.add_argument("out", type=Path, help="folder to write files.jsonl, src/ and the sdists into")
    heldout.add_argument("requirements", nargs="+", metavar="NAME==VERSION",
                         help="pinned sdists; none may be in the corpus, the dev set or the hidden evaluation "
                              "(with --npm: NAME@VERSION)")
    heldout.add_argument("--npm", action="store_true",
                         help="the requirements are npm releases (NAME@VERSION, @SCOPE/NAME@VERSION): their "
                              "hand-written JavaScript and TypeScript, fetched with `npm pack` into OUT/tarballs "
                              "and checked against the registry's sha512; licences in OUT/packages.json")
    heldout.add_argument("--max-files-per-package", type=int,
                         help="draw at most this many usable files of each package (default: all)")
    heldout.add_argument("--seed", type=int, default=0, help="which files are drawn (default 0)")
    heldout.add_argument("--edits", action="store_true",
                         help="also fetch each package's previous release into OUT/sdists_previous and write the "
                              "files changed since into OUT/edits.jsonl, real edits for `bench nextedit --data`")

    phrases = commands.add_parser(
        "phrases", help="build the corpus phrase table (line continuations from the training code) into a model")
    phrases.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR,
                         help="where `redraft train` built the corpus")
    phrases.add_argument("--into", type=Path, help="model folder to write it into (default: --model or shipped)")
    phrases.add_argument("--chars", type=int, default=40_000_000, help="characters of training code counted")
    phrases.add_argument("--min-count", type=int, default=6, help="runs seen fewer times are not kept")

    distill = commands.add_parser(
        "distill", help="decode training spans stepwise with a model (--model, default shipped): the teacher's "
                        "canvases that `train --distill-file` teaches the one-pass decode")
    distill.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR,
                         help="where `redraft train` built the corpus")
    distill.add_argument("--out", type=Path, required=True, help="teacher-examples file to write (JSON lines)")
    distill.add_argument("--examples", type=int, default=20_000, help="FIM examples to decode (default 20000)")
    distill.add_argument("--seed", type=int, default=0, help="which spans are cut")
    distill.add_argument("--teacher-length", choices=("reference", "own"), default="reference",
                         help="reference (default): the teacher is given the reference's length and writes the "
                              "content; own: it also chooses where the middle ends (length first), which ends "
                              "most answers early")

    average = commands.add_parser(
        "average", help="average the weights of runs trained on from one another into a new model folder")
    average.add_argument("folders", type=Path, nargs="+", help="model or run folders (at least two)")
    average.add_argument("--into", type=Path, required=True,
                         help="new model folder (fp16; the last folder's config, to recalibrate)")

    calibrate = commands.add_parser("calibrate", help="calibrate FIM and next-edit confidence on held-out code")
    calibrate.add_argument("--dev", type=Path, nargs="+", required=True,
                           help="the corpus dev split (dev.jsonl), or held-out sets' files.jsonl (several: "
                                "read together; --only shown fits each language's maps on its own files)")
    calibrate.add_argument("--cases", type=int, default=3000,
                           help="held-out spans for the canvas's calibrator, half fitted on, half measured on")
    calibrate.add_argument("--into", type=Path, help="model folder to calibrate (default: --model or shipped)")
    calibrate.add_argument("--plot", type=Path, help="also draw the FIM precision-vs-shown curve to this PNG")
    calibrate.add_argument("--only", choices=("fim", "fim-copy", "shown", "blocks", "next-edit"),
                           help="calibrate one part (default all); fim includes fim-copy: the copied-line "
                                "buckets, the network's check of weak copies and line continuations (the "
                                "file's and the phrase table's), then shown: the precision of what is shown, "
                                "per language and cursor place, judged leave-package-out, and blocks: "
                                "the precision of a whole block where a body is expected, per language")

    ablate = commands.add_parser("ablate", help="train small models side by side, one design choice changed in each")
    ablate.add_argument("--work-dir", type=Path, required=True, help="holds corpus/ (from `redraft train`)")
    ablate.add_argument("--steps", type=int, default=400, help="optimizer steps per arm")
    ablate.add_argument("--arms", help="comma-separated arm names (default: all)")
    ablate.add_argument("--cases", type=int, default=300, help="held-out spans each arm decodes")

    add_bench_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.log_file)
    from model.languages.python_parse import ignore_candidate_warnings

    ignore_candidate_warnings()
    try:
        if args.command == "serve":
            from lsp_server.server import create_server

            create_server(args.model).start_io()
            return 0
        if args.command == "http":
            from lsp_server.http_api.command import run_http

            return run_http(args, args.model)
        if args.command == "stats":
            from lsp_server.options import ServerOptions
            from lsp_server.stats import (
                default_stats_path,
                format_counts,
                format_source_counts,
                read_counts,
                read_source_counts,
            )

            print(format_counts(read_counts(default_stats_path())))
            by_source = format_source_counts(read_source_counts(default_stats_path()),
                                             ServerOptions.confidence_threshold)
            if by_source:
                print("\n" + by_source)
            return 0
        if args.command in TRAINING_COMMANDS and not has_training_extra():
            print(training_extra_message(args.command), file=sys.stderr)
            return 2
        from lsp_server import commands

        if args.command == "complete":
            return commands.complete(args)
        if args.command == "ablate":
            return commands.ablate(args)
        if args.command == "average":
            return commands.average(args)
        if args.command == "calibrate":
            return commands.calibrate(args)
        if args.command == "corpus":
            return commands.corpus(args)
        if args.command == "distill":
            return commands.distill(args)
        if args.command == "demo":
            return commands.demo(args)
        if args.command == "heldout":
            return commands.heldout(args)
        if args.command == "phrases":
            return commands.phrases(args)
        if args.command == "train":
            return commands.train(args)
        from benchmarks.command import bench

        return bench(args)
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in TRAINING_MODULES:
            print(training_extra_message(args.command), file=sys.stderr)
            return 2
        log.debug("failed", exc_info=True)
        print(f"redraft: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a clear message, not a traceback
        log.debug("failed", exc_info=True)
        print(f"redraft: {exc}", file=sys.stderr)
        return 1

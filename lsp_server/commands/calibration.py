"""``redraft calibrate``: fit the model folder's confidence calibrators on held-out code."""

from __future__ import annotations

import argparse


def calibrate(args: argparse.Namespace) -> int:
    from lsp_server.options import ServerOptions
    from model.data.corpus import read_corpus
    from model.fim.calibrate import calibrate as fit_calibration
    from model.fim.calibrate import calibrate_int8
    from model.fim.calibrate_blocks import calibrate_blocks
    from model.fim.calibrate_shown import calibrate_shown
    from model.fim.calibrate_sources import (
        calibrate_continuation,
        calibrate_copies,
        calibrate_copy_check,
        calibrate_left_to_right,
    )
    from model.model_folder import SHIPPED_DIR
    from model.next_edit.calibrate import calibrate_next_edit

    model_dir = args.into or args.model or SHIPPED_DIR
    dev_files = [f for path in args.dev for f in read_corpus(path)] if args.only != "next-edit" else []
    if args.only in (None, "fim", "fim-copy"):  # first: the confidences below are the smoothed network's
        print(calibrate_int8(model_dir, dev_files))
    if args.only in (None, "fim"):
        print(fit_calibration(model_dir, dev_files, args.cases, plot=args.plot))
    if args.only in (None, "fim", "fim-copy"):
        print(calibrate_copies(model_dir, dev_files))
        print(calibrate_copy_check(model_dir, dev_files))
        print(calibrate_continuation(model_dir, dev_files))
        print(calibrate_left_to_right(model_dir, dev_files))
    if args.only in (None, "fim", "fim-copy", "shown"):
        # Last: it maps the confidences fitted above.
        print(calibrate_shown(model_dir, dev_files, threshold=ServerOptions.confidence_threshold))
    if args.only in (None, "fim", "fim-copy", "blocks"):  # its first-line feature reads the lines' answers
        print(calibrate_blocks(model_dir, dev_files))
    if args.only in (None, "next-edit"):  # the real edit pairs sit beside dev.jsonl
        print(calibrate_next_edit(model_dir, args.dev[0].parent))
    return 0

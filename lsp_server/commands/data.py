"""The commands that build or index data from the corpus: ``redraft corpus``, ``heldout`` and
``phrases``."""

from __future__ import annotations

import argparse


def corpus(args: argparse.Namespace) -> int:
    """Write ``corpus/packages.json`` for the built corpus and print it as a table, then
    the npm releases it holds, if any; or, with ``--pack``, write a sample of it to carry."""
    from model.data.corpus import package_table, write_package_index
    from model.data.npm_corpus import npm_package_table, read_npm_index

    corpus_dir = args.work_dir / "corpus"
    if not (corpus_dir / "train.jsonl").is_file():
        raise FileNotFoundError(f"no corpus in {corpus_dir}: `redraft train --work-dir {args.work_dir}` builds it")
    if args.pack is not None:
        from model.data.corpus_pack import pack_corpus

        if args.max_mb <= 0:
            raise ValueError("--max-mb must be positive")
        kept = pack_corpus(corpus_dir, args.pack, int(args.max_mb * 1e6), args.seed)
        for name, (count, of) in kept.items():
            print(f"{name}: {count:,} of {of:,} records")
        print(f"wrote {args.pack} ({sum(p.stat().st_size for p in args.pack.iterdir()) / 1e6:.1f} MB)")
        return 0
    print(package_table(write_package_index(corpus_dir, args.work_dir / "sdists")))
    npm = read_npm_index(corpus_dir)
    if npm:
        print()
        print(npm_package_table(npm))
    return 0


def heldout(args: argparse.Namespace) -> int:
    """Build a set of packages in no corpus (PyPI sdists, or npm releases with ``--npm``) and
    print what it holds."""
    from model.data.heldout_set import EDITS_NAME, FILES_NAME, build_heldout_set, format_counts

    if args.max_files_per_package is not None and args.max_files_per_package < 1:
        raise ValueError("--max-files-per-package must be at least 1")
    if args.npm and args.edits:
        raise ValueError("--edits works with PyPI sets only (previous releases are fetched from PyPI)")
    if args.npm:
        from model.data.npm_set import NPM_INDEX_NAME, build_npm_set, format_npm_packages

        packages = build_npm_set(args.requirements, args.out, args.max_files_per_package, args.seed)
        print(format_npm_packages(packages))
        print(f"wrote {args.out / FILES_NAME}, {args.out / NPM_INDEX_NAME} and {args.out / 'src'}")
        return 0
    counts = build_heldout_set(args.requirements, args.out, args.max_files_per_package, args.seed)
    print(format_counts(counts))
    print(f"wrote {args.out / FILES_NAME} and {args.out / 'src'}")
    if args.edits:
        from model.data.edit_corpus import download_previous_releases, write_release_pairs

        download_previous_releases(args.requirements, args.out / "sdists_previous")
        pairs = write_release_pairs(args.out / "sdists", args.out / "sdists_previous", args.out / EDITS_NAME)
        print(f"wrote {args.out / EDITS_NAME}: {pairs} files changed since each package's previous release "
              f"(for `redraft bench nextedit --data`)")
    return 0


def phrases(args: argparse.Namespace) -> int:
    """``redraft phrases``: the corpus phrase table, written into a model folder."""
    from model.fim.phrase_table import PHRASES_FILE, build_phrase_table
    from model.model_folder import SHIPPED_DIR
    from model.training.pipeline import training_sample

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

"""``redraft calibrate --only blocks``: the block calibrators (``block_candidates.py``), one per
language family, fitted on bodies cut out of held-out files at block sites.

Each case is a body of at most ``MAX_LINES`` lines removed where an editor leaves the
cursor (``block_site.missing_bodies``), one-line bodies included: at a block site the
right answer is sometimes one line, and a block's confidence must say how often it is the
whole body. The lines' candidates are computed first, as served as you type with the
package's other files as the workspace, since the block's first line agreeing with theirs
is one of its features. Judged leave-package-out as the shown maps are. A family whose
blocks were never right gets no calibrator, and no block is then denoised or offered there.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.data.corpus import SourceFile
from model.fim.block_candidates import CONFIG_KEY, BlockCalibration
from model.fim.block_site import missing_bodies
from model.fim.calibrate import percent, workspaces
from model.fim.calibrate_shown import THRESHOLDS
from model.fim.calibration import Calibrator, fit
from model.fim.completion_request import AS_YOU_TYPE_MAX_STEPS, CompletionRequest
from model.fim.fim_patterns import RelatedLines
from model.fim.held_out_cases import same_code
from model.fim.inference import FimCompleter, confidence_of
from model.formats import context_ids
from model.languages import language_for
from model.model_folder import store_calibration
from model.runtime.serving import load_served_model

BLOCK_CASES = 1_500
MIN_RIGHT = 10  # right blocks a family needs for a calibrator of its own


@dataclass(frozen=True)
class BlockCase:
    family: str
    package: str
    lines: int  # the body's
    values: list[float] | None  # the block's calibrator inputs; None: the canvas wrote no block
    right: bool  # the block was the whole body
    tokens: int = 0  # the canvas's committed tokens up to its end
    passes: int = 0  # the canvas's denoising passes


def block_holes(files: list[SourceFile], count: int, seed: int) -> list[tuple[SourceFile, int, int]]:
    """Up to ``count`` bodies of ``files`` (served languages), drawn at random."""
    holes: list[tuple[SourceFile, int, int]] = []
    for source in files:
        language = language_for(source.path)
        if language is not None:
            holes.extend((source, start, end) for start, end in missing_bodies(source.text, language.family))
    random.Random(seed).shuffle(holes)
    return holes[:count]


def block_cases(model_dir: Path, files: list[SourceFile], count: int = BLOCK_CASES, seed: int = 11) -> list[BlockCase]:
    loaded = load_served_model(model_dir)
    calibration = loaded.metadata.get("calibration")
    if isinstance(calibration, dict):
        calibration.pop(CONFIG_KEY, None)
    completer = FimCompleter(loaded)
    indexes = workspaces(files)
    cases = []
    for source, start, end in block_holes(files, count, seed):
        prefix, middle, suffix = source.text[:start], source.text[start:end], source.text[end:]
        language = language_for(source.path)
        assert language is not None  # served files only
        lines, runs = indexes[source.package]
        request = CompletionRequest(prefix, suffix, max_steps=AS_YOU_TYPE_MAX_STEPS, language=language,
                                    related=RelatedLines(lines, skip=source.path, runs=runs), blocks=False)
        ranked = completer.complete(request)
        site = completer.blocks.site(request, calibrated_only=False)
        assert site is not None  # missing_bodies cuts at block sites only
        # Encoded afresh: a sure copy answers without encoding the context.
        ids = context_ids(completer.tokenizer, prefix, suffix, completer.budget)
        run = completer.blocks.denoised(completer.network.encode_context(np.array(ids, dtype=np.int64)))
        block = completer.blocks.candidate(run, site, request, language.statement(prefix, suffix),
                                           ranked[0].text if ranked else None)
        committed = confidence_of(run, completer.blocks.end_ids)[1]
        cases.append(BlockCase(language.family, source.package, middle.count("\n") + 1,
                               None if block is None else block.features,
                               block is not None and same_code(block.text, middle), committed, run.steps))
    return cases


def fit_blocks(cases: list[BlockCase]) -> BlockCalibration:
    """Each family's calibrator, fitted on its cases where a block was written."""
    fitted: dict[str, Calibrator] = {}
    for family in sorted({c.family for c in cases}):
        written = [c for c in cases if c.family == family and c.values is not None]
        if sum(c.right for c in written) >= MIN_RIGHT and not all(c.right for c in written):
            fitted[family] = fit([c.values for c in written if c.values is not None], [c.right for c in written])
    return BlockCalibration(fitted)


def leave_package_out(cases: list[BlockCase]) -> list[float | None]:
    """Each case's block confidence from calibrators fitted on the other packages (None:
    no block written, or no calibrator for its family without that package)."""
    scored: list[float | None] = [None] * len(cases)
    for package in sorted({c.package for c in cases}):
        calibration = fit_blocks([c for c in cases if c.package != package])
        for index, case in enumerate(cases):
            check = calibration.by_family.get(case.family)
            if case.package == package and case.values is not None and check is not None:
                scored[index] = check(case.values)
    return scored


def calibrate_blocks(model_dir: Path, dev_files: list[SourceFile], count: int = BLOCK_CASES) -> str:
    """Fit the block calibrators on ``dev_files`` (held-out sets with packages), store them in
    ``model_dir/config.json``, and report each family's leave-package-out curve."""
    cases = block_cases(model_dir, dev_files, count)
    calibration = fit_blocks(cases)
    store_calibration(model_dir, CONFIG_KEY, calibration.to_dict())
    scored = leave_package_out(cases)
    reports = [f"blocks: {len(cases)} bodies cut at block sites from {len({c.package for c in cases})} packages; "
               f"calibrators for: {', '.join(sorted(calibration.by_family)) or 'no family'}"]
    for family in sorted({c.family for c in cases}):
        ours = [(c, s) for c, s in zip(cases, scored, strict=True) if c.family == family]
        lines = Counter(min(c.lines, 3) for c, _ in ours)
        written = [c for c, _ in ours if c.values is not None]
        tokens, passes = sum(c.tokens for c, _ in ours), sum(c.passes for c, _ in ours)
        reports.append(f"\n{family}: {len(ours)} bodies (1 line {lines[1]}, 2 lines {lines[2]}, 3+ {lines[3]}); "
                       f"a block written at {percent(len(written) / max(1, len(ours)))}, the whole body at "
                       f"{percent(sum(c.right for c in written) / max(1, len(ours)))}; the canvas committed "
                       f"{tokens / max(1, passes):.1f} tokens a pass ({passes / max(1, len(ours)):.1f} passes a "
                       f"block; the head writes one a pass)")
        rows = [f"{'threshold':>9} {'shown':>7} {'precision':>10}"]
        for threshold in (0.0, *THRESHOLDS):
            shown = [c.right for c, s in ours if s is not None and s >= threshold]
            rows.append(f"{threshold:9.1f} {len(shown) / max(1, len(ours)):7.1%} "
                        f"{percent(sum(shown) / len(shown) if shown else None):>10}")
        reports.append("each package by calibrators fitted on the others:\n" + "\n".join(rows))
    return "\n".join(reports)

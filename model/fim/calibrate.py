"""``redraft calibrate``: the held-out cases every FIM calibrator is measured on, the
precision report, the canvas's confidence calibrator and the int8 graph's smoothing scales.

Cases are cut from the dev split (packages never trained on) with the training span mix;
the shipped sampler decodes each; a candidate is correct when it equals the true middle
(trailing whitespace ignored). The calibrator is fitted on one half and reported on the
other, so the printed precision is what a threshold will give on unseen code. The other
sources' calibrators are in ``calibrate_sources.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.data.corpus import SourceFile
from model.fim.calibration import fit
from model.fim.completion_request import AS_YOU_TYPE_MAX_STEPS, CompletionRequest
from model.fim.fim_patterns import LineIndex, RelatedLines
from model.fim.held_out_cases import cut_from_files, dev_cases, same_code
from model.fim.inference import FimCompleter
from model.fim.run_index import RunIndex, RunIndexBuilder
from model.formats import ContextBudget, context_ids
from model.model_folder import SCALES_FILE, read_folder, store_calibration
from model.runtime.int8_smoothing import CANVAS_SIZE, SCALE_CONTEXTS, fold, measure_scales, save_scales
from model.runtime.onnx_network import OrtNetwork
from model.runtime.served_model import ServingNetwork
from model.runtime.serving import load_served_model, read_weights
from model.training.plots import plot_precision_curve

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class Scored:
    features: list[float]
    exact: bool


def workspaces(files: list[SourceFile]) -> dict[str, tuple[LineIndex, RunIndex]]:
    """Each package's lines and runs of tokens, as the server indexes a workspace folder's files."""
    by_package: dict[str, dict[str, str]] = {}
    for source in files:
        by_package.setdefault(source.package, {})[source.path] = source.text
    return {package: (LineIndex(texts), RunIndexBuilder().replace_all(texts)) for package, texts in by_package.items()}


def with_workspace(
    files: list[SourceFile], count: int, seed: int
) -> list[tuple[str, str, str, RelatedLines]]:
    """Cut cases, each with its package's other files as the workspace (the file itself skipped)."""
    indexes = workspaces(files)
    cases = []
    for source, prefix, middle, suffix in cut_from_files(files, count, seed):
        lines, runs = indexes[source.package]
        cases.append((prefix, middle, suffix, RelatedLines(lines, skip=source.path, runs=runs)))
    return cases


def network_alone(prefix: str, suffix: str) -> CompletionRequest:
    """The canvas's own answer, decoded as the server decodes it as you type. Every
    calibrator reads features of that decode (the canvas's, or its text to agree with), so
    it is fitted on them: fitted on the 32-pass decode an Invoked request gets, the canvas
    calibrator scored inputs unlike those it was fitted on."""
    return CompletionRequest(prefix, suffix, max_steps=AS_YOU_TYPE_MAX_STEPS, copy_lines=False, left_to_right=False,
                             drop_repeats=False)


def score(completer: FimCompleter, cases: list[tuple[str, str, str]]) -> list[Scored]:
    scored = []
    for prefix, middle, suffix in cases:
        best = completer.complete(network_alone(prefix, suffix))[0]
        scored.append(Scored(best.features, same_code(best.text, middle)))
    return scored


def precision_curve(confidences: list[float], exact: list[bool]) -> list[tuple[float, float, float | None]]:
    """(threshold, share shown, precision among shown — None when nothing is shown)."""
    rows: list[tuple[float, float, float | None]] = []
    for threshold in THRESHOLDS:
        shown = [e for c, e in zip(confidences, exact, strict=True) if c >= threshold]
        rows.append((threshold, len(shown) / max(1, len(exact)), sum(shown) / len(shown) if shown else None))
    return rows


def percent(share: float | None) -> str:
    return "–" if share is None else f"{share:.1%}"


def precision_table(curve: list[tuple[float, float, float | None]]) -> str:
    lines = [f"{'threshold':>9} {'shown':>7} {'precision':>10}"]
    for threshold, shown, precision in curve:
        lines.append(f"{threshold:9.1f} {shown:7.1%} {percent(precision):>10}")
    return "\n".join(lines)


def fit_half_and_report(
    model_dir: Path, key: str, names: tuple[str, ...], rows: list[list[float]], labels: list[bool],
    title: str, counted: str,
) -> str:
    """Fit a logistic check on the first half of ``rows``, store it in ``model_dir``'s
    config.json as ``calibration[key]``, and report it — ``title: counted``, the share
    right, and its precision table on the other half; nothing is written when the first
    half holds only one outcome, and the report says so."""
    half = len(rows) // 2
    if not any(labels[:half]) or all(labels[:half]):
        return f"{title}: {counted}, too few of each outcome to fit; not written"
    check = fit(rows[:half], labels[:half])
    curve = precision_curve([check(r) for r in rows[half:]], labels[half:])
    store_calibration(model_dir, key, check.to_dict(names))
    return (f"{title}: {counted}, {sum(labels) / max(1, len(labels)):.1%} right; fitted on {half}, measured on "
            f"{len(rows) - half} (shown = share of those):\n{precision_table(curve)}")


def calibrate(
    model_dir: Path, dev_files: list[SourceFile], count: int = 3000, seed: int = 7, plot: Path | None = None
) -> str:
    """Fit, write into ``model_dir/config.json``, and return the held-out report; ``plot``
    also draws the held-out precision-vs-shown curve there (PNG)."""
    loaded = load_served_model(model_dir)  # as served
    loaded.metadata.pop("calibration", None)
    completer = FimCompleter(loaded)
    scored = score(completer, dev_cases(dev_files, count, seed))
    half = len(scored) // 2
    calibrator = fit([s.features for s in scored[:half]], [s.exact for s in scored[:half]])
    held_out = scored[half:]
    curve = precision_curve([calibrator(s.features) for s in held_out], [s.exact for s in held_out])
    report = precision_table(curve)
    if plot is not None:
        plot_precision_curve([t for t, _, _ in curve], [p or 0.0 for _, _, p in curve], [s for _, s, _ in curve],
                             plot, f"FIM calibration: {len(held_out)} held-out cases")
    store_calibration(model_dir, "fim", calibrator.to_dict())
    exact_rate = sum(s.exact for s in scored) / max(1, len(scored))
    return (f"{len(scored)} dev cases, exact {exact_rate:.1%}; calibrator fitted on {half}, "
            f"measured on {len(held_out)}:\n{report}")


INT8_REPORT_CONTEXTS = 32  # held-out contexts, apart from the scales' own, that measure them


def calibrate_int8(model_dir: Path, dev_files: list[SourceFile], seed: int = 9) -> str:
    """Measure the int8 graph's smoothing scales (``int8_smoothing.py``) on held-out code and
    write them beside the weights, if on other held-out contexts they bring the int8 first
    pass closer to fp32's (mean KL of the canvas distributions); else remove them."""
    contents = read_folder(model_dir)
    budget = ContextBudget.of(contents.metadata)
    contexts = [context_ids(contents.tokenizer, prefix, suffix, budget)
                for prefix, _, suffix in dev_cases(dev_files, SCALE_CONTEXTS + INT8_REPORT_CONTEXTS, seed)]
    measured, reported = contexts[:SCALE_CONTEXTS], contexts[SCALE_CONTEXTS:]
    if not reported:
        return "int8 smoothing: no held-out code to measure it on; nothing written"
    if contents.config.length_head:
        return "int8 smoothing: the int8 graph does not serve the length-head ablation; nothing written"
    scales = measure_scales(model_dir, measured)
    weights = read_weights(model_dir, contents.config)
    mask = contents.tokenizer.mask_id
    reference = OrtNetwork(contents.config, weights, int8=False)
    before = int8_distance(reference, OrtNetwork(contents.config, weights), reported, mask)
    fold(weights, scales, contents.config)
    after = int8_distance(reference, OrtNetwork(contents.config, weights), reported, mask)
    path = model_dir / SCALES_FILE
    figures = (f"int8 smoothing: scales from {len(measured)} held-out contexts; on {len(reported)} others, mean KL "
               f"of the int8 first pass's canvas distributions to fp32's {before:.4f} → {after:.4f} nats")
    if after >= before:
        path.unlink(missing_ok=True)
        return f"{figures}; no better, so none kept"
    save_scales(model_dir, scales)
    return f"{figures}; written to {path}"


def int8_distance(reference: ServingNetwork, int8: ServingNetwork, contexts: list[list[int]], mask_id: int) -> float:
    """Mean KL(reference ‖ int8) of the first pass's distributions over a masked canvas."""
    canvas = np.full(CANVAS_SIZE, mask_id, dtype=np.int64)
    floor = np.finfo(np.float32).tiny
    distances = []
    for ids in contexts:
        context = np.array(ids, dtype=np.int64)
        expected = reference.probabilities(canvas, reference.encode_context(context))
        got = int8.probabilities(canvas, int8.encode_context(context))
        distances.append(float((expected * (np.log(expected + floor) - np.log(got + floor))).sum(-1).mean()))
    return float(np.mean(distances))

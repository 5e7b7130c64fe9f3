"""``redraft calibrate``: fit the FIM confidence calibrator on held-out code.

Cases are cut from the dev split (packages never trained on) with the training span mix;
the shipped sampler decodes each; a candidate is correct when it equals the true middle
(trailing whitespace ignored). The calibrator is fitted on one half and reported on the
other, so the printed precision is what a threshold will give on unseen code.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.bench.decode import same_code
from model.data.corpus import SourceFile
from model.fim.calibration import fit
from model.fim.completion_request import AS_YOU_TYPE_MAX_STEPS, CompletionRequest
from model.fim.copy_check import CHECK_FEATURES, CHECKED_KINDS, CONFIG_KEY
from model.fim.cursor_statement import statement_parses
from model.fim.fim_patterns import COPY_KINDS, LineIndex, RelatedLines, copy_candidate
from model.fim.inference import FimCompleter
from model.fim.left_to_right import CONFIG_KEY as LEFT_TO_RIGHT_KEY
from model.fim.left_to_right import FEATURE_NAMES as LEFT_TO_RIGHT_FEATURES
from model.fim.line_continuation import CONFIG_KEY as CONTINUATION_KEY
from model.fim.line_continuation import CONTINUATION_FEATURES, LineContinuer
from model.fim.line_continuation import KIND as CONTINUED
from model.fim.pattern_candidates import source_texts
from model.fim.phrase_table import CONFIG_KEY as PHRASE_KEY
from model.fim.phrase_table import KIND as PHRASE
from model.fim.phrase_table import PHRASE_FEATURES
from model.fim.run_index import RunIndex, RunIndexBuilder
from model.fim.shown_calibration import CONFIG_KEY as SHOWN_KEY
from model.fim.shown_calibration import Win, fit_shown, source_of
from model.formats import ContextBudget, context_ids
from model.model_folder import SCALES_FILE, read_folder, store_calibration
from model.runtime.int8_smoothing import CANVAS_SIZE, SCALE_CONTEXTS, fold, measure_scales, save_scales
from model.runtime.onnx_network import OrtNetwork
from model.runtime.serving import ServingNetwork, load_served_model, read_weights
from model.training.fim_examples import SPAN_MIX, SpanKind, choose_span
from model.training.plots import plot_precision_curve

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class Scored:
    features: list[float]
    exact: bool


def dev_cases(
    files: list[SourceFile], count: int, seed: int, max_middle_chars: int = 80,
    span_mix: dict[SpanKind, float] | None = None,
) -> list[tuple[str, str, str]]:
    """(prefix, middle, suffix) cut from ``files`` with ``span_mix`` (default: training's)."""
    return [(prefix, middle, suffix)
            for _, prefix, middle, suffix in cut_from_files(files, count, seed, max_middle_chars, span_mix)]


def cut_from_files(
    files: list[SourceFile], count: int, seed: int, max_middle_chars: int = 80,
    span_mix: dict[SpanKind, float] | None = None,
) -> list[tuple[SourceFile, str, str, str]]:
    """``dev_cases`` with the file each case was cut from."""
    rng = random.Random(seed)
    mix = span_mix or SPAN_MIX
    files = [source for source in files if source.text.strip()]  # an empty file has no span to cut
    cases: list[tuple[SourceFile, str, str, str]] = []
    while files and len(cases) < count:
        source = rng.choice(files)
        text = source.text
        kind = rng.choices(list(mix), weights=list(mix.values()))[0]
        start, end = choose_span(text, kind, rng)
        if 0 < end - start <= max_middle_chars and text[start:end].strip():
            cases.append((source, text[:start], text[start:end], text[end:]))
    return cases


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
    calibrator (session 37) scored inputs unlike those it was fitted on."""
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


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{share:.1%}"


def precision_table(curve: list[tuple[float, float, float | None]]) -> str:
    lines = [f"{'threshold':>9} {'shown':>7} {'precision':>10}"]
    for threshold, shown, precision in curve:
        lines.append(f"{threshold:9.1f} {shown:7.1%} {_percent(precision):>10}")
    return "\n".join(lines)


COPY_CASES = 6_000  # no network runs for these: cheap, so many


def measure_copies(cases: list[tuple[str, str, str, RelatedLines | None]]) -> dict[str, tuple[int, int]]:
    """Per copied-line bucket (``fim_patterns.py``): (cases it fired on, exact among them)."""
    tally = {kind: (0, 0) for kind in COPY_KINDS}
    for prefix, middle, suffix, related in cases:
        copied = copy_candidate(prefix, suffix, related)
        if copied is not None:
            fired, right = tally[copied.kind]
            tally[copied.kind] = (fired + 1, right + same_code(copied.text, middle))
    return tally


def calibrate_copies(model_dir: Path, dev_files: list[SourceFile], seed: int = 8) -> str:
    """Measure each copied-line bucket on held-out spans and write its precision, shrunk
    towards zero (right / (fired + 2)), into ``model_dir/config.json``; returns the report.
    A case's workspace is the other files of its package."""
    cases = with_workspace(dev_files, COPY_CASES, seed)
    tally = measure_copies(list(cases))
    store_calibration(model_dir, "fim_copy", {
        kind: {"precision": right / (fired + 2), "cases": fired} for kind, (fired, right) in tally.items()})
    rows = [f"{'copied line':<24} {'fired':>6} {'exact':>7} {'stored':>7}"]
    for kind, (fired, right) in tally.items():
        rows.append(f"{kind:<24} {fired / len(cases):6.1%} {right / max(1, fired):7.1%} {right / (fired + 2):7.3f}")
    return f"{len(cases)} dev cases for copied lines:\n" + "\n".join(rows)


def calibrate_copy_check(model_dir: Path, dev_files: list[SourceFile], seed: int = 8) -> str:
    """Fit the network's check of weakly supported copies (``copy_check.py``) on half of
    the held-out copies it applies to, write it into ``model_dir/config.json``, and report
    it on the other half."""
    loaded = load_served_model(model_dir)
    completer = FimCompleter(loaded)
    rows: list[list[float]] = []
    labels: list[bool] = []
    for prefix, middle, suffix, related in with_workspace(dev_files, COPY_CASES, seed):
        copied = copy_candidate(prefix, suffix, related)
        if copied is None or copied.kind not in CHECKED_KINDS:
            continue
        values = completer.patterns.copy_check_features(copied.text, copied.kind, completer.first_pass(prefix, suffix),
                                                        statement_parses(prefix, copied.text, suffix))
        if values is not None:
            rows.append(values)
            labels.append(same_code(copied.text, middle))
    return fit_half_and_report(model_dir, CONFIG_KEY, CHECK_FEATURES, rows, labels,
                               f"copy check ({', '.join(CHECKED_KINDS)})", f"{len(rows)} held-out copies")


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


def calibrate_continuation(model_dir: Path, dev_files: list[SourceFile], seed: int = 8) -> str:
    """Fit the confidence of line continuations — from the file (``line_continuation.py``)
    and from the corpus (``phrase_table.py``, when the model folder has one) — each on half
    of the held-out spans where it is offered as served (no copied line, from the file or
    its package, fired), write them into ``model_dir/config.json``, and report each on the
    other half."""
    loaded = load_served_model(model_dir)
    completer = FimCompleter(loaded)
    continuer = LineContinuer()
    cases: dict[str, tuple[list[list[float]], list[bool]]] = {CONTINUED: ([], []), PHRASE: ([], [])}
    for prefix, middle, suffix, related in with_workspace(dev_files, COPY_CASES, seed):
        if copy_candidate(prefix, suffix, related) is not None:
            continue
        offered = [c for c in (continuer.continuation(prefix, suffix, related),
                               None if loaded.phrases is None else loaded.phrases.continuation(prefix, suffix))
                   if c is not None]
        if not offered:
            continue
        network_text = completer.complete(network_alone(prefix, suffix))[0].text
        first_pass = completer.first_pass(prefix, suffix)
        for continuation in offered:
            parsed = statement_parses(prefix, continuation.text, suffix)
            values = completer.patterns.continuation_features(continuation, first_pass, network_text, prefix,
                                                              offered, parsed)
            if values is not None:
                rows, labels = cases[continuation.kind]
                rows.append(values)
                labels.append(same_code(continuation.text, middle))
    reports = []
    for kind, key, names, name in ((CONTINUED, CONTINUATION_KEY, CONTINUATION_FEATURES, "line continuations"),
                                   (PHRASE, PHRASE_KEY, PHRASE_FEATURES, "corpus phrases")):
        rows, labels = cases[kind]
        if kind == PHRASE and loaded.phrases is None:
            reports.append(f"{name}: the model folder has no phrase table (`redraft phrases` builds one)")
            continue
        reports.append(fit_half_and_report(model_dir, key, names, rows, labels, name,
                                           f"offered on {len(rows)} of {COPY_CASES} held-out spans"))
    return "\n".join(reports)


LEFT_TO_RIGHT_CASES = 3_000  # two network runs each (~40 ms): a few minutes


def calibrate_left_to_right(model_dir: Path, dev_files: list[SourceFile], seed: int = 8) -> str:
    """Fit the confidence of the line the next-token head writes (``left_to_right.py``) on
    half of the held-out spans where it writes one, write it into ``model_dir/config.json``,
    and report it on the other half. Fitted on the beam's most likely line of each span,
    though the server ranks every line the beam finished by it: fitted on every finished
    line instead, it showed fewer right lines at 0.3 (held-out dev, 2,000 spans, session
    22's weights: 227 of 383 against 237 of 397), the same at threshold 0 (HumanEval
    pass@1 95)."""
    completer = FimCompleter(load_served_model(model_dir))
    rows: list[list[float]] = []
    labels: list[bool] = []
    cases = dev_cases(dev_files, LEFT_TO_RIGHT_CASES, seed)
    for prefix, middle, suffix in cases:
        lines = completer.written_lines(prefix, suffix)
        if not lines:
            continue
        written = lines[0]
        network_text = completer.complete(network_alone(prefix, suffix))[0].text
        other_texts = source_texts(*completer.patterns.other_sources(CompletionRequest(prefix, suffix)))
        rows.append(written.features(network_text, statement_parses(prefix, written.text, suffix), other_texts))
        labels.append(same_code(written.text, middle))
    return fit_half_and_report(model_dir, LEFT_TO_RIGHT_KEY, LEFT_TO_RIGHT_FEATURES, rows, labels,
                               "lines written left to right", f"on {len(rows)} of {len(cases)} held-out spans")


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


SHOWN_CASES = 4_000  # the whole served pipeline each (~30 ms): a few minutes


def calibrate_shown(model_dir: Path, dev_files: list[SourceFile], seed: int = 10) -> str:
    """Complete held-out spans as the server does as you type (its workspace the package's
    other files), fit each source's map of the winner's confidence (``shown_calibration.py``)
    on the winners of half of them, write it into ``model_dir/config.json``, and report the
    shown precision on the other half before and after. Run after every other FIM
    calibrator: it maps their confidences. Its spans (another seed) are not theirs."""
    loaded = load_served_model(model_dir)
    calibration = loaded.metadata.get("calibration")
    if isinstance(calibration, dict):
        calibration.pop(SHOWN_KEY, None)  # the sources' own confidences
    completer = FimCompleter(loaded)
    wins: list[Win | None] = []
    for prefix, middle, suffix, related in with_workspace(dev_files, SHOWN_CASES, seed):
        candidates = completer.complete(CompletionRequest(prefix, suffix, max_steps=AS_YOU_TYPE_MAX_STEPS,
                                                          related=related))
        wins.append(None if not candidates else Win(source_of(candidates[0].copied), candidates[0].confidence,
                                                    same_code(candidates[0].text, middle)))
    half = len(wins) // 2
    shown = fit_shown([w for w in wins[:half] if w is not None])
    held_out = wins[half:]
    right = [w is not None and w.right for w in held_out]
    before = precision_curve([0.0 if w is None else w.confidence for w in held_out], right)
    after = precision_curve([0.0 if w is None else shown.confidence(w.source, w.confidence) for w in held_out], right)
    store_calibration(model_dir, SHOWN_KEY, shown.to_dict())
    counts = Counter(w.source for w in wins[:half] if w is not None)
    sources = ", ".join(f"{source} {counts[source]}"
                        + (f" (slope {r.slope:.2f}, intercept {r.intercept:+.2f})"
                           if (r := shown.by_source.get(source)) else " (kept)")
                        for source in sorted(counts))
    rows = [f"{'threshold':>9} {'shown':>7} {'precision':>10}   {'mapped: shown':>13} {'precision':>10}"]
    for (threshold, own_shown, own_precision), (_, mapped_shown, mapped_precision) in zip(before, after, strict=True):
        rows.append(f"{threshold:9.1f} {own_shown:7.1%} {_percent(own_precision):>10}   {mapped_shown:13.1%} "
                    f"{_percent(mapped_precision):>10}")
    side_by_side = "\n".join(rows)
    return (f"shown suggestions: {len(wins)} held-out spans completed as served; maps fitted on the winners of "
            f"{half} ({sources}); on the other {len(held_out)}, own confidence / mapped:\n{side_by_side}")


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

"""``redraft calibrate`` for the candidates that are not the canvas's: the copied lines and
the network's check of them, line continuations from the file and from the corpus, the
lines the next-token head writes (the map of each source's confidence to the precision of
what is shown is ``calibrate_shown.py``'s). Each is measured on held-out spans (``calibrate.py`` cuts them) and
written into the model folder's config.json."""

from __future__ import annotations

from pathlib import Path

from model.data.corpus import SourceFile
from model.fim.calibrate import fit_half_and_report, network_alone, with_workspace
from model.fim.completion_request import CompletionRequest
from model.fim.copy_check import CHECK_FEATURES, CHECKED_KINDS, CONFIG_KEY
from model.fim.fim_patterns import COPY_KINDS, RelatedLines, copy_candidate
from model.fim.held_out_cases import dev_cases, same_code
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
from model.languages.python_statement import statement_parses
from model.model_folder import store_calibration
from model.runtime.serving import load_served_model

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

"""The FIM candidates that need no network: a copied line (``fim_patterns.py``), or the
cursor's line continued as the file (``line_continuation.py``) or the training code
(``phrase_table.py``) continue it. A copy is as confident as its bucket was right on
held-out code; a weak copy (``copy_check.py``) and a continuation, as their calibrators
say, which read the network's first pass as a second opinion."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from model.fim.calibration import Calibrator, parse_checked
from model.fim.completion_request import MAX_CONFIDENCE, Candidate, CompletionRequest
from model.fim.copy_check import CHECK_FEATURES, CHECKED_KINDS, CONFIG_KEY, check_features
from model.fim.copy_check import STATEMENT_PARSES_AT as COPY_PARSES_AT
from model.fim.fim_patterns import COPY_KINDS, RelatedLines, copy_candidate
from model.fim.line_continuation import CONFIG_KEY as CONTINUATION_KEY
from model.fim.line_continuation import CONTINUATION_FEATURES, Continuation, LineContinuer
from model.fim.line_continuation import KIND as CONTINUED
from model.fim.line_continuation import STATEMENT_PARSES_AT as CONTINUATION_PARSES_AT
from model.fim.phrase_table import CONFIG_KEY as PHRASE_KEY
from model.fim.phrase_table import KIND as PHRASE
from model.fim.phrase_table import PHRASE_FEATURES, PhraseTable, phrase_features
from model.fim.shown_calibration import COPY, ShownCalibration
from model.fim.suffix_overlap import repeats_the_document
from model.languages.statement import UNKNOWN_PARSE, StatementCheck
from model.sampler import Denoised
from model.tokenizer import CodeTokenizer


class PatternCandidates:
    """The copied line and the continuations of one request, from the calibrations in a
    model's config.json (``calibration``); a source with no calibration offers nothing."""

    def __init__(self, tokenizer: CodeTokenizer, calibration: dict[str, object], phrases: PhraseTable | None,
                 shown: ShownCalibration) -> None:
        self.tokenizer = tokenizer
        self.shown = shown
        self.copy_precision = copy_precisions(calibration)
        raw_check = calibration.get(CONFIG_KEY)
        self.copy_check = Calibrator.from_dict(raw_check, CHECK_FEATURES) if isinstance(raw_check, dict) else None
        raw_continuation = calibration.get(CONTINUATION_KEY)
        self.continuation_check = Calibrator.from_dict(raw_continuation, CONTINUATION_FEATURES) \
            if isinstance(raw_continuation, dict) else None
        self.continuer = LineContinuer()
        raw_phrase = calibration.get(PHRASE_KEY)
        self.phrase_check = Calibrator.from_dict(raw_phrase, PHRASE_FEATURES) \
            if isinstance(raw_phrase, dict) else None
        self.phrases = phrases

    def other_sources(self, request: CompletionRequest) -> tuple[Candidate | None, list[Continuation]]:
        """The request's copied line (``fim_patterns.py``), or else its line continuations:
        the candidates that need no network."""
        copied = self.copied_line(request)
        if not self.continues(request, copied):
            return copied, []
        return None, self.continuations(request.prefix, request.suffix, request.related)

    @staticmethod
    def continues(request: CompletionRequest, copied: Candidate | None) -> bool:
        """Whether the request's line continuations are among its other sources: only where
        it has no copied line (``copied_line``)."""
        return copied is None and request.copy_lines

    def copied_line(self, request: CompletionRequest) -> Candidate | None:
        """The request's copied line, unless it repeats the document; where there is none,
        the request's continuations are its other sources (``continues``)."""
        if not request.copy_lines:
            return None
        copied = self._copied_line(request)
        return None if copied is None or repeats_the_document(request.prefix, copied.text, request.suffix) \
            else copied

    def check_of(self, copied: Candidate) -> Calibrator | None:
        """The calibrator of a weakly supported copy (``copy_check.py``); None for a copy
        its bucket's precision alone scores."""
        return self.copy_check if copied.copied in CHECKED_KINDS else None

    def copy_check_features(
        self, text: str, kind: str, first_pass: np.ndarray, parsed: float = UNKNOWN_PARSE
    ) -> list[float] | None:
        """``parsed``: ``cursor_statement.statement_parses`` for ``text``, when measured."""
        return check_features(first_pass, self.tokenizer.encode(text), self.tokenizer.end_of_middle_id, kind, parsed)

    def checked(self, copied: Candidate, check: Calibrator, first_pass: np.ndarray,
                request: CompletionRequest, statement: StatementCheck) -> Candidate:
        """A weakly supported copy, its confidence from the network's second opinion
        (``copy_check.py``) and whether its statement parses with it."""
        values = self.copy_check_features(copied.text, copied.copied, first_pass)
        if values is None:
            return copied
        floor = self.shown.source_threshold(COPY, request.min_confidence, request.shown_at)
        values = parse_checked(check, values, COPY_PARSES_AT, floor, statement, copied.text)
        return replace(copied, confidence=min(MAX_CONFIDENCE, check(values)), features=values)

    def continuations(self, prefix: str, suffix: str, related: RelatedLines | None = None) -> list[Continuation]:
        """The cursor's line continued as the file (and the workspace's other files in
        ``related``) continue its last tokens, and as the training code does
        (``phrase_table.py``); each only once calibrated."""
        found = []
        if self.continuation_check is not None:
            found.append(self.continuer.continuation(prefix, suffix, related))
        if self.phrases is not None and self.phrase_check is not None:
            found.append(self.phrases.continuation(prefix, suffix))
        return [c for c in found if c is not None]

    def continued(
        self, continuation: Continuation, network_run: Denoised, network_text: str, request: CompletionRequest,
        statement: StatementCheck, offered: list[Continuation],
    ) -> Candidate | None:
        """A continuation of the line (``line_continuation.py``, ``phrase_table.py``), as
        confident as its calibrator says from its support, the network's first pass,
        whether the network wrote the same (``network_text``, the run's answer), and
        whether its statement parses with it."""
        check = self.continuation_check if continuation.kind == CONTINUED else self.phrase_check
        if check is None or network_run.first_pass is None:
            return None
        values = self.continuation_features(continuation, network_run.first_pass, network_text, request.prefix,
                                            offered)
        if values is None:
            return None
        floor = self.shown.source_threshold(continuation.kind, request.min_confidence, request.shown_at)
        values = parse_checked(check, values, CONTINUATION_PARSES_AT, floor, statement,
                               continuation.text)
        length = len(self.tokenizer.encode(continuation.text))
        return Candidate(continuation.text, min(MAX_CONFIDENCE, check(values)), 0, length, features=values,
                         copied=continuation.kind)

    def continuation_features(
        self, continuation: Continuation, first_pass: np.ndarray, network_text: str, prefix: str,
        offered: list[Continuation], parsed: float = UNKNOWN_PARSE,
    ) -> list[float] | None:
        """The inputs of the continuation's calibrator (``offered``: every continuation of
        this request; ``parsed``: ``cursor_statement.statement_parses``, when measured); None
        when it doesn't fit the canvas."""
        checked = self.copy_check_features(continuation.text, CONTINUED, first_pass)
        if checked is None:
            return None
        values = continuation.features(checked, network_text, parsed)
        if continuation.kind != PHRASE:
            return values
        file_text = next((c.text for c in offered if c.kind != PHRASE), None)
        return phrase_features(values, continuation.text, prefix, file_text)

    def _copied_line(self, request: CompletionRequest) -> Candidate | None:
        """The rest of a matching line (``fim_patterns.py``), as confident as its bucket
        was right on held-out code; None when no bucket covers it or none was measured."""
        copied = copy_candidate(request.prefix, request.suffix, request.related)
        if copied is None or self.copy_precision.get(copied.kind, 0.0) <= 0.0:
            return None
        length = len(self.tokenizer.encode(copied.text))
        return Candidate(copied.text, min(MAX_CONFIDENCE, self.copy_precision[copied.kind]), 0, length,
                         copied=copied.kind)


def source_texts(copied: Candidate | None, continuations: list[Continuation]) -> list[str]:
    """What the candidates that need no network (``PatternCandidates.other_sources``) write."""
    return [copied.text] if copied is not None else [c.text for c in continuations]


def copy_precisions(calibration: object) -> dict[str, float]:
    """Each copied-line bucket's measured precision (config.json ``calibration.fim_copy``)."""
    stored = calibration.get("fim_copy") if isinstance(calibration, dict) else None
    if not isinstance(stored, dict):
        return {}
    return {kind: float(entry["precision"]) for kind, entry in stored.items()
            if kind in COPY_KINDS and isinstance(entry, dict) and isinstance(entry.get("precision"), int | float)}

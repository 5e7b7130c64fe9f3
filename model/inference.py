"""FIM completion with a loaded model: context → cache → denoised candidates.

This is the one API the server (and ``redraft complete``/benchmarks) call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from model.calibration import UNKNOWN_PARSE, Calibrator, CursorStatement, features, with_parse_check
from model.copy_check import CHECK_FEATURES, CHECKED_KINDS, CONFIG_KEY, check_features
from model.copy_check import STATEMENT_PARSES_AT as COPY_PARSES_AT
from model.fim_patterns import COPY_KINDS, RelatedLines, copy_candidate
from model.formats import ContextBudget, context_ids, middle_from_canvas
from model.left_to_right import CONFIG_KEY as LEFT_TO_RIGHT_KEY
from model.left_to_right import FEATURE_NAMES as LEFT_TO_RIGHT_FEATURES
from model.left_to_right import KIND as LEFT_TO_RIGHT
from model.left_to_right import PARSES as LEFT_TO_RIGHT_PARSES
from model.left_to_right import LineRanking, Written, best_reachable, first_position, write_lines, written_after
from model.line_continuation import CONFIG_KEY as CONTINUATION_KEY
from model.line_continuation import CONTINUATION_FEATURES, Continuation, LineContinuer
from model.line_continuation import KIND as CONTINUED
from model.line_continuation import STATEMENT_PARSES_AT as CONTINUATION_PARSES_AT
from model.phrase_table import CONFIG_KEY as PHRASE_KEY
from model.phrase_table import KIND as PHRASE
from model.phrase_table import PHRASE_FEATURES, phrase_features
from model.sampler import CommitRule, Denoised, SamplerSettings, denoise
from model.serving import Cache, Room, ServedModel
from model.shown_calibration import CANVAS, COPY, ShownCalibration, source_of
from model.shown_calibration import CONFIG_KEY as SHOWN_KEY
from model.suffix_overlap import repeats_the_document


@dataclass(frozen=True)
class Candidate:
    text: str
    confidence: float  # in [0, 1]; calibrated later, a probability-like score for now
    steps: int  # denoising steps (forward passes over the canvas)
    tokens: int  # committed tokens up to end-of-middle
    trace: list[str] = field(default_factory=list)  # intermediate states, when asked for
    features: list[float] = field(default_factory=list)  # what the calibrator reads
    # The copied-line bucket (fim_patterns.py), line_continuation.KIND, phrase_table.KIND or
    # left_to_right.KIND: where a candidate not denoised on the canvas came from.
    copied: str = ""


@dataclass(frozen=True)
class CompletionRequest:
    prefix: str
    suffix: str
    candidates: int = 1
    canvas_size: int = 32
    threshold: float = 0.9
    max_steps: int = 32
    rule: CommitRule = CommitRule.THRESHOLD
    keep_trace: bool = False
    length_first: bool = True  # decide where the middle ends in the first pass (sampler.py)
    freeze_tail: bool = True  # passes after the end is placed stop at it (sampler.py)
    # Also offer the rest of a line that starts like this one (fim_patterns.py) or, when
    # there is none, the cursor's line continued as its last tokens continue elsewhere
    # in the file (line_continuation.py) or in the training code (phrase_table.py).
    copy_lines: bool = True
    # Also offer the line written left to right by the next-token head (left_to_right.py),
    # once calibrated.
    left_to_right: bool = True
    related: RelatedLines | None = None  # the workspace's other files, for copies the file can't give
    # The server's threshold: then only which side of it a candidate falls matters, and
    # the parse check (~1.6 ms a request) is skipped when it can't change what is shown.
    # None (calibration, the CLI): every candidate's exact confidence is wanted.
    min_confidence: float | None = None
    # Python: a copy's or continuation's statement is parsed with it in place; other
    # languages leave that feature unknown.
    python: bool = True
    # Drop a candidate that repeats a line the document has next to the cursor or a top-level
    # definition (suffix_overlap.py), which may leave none; False: the network's answer as
    # it is, always one (benchmarks and calibration of the network alone).
    drop_repeats: bool = True


class Cancelled(Exception):
    """The caller asked to stop between denoising steps."""


# Passes the server allows an as-you-type (Automatic) request: its ``automaticMaxSteps``
# default (lsp_server/options.py). Calibration decodes this way too, so each calibrator is
# fitted on features of the decode it scores when served.
AS_YOU_TYPE_MAX_STEPS = 1
MAX_CONFIDENCE = 0.999  # a model's score is never certainty; threshold 1.0 shows nothing
# A copied line this likely to be right (its bucket's measured precision) answers a
# one-candidate request alone: the network's calibrated confidence rarely gets near it.
# Not a weak copy the network checks (``copy_check.py``), whatever its bucket's precision.
COPY_SKIPS_MODEL_AT = 0.5


def confidence_of(denoised: Denoised, end_ids: frozenset[int]) -> tuple[float, int]:
    """Geometric mean of the commit probabilities up to and including the end of the
    middle, and the middle's length in tokens. A canvas that never ended (filled to the
    last position) is halved: its text was probably cut short."""
    logs: list[float] = []
    for token, probability in zip(denoised.tokens, denoised.probabilities, strict=True):
        logs.append(math.log(max(probability, 1e-9)))
        if token in end_ids:
            return min(MAX_CONFIDENCE, math.exp(sum(logs) / len(logs))), len(logs) - 1
    return min(MAX_CONFIDENCE, 0.5 * math.exp(sum(logs) / max(1, len(logs)))), len(logs)


def source_texts(copied: Candidate | None, continuations: list[Continuation]) -> list[str]:
    """What the candidates that need no network (``FimCompleter.other_sources``) write."""
    return [copied.text] if copied is not None else [c.text for c in continuations]


class FimCompleter:
    def __init__(self, loaded: ServedModel) -> None:
        self.network = loaded.network
        self.tokenizer = loaded.tokenizer
        meta = loaded.metadata
        self.budget = ContextBudget.of(meta)
        self.end_ids = frozenset({self.tokenizer.end_of_middle_id, self.tokenizer.pad_id})
        calibration = meta.get("calibration")
        calibration = calibration if isinstance(calibration, dict) else {}
        raw_fim, raw_check = calibration.get("fim"), calibration.get(CONFIG_KEY)
        self.calibrator = Calibrator.from_dict(raw_fim) if isinstance(raw_fim, dict) else None
        self.copy_precision = copy_precisions(calibration)
        self.copy_check = Calibrator.from_dict(raw_check, CHECK_FEATURES) if isinstance(raw_check, dict) else None
        raw_continuation = calibration.get(CONTINUATION_KEY)
        self.continuation_check = Calibrator.from_dict(raw_continuation, CONTINUATION_FEATURES) \
            if isinstance(raw_continuation, dict) else None
        self.continuer = LineContinuer()
        raw_phrase = calibration.get(PHRASE_KEY)
        self.phrase_check = Calibrator.from_dict(raw_phrase, PHRASE_FEATURES) \
            if isinstance(raw_phrase, dict) else None
        self.phrases = loaded.phrases
        raw_written = calibration.get(LEFT_TO_RIGHT_KEY)
        self.left_to_right_check = Calibrator.from_dict(raw_written, LEFT_TO_RIGHT_FEATURES) \
            if isinstance(raw_written, dict) else None
        self.shown = ShownCalibration.from_dict(calibration.get(SHOWN_KEY))
        self._cached_ids: list[int] = []
        self._cache: Cache | None = None

    def prepare(self, prefix: str, suffix: str, canvas_size: int) -> tuple[list[int], Room]:
        """The context's ids and a canvas room holding the cache of the longest unchanged
        token prefix of the last context (suffix first: typing at the cursor leaves only the
        prefix tail pending); the first denoising pass encodes the rest."""
        ids = context_ids(self.tokenizer, prefix, suffix, self.budget)
        common = 0
        for old, new in zip(self._cached_ids, ids, strict=False):
            if old != new:
                break
            common += 1
        # Always encode at least the position the head's line starts from (``first_position``):
        # that pass gives its distribution too, and the beam search needs no pass of its own.
        head_at = first_position(self.tokenizer, ids)
        common = min(common, head_at)
        reuse = None
        if self._cache is not None and common > 0:
            reuse = [(k[:, :common], v[:, :common]) for k, v in self._cache]
        room = self.network.make_room(reuse, canvas_size, pending=np.array(ids[common:], dtype=np.int64))
        room.head_at = head_at
        return ids, room

    def complete(
        self, request: CompletionRequest, should_stop: Callable[[], bool] = lambda: False
    ) -> list[Candidate]:
        """Up to ``request.candidates`` distinct candidates, best first. Raises Cancelled."""
        if should_stop():
            raise Cancelled
        copied, continuations = self.other_sources(request)
        check = self.copy_check if copied is not None and copied.copied in CHECKED_KINDS else None
        # A sure copy answers an as-you-type request alone, and leads an Invoked one.
        copy_leads = copied is not None and copied.confidence >= COPY_SKIPS_MODEL_AT and check is None
        if copied is not None and copy_leads and request.candidates == 1:
            return [self._as_shown(copied)]
        settings = SamplerSettings(request.canvas_size, request.threshold, request.max_steps, request.rule,
                                   request.length_first, request.freeze_tail)
        ids, room = self.prepare(request.prefix, request.suffix, settings.canvas_size)
        statement = CursorStatement(request.prefix, request.suffix)  # found once, if a check needs it
        tok = self.tokenizer
        run = denoise(self.network, room, tok.mask_id, self.end_ids, settings, should_stop, request.keep_trace)
        if room.pending is None:  # the first pass ran: the context is encoded, keep it
            self._cached_ids, self._cache = ids, room.context_cache()
        if run.stopped:
            raise Cancelled
        if copied is not None and check is not None and run.first_pass is not None:
            copied = self._checked(copied, check, run.first_pass, request, statement)
        # Candidates from copies and continuations; the file's and the corpus's continuations
        # may differ, and an Invoked request shows both.
        patterned = [copied] if copied is not None else []
        network_text = middle_from_canvas(tok, run.tokens)  # what the candidates agree with or not
        for continuation in continuations:
            continued = self._continued(continuation, run, network_text, request, statement, continuations)
            if continued is not None and all(c.text != continued.text for c in patterned):
                patterned.append(continued)
            elif continued is not None:  # the same text twice: keep the more confident
                patterned = [continued if c.text == continued.text and continued.confidence > c.confidence else c
                             for c in patterned]
        written = self._written_lines(ids, room, request, network_text, source_texts(copied, continuations),
                                      statement, should_stop)
        patterned.extend(written[:1])
        # What an as-you-type request ranks; an Invoked one ranks the same first and offers
        # the rest after it: the beam's runner-ups and canvases whose first token is forced
        # to a runner-up, which no calibrator was fitted on. Ranked together, at threshold 0
        # such a canvas could outrank the as-you-type answer it would never replace.
        leading = _merged([self._scored(run, request, statement, alone=not patterned)], patterned)
        others = list(written[1:request.candidates])
        if request.candidates > 1 and room.pending is None:
            others.extend(self._scored(alternative, request, statement, alone=False)
                          for alternative in self._alternatives(room.context_cache(), settings, request, should_stop))
        if copied is not None and copy_leads:
            leading, others = [copied], [c for c in leading if c is not copied] + others
        ranked = self._ranked(leading, request)
        ranked += [c for c in self._ranked(others, request) if all(c.text != r.text for r in ranked)]
        return ranked[: request.candidates]

    def _scored(self, run: Denoised, request: CompletionRequest, statement: CursorStatement, alone: bool) -> Candidate:
        """A denoised canvas as a candidate, as confident as the canvas's calibrator says
        (``alone``: no other candidate to rank it against, see ``_needs_parse_check``)."""
        text = middle_from_canvas(self.tokenizer, run.tokens)
        confidence, length = confidence_of(run, self.end_ids)
        values = features(run, self.end_ids, request.prefix, text, request.suffix, check_parse=False)
        if self._needs_parse_check(values, request, alone):
            values = with_parse_check(values, statement, text)
        if self.calibrator is not None:
            confidence = min(MAX_CONFIDENCE, self.calibrator(values))
        trace = [middle_from_canvas_with_masks(self, state) for state in run.trace]
        return Candidate(text, confidence, run.steps, length, trace, values)

    def _ranked(self, candidates: list[Candidate], request: CompletionRequest) -> list[Candidate]:
        """Most confident first, as shown (``_as_shown``), one per text; without a line the
        document already has next to the cursor or a second top-level definition of a name,
        which are almost never what goes there."""
        if request.drop_repeats:
            candidates = [c for c in candidates if not repeats_the_document(request.prefix, c.text, request.suffix)]
        ranked: list[Candidate] = []
        for candidate in sorted((self._as_shown(c) for c in candidates), key=lambda c: c.confidence, reverse=True):
            if all(c.text != candidate.text for c in ranked):
                ranked.append(candidate)
        return ranked

    def _as_shown(self, candidate: Candidate) -> Candidate:
        """``candidate`` with the precision its source had where it was shown (``shown_calibration.py``)."""
        shown = self.shown.confidence(source_of(candidate.copied), candidate.confidence)
        return replace(candidate, confidence=min(MAX_CONFIDENCE, shown))

    def _floor(self, request: CompletionRequest, source: str) -> float | None:
        """The server's threshold on ``source``'s own confidence (None: no threshold)."""
        return self.shown.source_threshold(source, request.min_confidence)

    def other_sources(self, request: CompletionRequest) -> tuple[Candidate | None, list[Continuation]]:
        """The request's copied line (``fim_patterns.py``), or else its line continuations:
        the candidates that need no network."""
        if not request.copy_lines:
            return None, []
        copied = self._copied_line(request)
        if copied is not None and not repeats_the_document(request.prefix, copied.text, request.suffix):
            return copied, []
        return None, self.continuations(request.prefix, request.suffix, request.related)

    def _needs_parse_check(self, values: list[float], request: CompletionRequest, alone: bool) -> bool:
        """Skipped only for the server (a threshold is set): when the check can't move the
        candidate across it — and, with other candidates to rank against, when it can't
        even reach it."""
        floor = self._floor(request, CANVAS)
        if self.calibrator is None or floor is None:
            return True
        low, high = self.calibrator.with_either_parse(values)
        if alone:
            return low < floor <= high
        return high >= floor

    def first_pass(self, prefix: str, suffix: str, canvas_size: int = 32) -> np.ndarray:
        """The first denoising pass's distributions over a fully masked canvas (position,
        vocab): the sampler's own first pass, stopped there."""
        _, room = self.prepare(prefix, suffix, canvas_size)
        one_pass = SamplerSettings(canvas_size, max_steps=1)
        run = denoise(self.network, room, self.tokenizer.mask_id, self.end_ids, one_pass)
        assert run.first_pass is not None  # nothing was forced
        return run.first_pass

    def copy_check_features(
        self, text: str, kind: str, first_pass: np.ndarray, parsed: float = UNKNOWN_PARSE
    ) -> list[float] | None:
        """``parsed``: ``calibration.statement_parses`` for ``text``, when measured."""
        return check_features(first_pass, self.tokenizer.encode(text), self.tokenizer.end_of_middle_id, kind, parsed)

    def _checked(self, copied: Candidate, check: Calibrator, first_pass: np.ndarray,
                 request: CompletionRequest, statement: CursorStatement) -> Candidate:
        """A weakly supported copy, its confidence from the network's second opinion
        (``copy_check.py``) and whether its statement parses with it."""
        values = self.copy_check_features(copied.text, copied.copied, first_pass)
        if values is None:
            return copied
        values = self._parse_checked(check, values, COPY_PARSES_AT, request, self._floor(request, COPY), statement,
                                     copied.text)
        return replace(copied, confidence=min(MAX_CONFIDENCE, check(values)), features=values)

    @staticmethod
    def _parse_checked(
        check: Calibrator, values: list[float], at: int, request: CompletionRequest, floor: float | None,
        statement: CursorStatement, text: str,
    ) -> list[float]:
        """``values`` with the statement-parses feature (index ``at``) measured: for Python
        only, and for the server only when the parse can bring ``text`` up to its threshold
        (``floor``, on the source's own confidence)."""
        if not request.python:
            return values
        if floor is not None and check.with_either_parse(values, at)[1] < floor:
            return values
        return [*values[:at], statement.parses_with(text), *values[at + 1:]]

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

    def _continued(
        self, continuation: Continuation, network_run: Denoised, network_text: str, request: CompletionRequest,
        statement: CursorStatement, offered: list[Continuation],
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
        values = self._parse_checked(check, values, CONTINUATION_PARSES_AT, request,
                                     self._floor(request, continuation.kind), statement, continuation.text)
        length = len(self.tokenizer.encode(continuation.text))
        return Candidate(continuation.text, min(MAX_CONFIDENCE, check(values)), 0, length, features=values,
                         copied=continuation.kind)

    def continuation_features(
        self, continuation: Continuation, first_pass: np.ndarray, network_text: str, prefix: str,
        offered: list[Continuation], parsed: float = UNKNOWN_PARSE,
    ) -> list[float] | None:
        """The inputs of the continuation's calibrator (``offered``: every continuation of
        this request; ``parsed``: ``calibration.statement_parses``, when measured); None
        when it doesn't fit the canvas."""
        checked = self.copy_check_features(continuation.text, CONTINUED, first_pass)
        if checked is None:
            return None
        values = continuation.features(checked, network_text, parsed)
        if continuation.kind != PHRASE:
            return values
        file_text = next((c.text for c in offered if c.kind != PHRASE), None)
        return phrase_features(values, continuation.text, prefix, file_text)

    def written_lines(self, prefix: str, suffix: str) -> list[Written]:
        """The cursor's lines as the next-token head's beam search finishes them
        (``left_to_right.py``), most likely first, on a freshly encoded context: for
        calibration and the decode bench, which need them whatever else is offered."""
        ids = context_ids(self.tokenizer, prefix, suffix, self.budget)
        cache = self.network.encode_context(np.array(ids, dtype=np.int64))
        return write_lines(self.network, self.tokenizer, ids, cache, prefix, suffix)

    def _written_lines(
        self, ids: list[int], room: Room, request: CompletionRequest, network_text: str, other_texts: list[str],
        statement: CursorStatement, should_stop: Callable[[], bool],
    ) -> list[Candidate]:
        """The ``request.candidates`` lines the next-token head's beam search finished that
        are most confident, most confident first, each
        as confident as its calibrator says from its token probabilities, whether the canvas
        or another source (``other_texts``) says the same, and whether it parses. The
        calibrator, not the beam's score, ranks them and prunes the search (``_ByConfidence``):
        through the server (session 22's weights) HumanEval single-line pass@1 at threshold
        0 went 89 → 102; at 0.3, 1,000 fresh spans, 141 right of 228 shown → 149 of 250."""
        check = self.left_to_right_check
        if check is None or not request.left_to_right or room.pending is not None:
            return []
        ranking = _ByConfidence(check, request, self._floor(request, LEFT_TO_RIGHT), statement, network_text,
                                other_texts)
        lines = write_lines(self.network, self.tokenizer, ids, room.context_cache(), request.prefix,
                            request.suffix, should_stop, ranking, first=room.head)
        if should_stop():
            raise Cancelled
        lines = [line for line in lines if not repeats_the_document(request.prefix, line.text, request.suffix)]
        candidates = []
        for written in _most_confident(lines, ranking, request.candidates):
            length = len(written.tokens)
            trace: list[str] = []
            for i in range(1, length + 1 if request.keep_trace else 1):  # the line as it is written
                data = b"".join(self.tokenizer.token_bytes[t] for t in written.tokens[:i])
                state = written_after(data, written.healed).split("\n")[0]
                if state and (not trace or state != trace[-1]):
                    trace.append(state)
            candidates.append(Candidate(written.text, ranking.value(written), written.passes, length, trace,
                                        ranking.features(written), copied=LEFT_TO_RIGHT))
        return sorted(candidates, key=lambda c: -c.confidence)

    def _copied_line(self, request: CompletionRequest) -> Candidate | None:
        """The rest of a matching line (``fim_patterns.py``), as confident as its bucket
        was right on held-out code; None when no bucket covers it or none was measured."""
        copied = copy_candidate(request.prefix, request.suffix, request.related)
        if copied is None or self.copy_precision.get(copied.kind, 0.0) <= 0.0:
            return None
        length = len(self.tokenizer.encode(copied.text))
        return Candidate(copied.text, min(MAX_CONFIDENCE, self.copy_precision[copied.kind]), 0, length,
                         copied=copied.kind)

    def _alternatives(
        self, cache: Cache, settings: SamplerSettings, request: CompletionRequest,
        should_stop: Callable[[], bool],
    ) -> list[Denoised]:
        """Other candidates: the first canvas token forced to its next most likely values, each
        recorded with the probability the network gave it (recorded as certain, a runner-up
        outranked the answer: 8 of 180 right answers on 1,000 fresh spans lost their place)."""
        tok = self.tokenizer
        canvas = np.full(settings.canvas_size, tok.mask_id, dtype=np.int64)
        at_first = np.array(self.network.probabilities(canvas, cache, np.zeros(1, dtype=np.int64))[0],
                            dtype=np.float32)
        at_first[tok.mask_id] = 0.0
        firsts = np.argsort(-at_first, kind="stable")[1:request.candidates + 1].tolist()
        runs = []
        for first in firsts:
            run = denoise(self.network, cache, tok.mask_id, self.end_ids, settings,
                          should_stop, forced={0: first}, forced_probabilities={0: float(at_first[first])})
            if run.stopped:
                raise Cancelled
            runs.append(run)
        return runs


def _merged(candidates: list[Candidate], patterned: list[Candidate]) -> list[Candidate]:
    """``candidates`` and ``patterned`` (copies, continuations, the head's line), one per
    text: the more confident where two write the same."""
    merged = list(candidates)
    for pattern in patterned:
        merged = [c for c in merged if c.text != pattern.text or c.confidence > pattern.confidence]
        if all(c.text != pattern.text for c in merged):
            merged.append(pattern)
    return merged


@dataclass
class _ByConfidence:
    """The server's ranking of the lines the head writes (``left_to_right.LineRanking``):
    their calibrated confidence. A line being written could at best become one the canvas
    or another source (``other_texts``) also writes, if it is still a start of one."""

    check: Calibrator
    request: CompletionRequest
    threshold: float | None  # the server's, on this source's own confidence
    statement: CursorStatement
    network_text: str
    other_texts: list[str]
    # Each finished text's parse check, once measured: the same text written with other
    # tokens has other log-probabilities, but parses the same.
    parsed: dict[str, float] = field(default_factory=dict)

    @property
    def floor(self) -> float:
        return -math.inf if self.threshold is None else self.threshold

    def features(self, written: Written) -> list[float]:
        values = written.features(self.network_text, self.parsed.get(written.text, UNKNOWN_PARSE), self.other_texts)
        if written.text in self.parsed:
            return values
        values = FimCompleter._parse_checked(self.check, values, LEFT_TO_RIGHT_PARSES, self.request, self.threshold,
                                             self.statement, written.text)
        if values[LEFT_TO_RIGHT_PARSES] != UNKNOWN_PARSE:
            self.parsed[written.text] = values[LEFT_TO_RIGHT_PARSES]
        return values

    def value(self, written: Written) -> float:
        return min(MAX_CONFIDENCE, self.check(self.features(written)))

    def bounds(self, written: Written) -> tuple[float, float]:
        """Whatever the parse check would say (``value`` lies between: an unknown parse is
        scored between a failed and a passed one)."""
        if written.text in self.parsed or not self.request.python:
            value = self.value(written)
            return value, value
        values = written.features(self.network_text, UNKNOWN_PARSE, self.other_texts)
        low, high = self.check.with_either_parse(values, LEFT_TO_RIGHT_PARSES)
        return min(MAX_CONFIDENCE, low), min(MAX_CONFIDENCE, high)

    @cached_property
    def _becomes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What a line could still become the canvas's / another source's text as: the text,
        or the text and the rest of the cursor's line (found once, not on every beam's token)."""
        rest = self.request.suffix.partition("\n")[0]
        return ((self.network_text, self.network_text + rest),
                tuple(t for text in self.other_texts for t in (text, text + rest)))

    def reachable(self, log_probs: list[float], line: str) -> float:
        canvas, others = self._becomes
        agreeable = any(text.startswith(line) for text in canvas)
        elsewhere = any(text.startswith(line) for text in others)
        return best_reachable(self.check, log_probs, agreeable, elsewhere)


def _most_confident(lines: list[Written], ranking: LineRanking, count: int) -> list[Written]:
    """The ``count`` lines of highest ``ranking.value``, measuring a line's exact value (its
    parse check, ~1.3 ms) only while the most it could get would still place it."""
    bounded = sorted(((ranking.bounds(line)[1], order, line) for order, line in enumerate(lines)),
                     key=lambda item: (-item[0], item[1]))
    valued: list[tuple[float, int, Written]] = []
    for high, order, line in bounded:
        if len(valued) >= count and valued[count - 1][0] >= high:
            break
        valued.append((ranking.value(line), order, line))
        valued.sort(key=lambda item: (-item[0], item[1]))
    return [line for _, _, line in valued[:count]]


def copy_precisions(calibration: object) -> dict[str, float]:
    """Each copied-line bucket's measured precision (config.json ``calibration.fim_copy``)."""
    stored = calibration.get("fim_copy") if isinstance(calibration, dict) else None
    if not isinstance(stored, dict):
        return {}
    return {kind: float(entry["precision"]) for kind, entry in stored.items()
            if kind in COPY_KINDS and isinstance(entry, dict) and isinstance(entry.get("precision"), int | float)}


def middle_from_canvas_with_masks(completer: FimCompleter, state: list[int]) -> str:
    """An intermediate state for display: committed text with ░ for masked tokens."""
    tok = completer.tokenizer
    pieces: list[str] = []
    for token in state:
        if token in (tok.end_of_middle_id, tok.pad_id):
            break
        pieces.append("░" if token == tok.mask_id else tok.decode([token]))
    return "".join(pieces)


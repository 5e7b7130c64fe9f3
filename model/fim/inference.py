"""FIM completion with a loaded model: context → cache → denoised candidates, ranked
with the candidates of copies and continuations (``pattern_candidates.py``) and the lines
the next-token head writes (``written_ranking.py``).

This is the one API the server (and ``redraft complete``/benchmarks) call; the request
and its candidates are in ``completion_request.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from functools import partial

import numpy as np

from model.fim.block_candidates import CONFIG_KEY as BLOCK_KEY
from model.fim.block_candidates import BlockCalibration, BlockWriter
from model.fim.calibration import Calibrator, features, with_parse_check
from model.fim.completion_request import MAX_CONFIDENCE, Cancelled, Candidate, CompletionRequest, merged
from model.fim.left_to_right import CONFIG_KEY as LEFT_TO_RIGHT_KEY
from model.fim.left_to_right import FEATURE_NAMES as LEFT_TO_RIGHT_FEATURES
from model.fim.left_to_right import KIND as LEFT_TO_RIGHT
from model.fim.left_to_right import Written, write_lines
from model.fim.length_candidates import LengthAnswer, candidate_lengths, choose, fill_over_lengths, rows_for
from model.fim.line_continuation import Continuation
from model.fim.pattern_candidates import PatternCandidates, source_texts
from model.fim.recent_contexts import RecentContexts, common_length
from model.fim.shown_calibration import CANVAS, ShownCalibration, source_of
from model.fim.shown_calibration import CONFIG_KEY as SHOWN_KEY
from model.fim.suffix_overlap import repeats_the_document
from model.fim.token_healing import first_position, written_after
from model.fim.written_ranking import ByConfidence, most_confident
from model.formats import ContextBudget, PrefixCut, context_cut, context_ids, middle_from_canvas
from model.languages.statement import StatementCheck
from model.runtime.canvas_room import Cache, Room, RoomMemory
from model.runtime.served_model import ServedModel
from model.sampler import Denoised, SamplerSettings, denoise

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


class FimCompleter:
    def __init__(self, loaded: ServedModel) -> None:
        self.network = loaded.network
        self.tokenizer = loaded.tokenizer
        meta = loaded.metadata
        self.budget = ContextBudget.of(meta)
        self.end_ids = frozenset({self.tokenizer.end_of_middle_id, self.tokenizer.pad_id})
        calibration = meta.get("calibration")
        calibration = calibration if isinstance(calibration, dict) else {}
        raw_fim = calibration.get("fim")
        self.calibrator = Calibrator.from_dict(raw_fim) if isinstance(raw_fim, dict) else None
        raw_written = calibration.get(LEFT_TO_RIGHT_KEY)
        self.left_to_right_check = Calibrator.from_dict(raw_written, LEFT_TO_RIGHT_FEATURES) \
            if isinstance(raw_written, dict) else None
        self.shown = ShownCalibration.from_dict(calibration.get(SHOWN_KEY))
        self.patterns = PatternCandidates(self.tokenizer, calibration, loaded.phrases, self.shown)
        self.blocks = BlockWriter(self.network, self.tokenizer, BlockCalibration.from_dict(calibration.get(BLOCK_KEY)))
        self._cached_ids: list[int] = []
        self._cache: Cache | None = None
        self._prefix_cut: PrefixCut | None = None  # the last context's, kept while typing on
        self._room_memory = RoomMemory()  # where ``prepare`` builds its rooms
        self._recent = RecentContexts(self.tokenizer, self.budget)  # the contexts of places left
        self._denoiser = ThreadPoolExecutor(1, thread_name_prefix="redraft-denoise")  # ``_denoised_and_continued``

    def prepare(self, prefix: str, suffix: str, canvas_size: int) -> tuple[list[int], Room]:
        """The context's ids and a canvas room holding the cache of the longest unchanged
        token prefix of the last context (suffix first: typing at the cursor leaves only the
        prefix tail pending), or at another place, of a context left there (``recent_contexts.py``);
        the first denoising pass encodes the rest."""
        left_cut = self._prefix_cut
        ids, self._prefix_cut = context_cut(self.tokenizer, prefix, suffix, self.budget, left_cut)
        common, cache, resumed = common_length(self._cached_ids, ids), self._cache, None
        if common < self._recent.place_end(ids):  # another place than the last request's
            resumed = self._recent.resume(prefix, suffix, ids, self._prefix_cut, common)
            if cache is not None and common < self._recent.place_end(self._cached_ids):
                self._recent.leave(self._cached_ids, cache, left_cut)
            if resumed is not None:
                ids, self._prefix_cut, cache, common = resumed.ids, resumed.cut, resumed.kept.cache, resumed.common
        # Always encode at least the position the head's line starts from (``first_position``):
        # that pass gives its distribution too, and the beam search needs no pass of its own.
        head_at = first_position(self.tokenizer, ids)
        common = min(common, head_at)
        reuse = None
        if cache is not None and common > 0:
            reuse = [(k[:, :common], v[:, :common]) for k, v in cache]
        room = self.network.make_room(reuse, canvas_size, np.array(ids[common:], dtype=np.int64), self._room_memory)
        room.head_at = head_at
        # The room may be built where the last context lies (``RoomMemory``), and its first
        # pass then writes over what followed the common part: only that part is kept, as
        # the room holds it (a resumed context's buffer is then free for others).
        self._cached_ids = ids[:common]
        self._cache = None if reuse is None else [(k[:, :common], v[:, :common]) for k, v in room.layers]
        if resumed is not None:
            self._recent.release(resumed)
        return ids, room

    def complete(
        self, request: CompletionRequest, should_stop: Callable[[], bool] = lambda: False
    ) -> list[Candidate]:
        """Up to ``request.candidates`` distinct candidates, best first. Raises Cancelled."""
        if should_stop():
            raise Cancelled
        copied = self.patterns.copied_line(request)
        check = self.patterns.check_of(copied) if copied is not None else None
        # A sure copy answers an as-you-type request alone, and leads an Invoked one.
        copy_leads = copied is not None and copied.confidence >= COPY_SKIPS_MODEL_AT and check is None
        if copied is not None and copy_leads and request.candidates == 1:
            return [self._as_shown(copied, request)]
        settings = SamplerSettings(request.canvas_size, request.threshold, request.max_steps, request.rule,
                                   request.length_first, request.freeze_tail)
        ids, room = self.prepare(request.prefix, request.suffix, settings.canvas_size)
        statement = request.language.statement(request.prefix, request.suffix)  # found once, if a check needs it
        tok = self.tokenizer
        run, continuations = self._denoised_and_continued(room, settings, request, copied, should_stop)
        if room.pending is None:  # the first pass ran: the context is encoded, keep it
            self._cached_ids, self._cache = ids, room.context_cache()
        if run.stopped:
            raise Cancelled
        if copied is not None and check is not None and run.first_pass is not None:
            copied = self.patterns.checked(copied, check, run.first_pass, request, statement)
        # Candidates from copies and continuations; the file's and the corpus's continuations
        # may differ, and an Invoked request shows both.
        patterned = [copied] if copied is not None else []
        network_text = middle_from_canvas(tok, run.tokens)  # what the candidates agree with or not
        for continuation in continuations:
            continued = self.patterns.continued(continuation, run, network_text, request, statement, continuations)
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
        leading = merged([self._scored(run, request, statement, alone=not patterned)], patterned)
        others = list(written[1:request.candidates])
        if request.candidates > 1 and room.pending is None:
            others.extend(self._scored(alternative, request, statement, alone=False)
                          for alternative in self._alternatives(room.context_cache(), settings, request, should_stop))
        if copied is not None and copy_leads:
            leading, others = [copied], [c for c in leading if c is not copied] + others
        ranked = self._ranked(leading, request, statement)
        block = self._block(room, request, statement, ranked[0].text if ranked else None, should_stop)
        if block is not None and all(c.text != block.text for c in ranked):
            # Ranked with the lines by confidence: both are precisions of the whole answer.
            ranked = sorted([*ranked, block], key=lambda c: c.confidence, reverse=True)
        ranked += [c for c in self._ranked(others, request, statement) if all(c.text != r.text for r in ranked)]
        return ranked[: request.candidates]

    def _block(self, room: Room, request: CompletionRequest, statement: StatementCheck, first_line: str | None,
               should_stop: Callable[[], bool]) -> Candidate | None:
        """A block at the request's block site (``block_candidates.py``), when one is asked
        for and could be shown; its canvas is denoised over the context the lines encoded."""
        if not request.blocks or room.pending is not None:
            return None
        site = self.blocks.site(request)
        if site is None or not self.blocks.reachable(request):
            return None
        run = self.blocks.denoised(room.context_cache(), should_stop)
        if run.stopped:
            raise Cancelled
        block = self.blocks.candidate(run, site, request, statement, first_line)
        if block is None or (request.drop_repeats and (
                repeats_the_document(request.prefix, block.text, request.suffix)
                or statement.rules_out(block.text))):
            return None
        return block

    def _denoised_and_continued(
        self, room: Room, settings: SamplerSettings, request: CompletionRequest, copied: Candidate | None,
        should_stop: Callable[[], bool],
    ) -> tuple[Denoised, list[Continuation]]:
        """The canvas denoised in ``room``, and the cursor's line continuations when the
        request has no copied line (``PatternCandidates.other_sources``). The continuations
        are looked up in Python while the canvas's pass runs on a thread of its own: ONNX
        Runtime computes without the GIL, so the two run side by side on the two cores. Over
        the typing bench's keystrokes in-process, alternated request by request with the two
        one after the other: p50 −0.3 to −0.5 ms, the same answers."""
        denoising = partial(denoise, self.network, room, self.tokenizer.mask_id, self.end_ids, settings,
                            should_stop, request.keep_trace)
        if not self.patterns.continues(request, copied):
            return denoising(), []
        running = self._denoiser.submit(denoising)
        try:
            continuations = self.patterns.continuations(request.prefix, request.suffix, request.related)
        except BaseException:
            wait([running])  # the room is the pass's until it is done
            raise
        return running.result(), continuations

    def _scored(self, run: Denoised, request: CompletionRequest, statement: StatementCheck, alone: bool) -> Candidate:
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

    def _ranked(self, candidates: list[Candidate], request: CompletionRequest,
                statement: StatementCheck) -> list[Candidate]:
        """Most confident first, as shown (``_as_shown``), one per text; without a line the
        document already has next to the cursor or a second top-level definition of a name,
        which are almost never what goes there, and without a candidate that
        could be shown and that syntax rules out (``StatementCheck.rules_out``): the
        calibrators read the parse as one feature among others, so a continuation the file
        repeats everywhere kept 0.75 with its statement broken (``super().__init__(*args,
        **kwargs)`` + ``:``)."""
        if request.drop_repeats:
            candidates = [c for c in candidates if not repeats_the_document(request.prefix, c.text, request.suffix)]
        ranked: list[Candidate] = []
        floor = request.min_confidence or 0.0
        shown = (self._as_shown(c, request) for c in candidates)
        for candidate in sorted(shown, key=lambda c: c.confidence, reverse=True):
            if any(c.text == candidate.text for c in ranked):
                continue
            if request.drop_repeats and candidate.confidence >= floor \
                    and statement.rules_out(candidate.text):
                continue
            ranked.append(candidate)
        return ranked

    def _as_shown(self, candidate: Candidate, request: CompletionRequest) -> Candidate:
        """``candidate`` with the precision its source had where it was shown (``shown_calibration.py``)."""
        shown = self.shown.confidence(source_of(candidate.copied), candidate.confidence, request.shown_at)
        return replace(candidate, confidence=min(MAX_CONFIDENCE, shown))

    def _floor(self, request: CompletionRequest, source: str) -> float | None:
        """The server's threshold on ``source``'s own confidence (None: no threshold)."""
        return self.shown.source_threshold(source, request.min_confidence, request.shown_at)

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

    def over_lengths(self, prefix: str, suffix: str, canvas_size: int = 32) -> LengthAnswer:
        """The canvas decided in one pass over candidate lengths (``length_candidates.py``):
        for the decode bench."""
        lengths = candidate_lengths(canvas_size)
        ids, room = self.prepare(prefix, suffix, rows_for(lengths))
        candidates = fill_over_lengths(self.network, room, self.tokenizer, lengths)
        self._cached_ids, self._cache = ids, room.context_cache()
        return choose(candidates, self.tokenizer, prefix, suffix)

    def written_lines(self, prefix: str, suffix: str) -> list[Written]:
        """The cursor's lines as the next-token head's beam search finishes them
        (``left_to_right.py``), most likely first, on a freshly encoded context: for
        calibration and the decode bench, which need them whatever else is offered."""
        ids = context_ids(self.tokenizer, prefix, suffix, self.budget)
        cache = self.network.encode_context(np.array(ids, dtype=np.int64))
        return write_lines(self.network, self.tokenizer, ids, cache, prefix, suffix)

    def _written_lines(
        self, ids: list[int], room: Room, request: CompletionRequest, network_text: str, other_texts: list[str],
        statement: StatementCheck, should_stop: Callable[[], bool],
    ) -> list[Candidate]:
        """The ``request.candidates`` lines the next-token head's beam search finished that
        are most confident, most confident first, each
        as confident as its calibrator says from its token probabilities, whether the canvas
        or another source (``other_texts``) says the same, and whether it parses. The
        calibrator, not the beam's score, ranks them and prunes the search (``written_ranking.py``):
        through the server (earlier weights) HumanEval single-line pass@1 at threshold
        0 went 89 → 102; at 0.3, 1,000 fresh spans, 141 right of 228 shown → 149 of 250."""
        check = self.left_to_right_check
        if check is None or not request.left_to_right or room.pending is not None:
            return []
        ranking = ByConfidence(check, request, self._floor(request, LEFT_TO_RIGHT), statement, network_text,
                               other_texts)
        lines = write_lines(self.network, self.tokenizer, ids, room, request.prefix,
                            request.suffix, should_stop, ranking, first=room.head, drafts=[network_text, *other_texts])
        if should_stop():
            raise Cancelled
        lines = [line for line in lines if not repeats_the_document(request.prefix, line.text, request.suffix)]
        candidates = []
        for written in most_confident(lines, ranking, request.candidates):
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


def middle_from_canvas_with_masks(completer: FimCompleter, state: list[int]) -> str:
    """An intermediate state for display: committed text with ░ for masked tokens."""
    tok = completer.tokenizer
    pieces: list[str] = []
    for token in state:
        if token in (tok.end_of_middle_id, tok.pad_id):
            break
        pieces.append("░" if token == tok.mask_id else tok.decode([token]))
    return "".join(pieces)


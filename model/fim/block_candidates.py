"""A block at a block site (``block_site.py``), denoised on a canvas sized for several lines.

Where a body is expected the canvas is the diffusion model's own ground: ``BLOCK_CANVAS``
positions filled in parallel in at most ``BLOCK_PASSES`` passes over the context the line's
candidates already encoded, the text cut where the block ends, then checked by the
language's parser with the suffix in place. Its confidence is the precision of the whole
block, from a calibrator of its own (``fim_block`` in config.json, one per language
family), fitted on bodies cut from packages held out by package (``calibrate_blocks.py``).
A block is offered only when its family has one; below the threshold the line's candidates
answer alone, and when the calibrator can't reach the threshold whatever the block's
parse and first line say, the canvas is not even denoised.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from model.fim.block_site import BlockSite, block_site, cut_block
from model.fim.calibration import Calibrator, squashed
from model.fim.completion_request import MAX_CONFIDENCE, Candidate, CompletionRequest
from model.formats import middle_from_canvas
from model.languages.statement import StatementCheck
from model.runtime.canvas_room import Cache
from model.runtime.served_model import ServingNetwork
from model.sampler import CommitRule, Denoised, SamplerSettings, denoise
from model.tokenizer import CodeTokenizer

KIND = "block"  # Candidate.copied of a block
CONFIG_KEY = "fim_block"  # its calibrators, per language family, in config.json's calibration
BLOCK_CANVAS = 64  # the longer of the canvases trained (TrainConfig.canvas_sizes)
BLOCK_PASSES = 3
COMMIT_AT = 0.9  # a pass commits the positions at least this likely (the last pass, all)
FEATURE_NAMES = ("mean_logp", "min_logp", "log_lines", "parses", "first_line_agrees")


@dataclass(frozen=True)
class BlockCalibration:
    by_family: dict[str, Calibrator]

    def to_dict(self) -> dict[str, object]:
        return {family: c.to_dict(FEATURE_NAMES) for family, c in self.by_family.items()}

    @classmethod
    def from_dict(cls, raw: object) -> BlockCalibration:
        if not isinstance(raw, dict):
            return cls({})
        found = {str(family): Calibrator.from_dict(entry, FEATURE_NAMES) if isinstance(entry, dict) else None
                 for family, entry in raw.items()}
        return cls({family: c for family, c in found.items() if c is not None})


def block_tokens(tokenizer: CodeTokenizer, run: Denoised, end_ids: frozenset[int], block: str) -> list[float]:
    """The commit probabilities of the canvas tokens that write ``block`` (the first ones
    whose text covers it)."""
    wanted, written, probabilities = len(block.rstrip("\n").encode("utf-8")), 0, []
    for token, probability in zip(run.tokens, run.probabilities, strict=True):
        if token in end_ids or written >= wanted:
            break
        written += len(tokenizer.token_bytes[token])
        probabilities.append(probability)
    return probabilities or [1e-9]


def block_features(probabilities: list[float], block: str, parses: float, agrees: float) -> list[float]:
    logs = [math.log(max(p, 1e-9)) for p in probabilities]
    return [sum(logs) / len(logs), min(logs), math.log(block.rstrip("\n").count("\n") + 1), parses, agrees]


class BlockWriter:
    """Blocks for one model: its network, tokenizer and block calibration."""

    def __init__(self, network: ServingNetwork, tokenizer: CodeTokenizer, calibration: BlockCalibration) -> None:
        self.network = network
        self.tokenizer = tokenizer
        self.calibration = calibration
        self.end_ids = frozenset({tokenizer.end_of_middle_id, tokenizer.pad_id})

    def site(self, request: CompletionRequest, calibrated_only: bool = True) -> BlockSite | None:
        """The request's block site, when a block may be offered there (``calibrated_only``:
        its language family has a block calibrator, which the server needs)."""
        family = request.language.family
        if calibrated_only and family not in self.calibration.by_family:
            return None
        return block_site(request.prefix, request.suffix, family)

    def reachable(self, request: CompletionRequest) -> bool:
        """Whether any block could clear the server's threshold: its calibrator's highest
        confidence, with certain tokens, a parse and an agreeing first line."""
        check = self.calibration.by_family.get(request.language.family)
        if check is None:
            return False
        if request.min_confidence is None:
            return True
        best = check.bias + sum(max(w * lo, w * hi) for w, (lo, hi) in zip(check.weights, _RANGES, strict=True))
        return squashed(best) >= request.min_confidence

    def denoised(self, cache: Cache, should_stop: Callable[[], bool] = lambda: False) -> Denoised:
        settings = SamplerSettings(BLOCK_CANVAS, COMMIT_AT, BLOCK_PASSES, CommitRule.THRESHOLD,
                                   length_first=True, freeze_tail=True)
        return denoise(self.network, cache, self.tokenizer.mask_id, self.end_ids, settings, should_stop)

    def candidate(self, run: Denoised, site: BlockSite, request: CompletionRequest, statement: StatementCheck,
                  first_line: str | None) -> Candidate | None:
        """The block ``run`` wrote, as confident as its family's calibrator says (0 without
        one; its ``features`` are the calibrator's inputs); None when it wrote no block.
        ``first_line``: what the line's candidates put first at the cursor."""
        block = cut_block(site, request.prefix, middle_from_canvas(self.tokenizer, run.tokens))
        if block is None:
            return None
        agrees = float(first_line is not None and block.split("\n", 1)[0].rstrip() == first_line.rstrip())
        values = block_features(block_tokens(self.tokenizer, run, self.end_ids, block), block,
                                statement.parses_with(block), agrees)
        check = self.calibration.by_family.get(request.language.family)
        confidence = 0.0 if check is None else min(MAX_CONFIDENCE, check(values))
        return Candidate(block, confidence, run.steps, len(block), [], values, copied=KIND)


# Each feature's range for ``BlockWriter.reachable``: log-probabilities up to 0, up to
# ``MAX_LINES`` lines, the two checks either way.
_RANGES = ((-20.7, 0.0), (-20.7, 0.0), (math.log(2), math.log(8)), (0.0, 1.0), (0.0, 1.0))

"""One-pass distillation: the canvas learns to write in its first pass what it writes stepwise.

As you type, the server decodes the canvas in one pass from all masks: every position takes
its most likely token under the network's per-position marginals at once. Where a middle has
several likely forms, the marginals mix them (the start of one spelling, the end of
another), which stepwise decoding avoids: it commits a few tokens and the rest agree with
them. On ``bench decode``'s 1,000 held-out spans the shipped model is 4.5% exact in one pass
against 7.5–7.8% stepwise, where issue #4 allows one point.

Sequence-level distillation (Kim & Rush, 2016; Gu et al., 2018 for parallel decoders)
trains on a teacher's decoded outputs instead of the references: each output is one mode of
the teacher, so there is nothing left to mix. Here the teacher is a model's own stepwise
decode (τ = 0.9, uncapped: within half a point of one token per step, at a fraction of its
passes), and the student learns to write it from the canvas masked whole (t = 1), the state
the one-pass decode starts from. The other examples train as before, on the references, so
the stepwise decoder keeps learning the code itself.

How long the teacher's answer is (``TeacherLength``): left to choose its own end (length
first), the teacher stops where an end first becomes likely, and on the training span mix
that is far short of the reference (a median of 3 tokens against 12); a student
trained on it learned to stop early too. Given the reference's length instead (its
end-of-middle placed before decoding), the teacher writes only the content, and the student
learns the references' lengths with the teacher's one-mode content.

``write_teacher_examples`` cuts FIM examples from the training split as training does and
decodes each with the teacher; ``TrainConfig.distill_file`` mixes them into FIM batches.
The file is JSON lines: a header naming the teacher and its tokenizer, then one example per
line (context, teacher's canvas, the head's written tokens, whether the teacher wrote the
reference, and the reference's length).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import random
import time
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import numpy as np

from model.data.corpus import SourceFile
from model.formats import ContextBudget, canvas_targets
from model.runtime.served_model import ServedModel
from model.sampler import CommitRule, SamplerSettings, denoise
from model.tokenizer import CodeTokenizer
from model.training.batches import sampling_weights
from model.training.fim_examples import FimExample, make_example

log = logging.getLogger(__name__)

TEACHER_THRESHOLD = 0.9
FORMAT = "redraft-teacher-examples/1"


class TeacherLength(Enum):
    REFERENCE = "reference"  # the reference's end-of-middle is given; the teacher writes the content
    OWN = "own"  # the teacher decides where the middle ends (length first)


class TeacherFileError(ValueError):
    """A teacher-examples file that can't be trained on (missing, foreign or for another tokenizer)."""


def tokenizer_fingerprint(tokenizer: CodeTokenizer) -> str:
    """A short digest of the vocabulary: a file's token ids mean nothing under another one."""
    digest = hashlib.sha256()
    for token in tokenizer.token_bytes:
        digest.update(len(token).to_bytes(2, "little") + token)
    digest.update(str(tokenizer.vocab_size).encode())
    return digest.hexdigest()[:16]


def teacher_canvas(
    served: ServedModel, context: list[int], canvas_size: int, length: int | None = None
) -> list[int] | None:
    """The teacher's stepwise decode of the canvas after ``context``, as training targets
    (middle, end-of-middle, padding); ``length``: the middle's, given (its end-of-middle
    committed before the first pass), or None for the teacher to choose. None when it runs
    to the canvas's edge without ending."""
    tokenizer = served.tokenizer
    if length is not None and not 0 < length < canvas_size:
        raise ValueError(f"a middle of {length} tokens does not fit a canvas of {canvas_size}")
    settings = SamplerSettings(canvas_size=canvas_size, threshold=TEACHER_THRESHOLD, max_steps=canvas_size,
                               rule=CommitRule.THRESHOLD, length_first=length is None, freeze_tail=True)
    room = served.network.make_room(None, canvas_size, pending=np.array(context, dtype=np.int64))
    end_ids = frozenset({tokenizer.end_of_middle_id, tokenizer.pad_id})
    forced = None if length is None else {length: tokenizer.end_of_middle_id}
    run = denoise(served.network, room, tokenizer.mask_id, end_ids, settings, forced=forced)
    ends = [i for i, token in enumerate(run.tokens) if token in end_ids]
    if not ends:
        return None
    middle = run.tokens[: ends[0]]
    if tokenizer.mask_id in middle:  # the step cap commits everything, so this can't happen; never train on a hole
        return None
    return canvas_targets(tokenizer, middle, canvas_size)


def write_teacher_examples(
    served: ServedModel, files: Sequence[SourceFile], count: int, out: Path, *,
    canvas_sizes: Sequence[int] = (32, 64), written_tokens: int = 40, seed: int = 0, teacher_name: str = "",
    length: TeacherLength = TeacherLength.REFERENCE,
) -> dict[str, float]:
    """``count`` FIM examples cut from ``files`` (by the training draw) with the teacher's
    canvas as targets, written to ``out``; returns how many, and how often the teacher wrote
    the reference."""
    if not files:
        raise ValueError("no files to cut examples from")
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    tokenizer = served.tokenizer
    budget = ContextBudget.of(served.metadata)
    rng = random.Random(seed)
    cumulative = list(itertools.accumulate(sampling_weights(files)))
    written = agreed = skipped = 0
    started = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "w") as handle:
        handle.write(json.dumps({"format": FORMAT, "teacher": teacher_name, "threshold": TEACHER_THRESHOLD,
                                 "length": length.value,
                                 "tokenizer": tokenizer_fingerprint(tokenizer),
                                 "context_tokens": budget.total, "max_suffix_tokens": budget.max_suffix}) + "\n")
        while written < count:
            if skipped > 50 * count + 100:
                raise ValueError("the teacher ends almost no canvas, or no example can be cut from these files")
            canvas_size = rng.choice(list(canvas_sizes))
            example = make_example(tokenizer, rng.choices(files, cum_weights=cumulative)[0].text, rng, budget,
                                   canvas_size, written_tokens=written_tokens)
            if example is None:
                skipped += 1
                continue
            reference_length = example.targets.index(tokenizer.end_of_middle_id)
            given = reference_length if length is TeacherLength.REFERENCE else None
            targets = teacher_canvas(served, example.context, canvas_size, given)
            if targets is None:
                skipped += 1
                continue
            agrees = targets == example.targets
            handle.write(json.dumps({"context": example.context, "targets": targets, "written": example.written,
                                     "agrees": agrees, "reference_length": reference_length}) + "\n")
            written += 1
            agreed += agrees
            if written % 500 == 0:
                log.info("%d/%d teacher examples (%.1f%% the reference), %.0f per second", written, count,
                         100 * agreed / written, written / (time.monotonic() - started))
    partial.replace(out)  # a file that exists is complete
    return {"examples": written, "agree_with_reference": agreed / written, "skipped": skipped}


def read_teacher_examples(path: Path, tokenizer: CodeTokenizer, budget: ContextBudget) -> dict[int, list[FimExample]]:
    """The file's examples by canvas size; raises TeacherFileError when they don't fit
    this tokenizer or context budget."""
    if not path.is_file():
        raise TeacherFileError(f"no teacher examples at {path} (write them with `redraft distill`)")
    by_size: dict[int, list[FimExample]] = {}
    with open(path) as handle:
        try:
            header = json.loads(handle.readline())
        except json.JSONDecodeError as exc:
            raise TeacherFileError(f"{path} is not a teacher-examples file: {exc}") from exc
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise TeacherFileError(f"{path} is not a teacher-examples file ({FORMAT})")
        if header.get("tokenizer") != tokenizer_fingerprint(tokenizer):
            raise TeacherFileError(f"{path} was written with another tokenizer than the one this run trains with")
        if (header.get("context_tokens"), header.get("max_suffix_tokens")) != (budget.total, budget.max_suffix):
            raise TeacherFileError(f"{path} was cut with a context budget of {header.get('context_tokens')} tokens, "
                                   f"this run trains with {budget.total}")
        for line in handle:
            record = json.loads(line)
            example = FimExample(record["context"], record["targets"], record["written"])
            by_size.setdefault(len(example.targets), []).append(example)
    if not by_size:
        raise TeacherFileError(f"{path} holds no examples")
    return by_size

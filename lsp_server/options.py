"""Server options: parsed once from ``initializationOptions`` (and later from
``workspace/didChangeConfiguration``), typed and fully defaulted.

A bad value is reported back as a message; the server keeps running on the default.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

# camelCase keys as clients send them → field names.
_KEYS = {
    "confidenceThreshold": "confidence_threshold",
    "nextEditConfidenceThreshold": "next_edit_confidence_threshold",
    "maxCandidates": "max_candidates",
    "canvasTokens": "canvas_tokens",
    "samplerThreshold": "sampler_threshold",
    "maxSteps": "max_steps",
    "automaticMaxSteps": "automatic_max_steps",
    "requestTimeoutMs": "request_timeout_ms",
    "debugRequests": "debug_requests",
    "learnFromFeedback": "learn_from_feedback",
}


@dataclass(frozen=True)
class ServerOptions:
    confidence_threshold: float = 0.75
    """Candidates whose confidence is below this are not shown (0..1). A shown confidence is
    the precision its source had where it won, at the cursor's place, in the document's
    language family (``shown_calibration.py``); 0.75 is the lowest threshold at which what
    is shown was right at least 85% of the time in both Python and JavaScript/TypeScript,
    each package scored by maps fitted on the others (``redraft calibrate --only shown``)."""
    next_edit_confidence_threshold: float = 0.5
    """Next-edit proposals whose confidence is below this are not shown (0..1). A confidence is
    the precision its kind of proposal reached on held-out real edits (``redraft calibrate``):
    0.5 shows edit patterns near and below the change (55–60% exact there) and hides the
    network's rewrites, which were never exact (README)."""
    max_candidates: int = 3
    """Most candidates answered to an Invoked request (1..5)."""
    canvas_tokens: int = 32
    """Tokens the model may write for one suggestion (8..64)."""
    sampler_threshold: float = 0.9
    """Denoising commits every token at least this probable in one step (0.05..1)."""
    max_steps: int = 1
    """Cap on denoising steps per suggestion when the user asks for one (Invoked) (1..64).
    One, as for as-you-type requests: every FIM calibrator is fitted on the
    one-pass decode, and 32 passes commit later tokens knowing the earlier ones, so their
    answers look surer than they are. Asked as Invoked at 0.3 on 1,000 fresh spans, 32
    passes showed 324 answers and 179 right, one pass 270 and 180 (Automatic's very answers)."""
    automatic_max_steps: int = 1
    """Cap on denoising steps for as-you-type (Automatic) suggestions (1..64). The capped step
    commits every token still open; an answer finished that way is less confident, and the
    confidence threshold decides whether it shows. The FIM calibration is fitted on this
    decode at its default (``AS_YOU_TYPE_MAX_STEPS``). As you type, the canvas's own text is
    seldom what is shown: where it wins, it was right less often than alone, and it needs a
    confidence of its own of 0.52 to show at the default threshold; its first pass encodes
    the typed tail and starts the next-token head's line. One pass, because a second cost
    ~2.4 ms of the typing bench's p50 (mean of runs 18.5 → 16.1 ms) for one right answer in
    1,000 fresh spans at 0.3, one in 2,000 dev spans, and three of 1,033 HumanEval lines at
    threshold 0."""
    request_timeout_ms: int = 2000
    """Model work for a request is abandoned after this long (50..30000)."""
    learn_from_feedback: bool = True
    """Raise the threshold of a kind of ghost text this user keeps dismissing (its accept rate
    well under theirs over all kinds, after 20 decisions; ``feedback_thresholds.py``)."""
    debug_requests: bool = False
    """Answer ``redraft/debugState`` (the server's copy of documents and its edit log); for tests."""


_BOUNDS: dict[str, tuple[float, float]] = {
    "confidence_threshold": (0.0, 1.0),
    "next_edit_confidence_threshold": (0.0, 1.0),
    "max_candidates": (1, 5),
    "canvas_tokens": (8, 64),
    "sampler_threshold": (0.05, 1.0),
    "max_steps": (1, 64),
    "automatic_max_steps": (1, 64),
    "request_timeout_ms": (50, 30_000),
}


def parse_options(raw: Any, base: ServerOptions | None = None) -> tuple[ServerOptions, list[str]]:
    """Options from a client's JSON object, plus one message per rejected value."""
    options = base or ServerOptions()
    # Lua clients (Neovim's vim.lsp) send an empty table as an empty JSON array: no options.
    if raw is None or raw == []:
        return options, []
    if not isinstance(raw, dict):
        return options, [f"Redraft: settings must be an object, got {type(raw).__name__}; using defaults"]
    problems: list[str] = []
    types_by_name = {f.name: f.type for f in fields(ServerOptions)}
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = _KEYS.get(key)
        if name is None:
            continue  # unknown keys belong to editor clients; ignore quietly
        wanted = types_by_name[name]
        if wanted == "bool":
            if isinstance(value, bool):
                changes[name] = value
            else:
                problems.append(f"Redraft: {key} must be true or false, got {value!r}; keeping the default")
            continue
        low, high = _BOUNDS[name]
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not is_number or (wanted == "int" and not float(value).is_integer()):
            problems.append(f"Redraft: {key} must be a number, got {value!r}; keeping {getattr(options, name)}")
            continue
        if not low <= value <= high:
            current = getattr(options, name)
            problems.append(f"Redraft: {key} must be within {low}..{high}, got {value}; keeping {current}")
            continue
        changes[name] = int(value) if wanted == "int" else float(value)
    return replace(options, **changes), problems

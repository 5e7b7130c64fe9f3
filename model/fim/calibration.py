"""Calibrated confidence: a small logistic model from sampler features to P(exact).

Features of one decoded candidate (all cheap, all from the sampler or the text):
mean and minimum log-probability at commit, length in tokens, steps per token, whether
the probability of ending was high, and whether the statement around the cursor still
parses when it parsed without the candidate (``model/languages``). Fitted
on held-out code, so that a threshold on the confidence means a precision.
Stored in the model folder's config.json.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.languages.python_statement import CursorStatement
from model.languages.statement import UNKNOWN_PARSE, StatementCheck
from model.sampler import Denoised

FEATURE_NAMES = ("mean_logp", "min_logp", "log_length", "steps_per_token", "end_logp", "parses")
PARSES = len(FEATURE_NAMES) - 1  # the parse feature's index (languages/python_statement.py)


def features(run: Denoised, end_ids: frozenset[int], prefix: str, middle: str, suffix: str,
             check_parse: bool = True) -> list[float]:
    """The calibrator's inputs; without ``check_parse`` the parse feature is left unknown
    (``with_parse_check`` fills it in later)."""
    logs: list[float] = []
    end_logp = math.log(1e-9)
    for token, probability in zip(run.tokens, run.probabilities, strict=True):
        logp = math.log(max(probability, 1e-9))
        if token in end_ids:
            end_logp = logp
            break
        logs.append(logp)
    logs = logs or [end_logp]
    values = [sum(logs) / len(logs), min(logs), math.log1p(len(logs)), run.steps / max(1, len(logs)), end_logp,
              UNKNOWN_PARSE]
    return with_parse_check(values, CursorStatement(prefix, suffix), middle) if check_parse else values


def with_parse_check(values: list[float], statement: StatementCheck, middle: str) -> list[float]:
    """``values`` with the parse feature measured (``StatementCheck.still_parses``)."""
    return [*values[:PARSES], statement.still_parses(middle)]


def parse_checked(
    check: Calibrator, values: list[float], at: int, floor: float | None, statement: StatementCheck, text: str,
) -> list[float]:
    """``values`` of another source's calibrator (``check``) with its statement-parses
    feature (index ``at``, ``StatementCheck.parses_with``) measured; for the server only
    when the parse can bring ``text`` up to its threshold (``floor``, on the source's own
    confidence)."""
    if floor is not None and check.with_either_parse(values, at)[1] < floor:
        return values
    return [*values[:at], statement.parses_with(text), *values[at + 1:]]


@dataclass(frozen=True)
class Calibrator:
    weights: tuple[float, ...]
    bias: float

    def with_either_parse(self, values: Sequence[float], at: int = PARSES) -> tuple[float, float]:
        """The lowest and highest confidence ``values`` can get, whatever the parse check
        (the feature at index ``at``) says."""
        low, high = sorted(self([*values[:at], parse, *values[at + 1:]]) for parse in (0.0, 1.0))
        return low, high

    def __call__(self, values: Sequence[float]) -> float:
        return squashed(self.bias + sum(w * x for w, x in zip(self.weights, values, strict=True)))

    def to_dict(self, names: Sequence[str] = FEATURE_NAMES) -> dict[str, object]:
        return {"features": list(names), "weights": list(self.weights), "bias": self.bias}

    @classmethod
    def from_dict(cls, raw: dict[str, object], names: Sequence[str] = FEATURE_NAMES) -> Calibrator | None:
        """The stored calibrator, or None when it was fitted on other features."""
        weights, bias = raw.get("weights"), raw.get("bias")
        if raw.get("features") != list(names) or not isinstance(weights, list) or not isinstance(
                bias, (int, float)):
            return None
        return cls(tuple(float(w) for w in weights), float(bias))


def squashed(z: float) -> float:
    """The logistic function, its input clamped so that ``exp`` cannot overflow."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def fit(rows: Sequence[Sequence[float]], labels: Sequence[bool], l2: float = 1e-2, steps: int = 200) -> Calibrator:
    """Logistic regression by Newton's method with a small L2 penalty."""
    x = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    x1 = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x1.shape[1])
    penalty = l2 * np.eye(x1.shape[1])
    penalty[-1, -1] = 0.0  # no penalty on the bias
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x1 @ w, -30, 30)))
        gradient = x1.T @ (p - y) + penalty @ w
        hessian = x1.T @ (x1 * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return Calibrator(tuple(float(v) for v in w[:-1]), float(w[-1]))

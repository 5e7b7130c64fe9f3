"""Thresholds raised for the ghost-text sources this user keeps rejecting.

The shown confidences are calibrated on held-out packages, but a user's code is its own:
a source (copied lines, say) may be wrong there far more often than on the packages it was
calibrated on. The clients' accept/dismiss feedback says so. A source whose accept rate
falls well below the user's rate over every source gets a higher threshold of its own;
comparing with the user's own rate, not with the calibrated precision, because how often a
person accepts ghost text that is right depends on how they type (many type it out), and
that habit is the same for every source. Thresholds are only ever raised: silence is the
safe side, and the server's early exits, which assume the user's threshold, stay exact.
"""

from __future__ import annotations

from collections.abc import Mapping

MIN_DECISIONS = 20  # accepts + dismissals of a source before its rate is read
PRIOR_DECISIONS = 10.0  # the source starts this many decisions at the user's overall rate
RAISED_BELOW = 0.6  # a source is raised once its rate is under this share of the overall rate
MAX_THRESHOLD = 0.95


def accept_rate(accepted: int, rejected: int) -> float | None:
    decided = accepted + rejected
    return accepted / decided if decided else None


def raised_thresholds(by_source: Mapping[str, Mapping[str, int]], threshold: float) -> dict[str, float]:
    """Each rejected-too-often source's threshold (above ``threshold``); sources not listed
    keep ``threshold``. ``by_source``: source → {"accepted": n, "rejected": m}."""
    accepted = sum(c.get("accepted", 0) for c in by_source.values())
    rejected = sum(c.get("rejected", 0) for c in by_source.values())
    overall = accept_rate(accepted, rejected)
    if overall is None or overall == 0.0:
        return {}
    raised = {}
    for source, counts in by_source.items():
        yes, no = counts.get("accepted", 0), counts.get("rejected", 0)
        if yes + no < MIN_DECISIONS:
            continue
        rate = (yes + PRIOR_DECISIONS * overall) / (yes + no + PRIOR_DECISIONS)
        ratio = rate / overall
        if ratio < RAISED_BELOW:
            # Half-way to certainty when the source is never accepted; less the closer it comes.
            lift = (1.0 - threshold) * (1.0 - ratio / RAISED_BELOW) * 0.5
            raised[source] = min(MAX_THRESHOLD, max(threshold, threshold + lift))
    return raised

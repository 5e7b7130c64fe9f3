"""A source the user keeps dismissing gets a higher threshold of its own."""

from lsp_server.completion import select_suggestions
from lsp_server.engine import ModelCandidate
from lsp_server.feedback_thresholds import MAX_THRESHOLD, MIN_DECISIONS, raised_thresholds


def _counts(accepted: int, rejected: int) -> dict[str, int]:
    return {"accepted": accepted, "rejected": rejected}


def test_a_source_dismissed_far_more_than_the_others_is_raised_and_the_others_are_not() -> None:
    raised = raised_thresholds({"copy": _counts(2, 60), "left_to_right": _counts(30, 30), "canvas": _counts(15, 15)},
                               0.5)
    assert set(raised) == {"copy"}
    assert 0.5 < raised["copy"] <= MAX_THRESHOLD


def test_nothing_is_raised_before_enough_decisions_or_for_a_user_who_accepts_nothing() -> None:
    assert raised_thresholds({"copy": _counts(0, MIN_DECISIONS - 1), "canvas": _counts(10, 0)}, 0.5) == {}
    assert raised_thresholds({"copy": _counts(0, 50), "canvas": _counts(0, 50)}, 0.5) == {}
    assert raised_thresholds({}, 0.5) == {}


def test_the_more_a_source_is_dismissed_the_higher_its_threshold_but_never_lower_than_the_user_s() -> None:
    others = {"canvas": _counts(40, 40)}
    somewhat = raised_thresholds({**others, "copy": _counts(8, 52)}, 0.5)["copy"]
    always = raised_thresholds({**others, "copy": _counts(0, 200)}, 0.5)["copy"]
    assert 0.5 < somewhat < always <= MAX_THRESHOLD
    assert all(t >= 0.9 for t in raised_thresholds({**others, "copy": _counts(0, 200)}, 0.9).values())


def test_a_raised_source_s_ghost_text_is_held_back_and_another_source_s_shown() -> None:
    candidates = [ModelCandidate("value)", 0.7, "copy"), ModelCandidate("x)", 0.6, "canvas")]
    assert [s.text for s in select_suggestions(candidates, "\n", 0.5, 2)] == ["value)", "x)"]
    shown = select_suggestions(candidates, "\n", 0.5, 2, raised={"copy": 0.8})
    assert [(s.text, s.source) for s in shown] == [("x)", "canvas")]

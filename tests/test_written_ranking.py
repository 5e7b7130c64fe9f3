"""How the server ranks the lines the next-token head writes (``written_ranking.py``): by
their calibrated confidence, not the beam's score, which also prunes the search; and the
completer offering them only once calibrated."""

import itertools
from dataclasses import dataclass, field

import numpy as np
import pytest

from model.fim.calibration import Calibrator
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.fim.left_to_right import (
    CONFIG_KEY,
    FEATURE_NAMES,
    KIND,
    Written,
    write_lines,
)
from model.fim.written_ranking import most_confident
from model.runtime.served_model import ServedModel
from model.runtime.torch_serving import TorchServing
from tests.test_left_to_right import PREFIX, SUFFIX, TOKENIZER, Forking, Scripted, _ids


@dataclass(frozen=True)
class Wanting:
    """A ranking (``LineRanking``) that values one line only, and knows which lines being
    written can still become it."""

    wanted: str
    floor: float = 0.5

    def value(self, written: Written) -> float:
        return float(written.text == self.wanted)

    def bounds(self, written: Written) -> tuple[float, float]:
        return self.value(written), self.value(written)

    def reachable(self, log_probs: list[float], line: str) -> float:
        return float(self.wanted.startswith(line))


def test_the_caller_s_ranking_not_the_beam_s_score_decides_which_lines_are_kept(
    tokenizer_free_network: TorchServing,
) -> None:
    prefix, suffix = "def f(value):\n    return ", "\n"
    ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(suffix), TOKENIZER.prefix_id, *TOKENIZER.encode(prefix)]
    network = Forking(tokenizer_free_network, " value", "s", "2")  # both lines end where the line does
    cache = network.encode_context(np.array(ids))
    lines = write_lines(network, TOKENIZER, ids, cache, prefix, suffix)
    assert [line.text for line in lines][:2] == ["values", "value2"]  # by score: the more likely first
    assert all(a.score >= b.score for a, b in itertools.pairwise(lines)) and len({line.passes for line in lines}) == 1
    # A ranking that wants the less likely line: the others are never kept.
    assert [line.text for line in write_lines(network, TOKENIZER, ids, cache, prefix, suffix,
                                              ranking=Wanting("value2"))] == ["value2"]
    assert write_lines(network, TOKENIZER, ids, cache, prefix, suffix, ranking=Wanting("value3")) == []
    # The server's ranking, its calibrator: an Invoked request also gets the runner-up.
    mean_logp = FEATURE_NAMES.index("mean_logp")
    trusting = Calibrator(tuple(1.0 if i == mean_logp else 0.0 for i in range(len(FEATURE_NAMES))), 1.0)
    invoked = _completer(network, trusting).complete(CompletionRequest(prefix, suffix, candidates=5, copy_lines=False))
    written = [c for c in invoked if c.copied == KIND]
    assert [c.text for c in written][:2] == ["values", "value2"]
    assert all(a.confidence >= b.confidence for a, b in itertools.pairwise(written))
    assert written[1].confidence == pytest.approx(trusting(written[1].features))


@dataclass
class Costly:
    """A ranking whose exact value costs (the parse check), around a bound known for free."""

    values: dict[str, float]
    floor: float = 0.0
    valued: list[str] = field(default_factory=list)

    def value(self, written: Written) -> float:
        self.valued.append(written.text)
        return self.values.get(written.text, 0.0)

    def bounds(self, written: Written) -> tuple[float, float]:
        value = self.values.get(written.text, 0.0)
        return value - 0.2, value + 0.1

    def reachable(self, log_probs: list[float], line: str) -> float:
        return 2.0


def test_a_line_is_valued_exactly_only_while_it_could_still_be_the_best(tokenizer_free_network: TorchServing) -> None:
    prefix, suffix = "def f(value):\n    return ", "\n"
    ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(suffix), TOKENIZER.prefix_id, *TOKENIZER.encode(prefix)]
    network = Forking(tokenizer_free_network, " value", "s", "2")
    cache = network.encode_context(np.array(ids))
    ranking = Costly({"values": 1.0, "value2": 0.5, "value3": 0.95})
    lines = write_lines(network, TOKENIZER, ids, cache, prefix, suffix, ranking=ranking)
    # "value2" finished after "values", whose value it can't reach: kept, never valued.
    assert [line.text for line in lines][:2] == ["values", "value2"]
    assert "values" in ranking.valued and "value2" not in ranking.valued
    ranking.valued.clear()
    assert [line.text for line in most_confident(lines, ranking, 1)] == ["values"] and ranking.valued == ["values"]
    ranking.values["value2"] = 0.95  # now it could beat "values" (bound 1.05): valued, and still second
    ranking.valued.clear()
    assert [line.text for line in most_confident(lines, ranking, 1)] == ["values"]
    assert sorted(ranking.valued) == ["value2", "values"]
    ranking.values["value2"] = 2.0
    assert [line.text for line in most_confident(lines, ranking, 2)] == ["value2", "values"]


def _completer(network: TorchServing, check: Calibrator | None, copies: float = 0.0) -> FimCompleter:
    calibration: dict[str, object] = {} if check is None else {CONFIG_KEY: check.to_dict(FEATURE_NAMES)}
    if copies:  # copied lines of one agreeing line, right this often
        calibration["fim_copy"] = {"copy_agree_1": {"precision": copies}}
    return FimCompleter(ServedModel(network, TOKENIZER, {"calibration": calibration}))


def test_a_line_that_another_source_also_writes_is_more_confident(tokenizer_free_network: TorchServing) -> None:
    elsewhere, mean_logp = FEATURE_NAMES.index("elsewhere"), FEATURE_NAMES.index("mean_logp")
    weights = [0.0] * len(FEATURE_NAMES)
    weights[elsewhere], weights[mean_logp] = 4.0, 1.0
    check = Calibrator(tuple(weights), -2.0)
    for above, agreed in (("    return value + 1\n", True), ("    pass\n", False)):
        prefix = f"def f(value):\n{above}\n\ndef g(value):\n    return val"
        ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(SUFFIX), TOKENIZER.prefix_id, *TOKENIZER.encode(prefix)]
        script = TOKENIZER.encode(TOKENIZER.decode(ids[-1:]) + "ue + 1\n")
        completer = _completer(Scripted(tokenizer_free_network, script), check, copies=0.3)
        best = completer.complete(CompletionRequest(prefix, SUFFIX))[0]
        assert best.text == "ue + 1" and best.copied == KIND
        assert best.features[elsewhere] == float(agreed) and best.features[mean_logp] > -0.2
        assert best.confidence == pytest.approx(check(best.features))
        # The line above copied says the same as the head: the head's line, more confident than either alone.
        assert (best.confidence > 0.5) == agreed


def test_the_completer_offers_it_once_calibrated(tokenizer_free_network: TorchServing) -> None:
    ids = _ids()
    script = TOKENIZER.encode(TOKENIZER.decode(ids[-1:]) + "ue + 1\n")
    # Sure of likely lines: about 0.95 for the scripted one.
    sure = Calibrator(tuple(1.0 if name == "mean_logp" else 0.0 for name in FEATURE_NAMES), 3.0)
    request = CompletionRequest(PREFIX, SUFFIX, candidates=3, copy_lines=False)
    answers = {c.text: c for c in _completer(Scripted(tokenizer_free_network, script), sure).complete(request)}
    written = answers["ue + 1"]
    assert len(written.features) == len(FEATURE_NAMES)
    assert written.copied == KIND and written.confidence == pytest.approx(sure(written.features))
    assert written.confidence > 0.9
    # Not asked for, or not calibrated (an older model folder): never offered.
    for check, wanted in ((sure, False), (None, True)):
        completer = _completer(Scripted(tokenizer_free_network, script), check)
        texts = [c.text for c in completer.complete(CompletionRequest(PREFIX, SUFFIX, candidates=3,
                                                                      copy_lines=False, left_to_right=wanted))]
        assert "ue + 1" not in texts


def test_the_same_line_written_with_other_tokens_keeps_its_own_probabilities() -> None:
    """The server's ranking measures a text's parse once, but each way of writing it is
    valued by its own token probabilities."""
    from model.fim.written_ranking import ByConfidence
    from model.languages.python_statement import CursorStatement

    check = Calibrator(tuple(1.0 if name == "mean_logp" else 0.0 for name in FEATURE_NAMES), 1.0)
    prefix, suffix = "def f(x):\n    return ", "\n"
    ranking = ByConfidence(check, CompletionRequest(prefix, suffix), None, CursorStatement(prefix, suffix), "", [])
    likely = Written("x + 1", [1, 2], "", [-0.1, -0.1])
    unlikely = Written("x + 1", [3, 4, 5], "", [-2.0, -2.0, -2.0])
    first, second = ranking.features(unlikely), ranking.features(likely)
    assert first[FEATURE_NAMES.index("mean_logp")] == -2.0 and second[FEATURE_NAMES.index("mean_logp")] == -0.1
    assert first[FEATURE_NAMES.index("parses")] == second[FEATURE_NAMES.index("parses")] == 1.0
    assert ranking.value(likely) > ranking.value(unlikely)

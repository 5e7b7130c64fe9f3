"""The cursor's line continued as the training code most often continues its last tokens."""

import json
import math
import shutil
from pathlib import Path

import pytest

import model.fim.calibrate_sources
from model.fim.calibrate_sources import calibrate_continuation
from model.fim.calibration import Calibrator
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.fim.line_continuation import CONTINUATION_FEATURES, Continuation
from model.fim.phrase_table import (
    CONFIG_KEY,
    KIND,
    PHRASE_FEATURES,
    PHRASES_FILE,
    PhraseTable,
    build_phrase_table,
    phrase_features,
    read_phrases,
    run_hashes,
)
from model.model_folder import SHIPPED_DIR, ModelLoadError
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model
from model.tokenizer import CodeTokenizer

GUARDED_IMPORT = "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
TESTS = "class TestParser(unittest.TestCase):\n    pass\n"
CORPUS = [GUARDED_IMPORT] * 8 + [TESTS] * 8 + ["x = compute(a)\n"] * 3


@pytest.fixture(scope="module")
def table() -> PhraseTable:
    return build_phrase_table(CORPUS, min_total=3)


def test_an_idiom_of_the_corpus_is_continued_to_the_end_of_the_line(table: PhraseTable) -> None:
    found = table.continuation("try:\n    import toml\nexcept ", "\n")
    assert found is not None and found.text == "ImportError:" and found.kind == KIND
    assert found.min_share == 1.0 and found.min_count >= 3


def test_a_word_typed_halfway_is_finished(table: PhraseTable) -> None:
    found = table.continuation("class TestLexer(unittest.Te", "\n")
    assert found is not None and found.text == "stCase):"
    # No run of the corpus goes on with "Zz", and no word starts with it.
    assert table.continuation("class TestLexer(unittest.Zz", "\n") is None


def test_the_text_after_the_cursor_must_end_the_continuation(table: PhraseTable) -> None:
    found = table.continuation("except ", ":\n")  # the colon is already there
    assert found is not None and found.text == "ImportError"
    assert table.continuation("except ", " OSError:\n") is None  # contradicts what follows


def test_tokens_never_seen_give_nothing(table: PhraseTable) -> None:
    assert table.continuation("y = never_seen[", "\n") is None
    assert table.continuation("no line break", "\n") is None


def test_a_longer_run_is_kept_only_where_it_changes_the_follower() -> None:
    # "= 1" is always followed by a line break; "x = 1" adds nothing, so it is not stored,
    # but "( 1" is followed by ")" and is.
    texts = ["x = 1\n", "y = 1\n", "f(1)\n"] * 4
    table = build_phrase_table(texts, min_total=3)
    ids = table.ids
    stored = {int(k) for k in table.keys.tolist()}

    def kept(*tokens: str) -> bool:
        return run_hashes([ids[t] for t in tokens])[-1] >> 32 in stored

    assert kept("1") and kept("(", "1") and not kept(" ", "1") and not kept("=", " ", "1")
    found = table.continuation("z = f(", "\n")
    assert found is not None and found.text == "1)"


def test_saved_and_loaded_it_answers_the_same(table: PhraseTable, tmp_path: Path) -> None:
    table.save(tmp_path / PHRASES_FILE)
    loaded = read_phrases(tmp_path)
    assert loaded is not None and len(loaded) == len(table) and loaded.vocabulary == table.vocabulary
    assert loaded.continuation("except ", "\n") == table.continuation("except ", "\n")
    assert read_phrases(tmp_path / "elsewhere") is None  # optional
    (tmp_path / PHRASES_FILE).write_bytes((tmp_path / PHRASES_FILE).read_bytes()[:100])
    with pytest.raises(ModelLoadError, match="phrase table"):
        read_phrases(tmp_path)
    # A follower outside the vocabulary (a table from another build) is refused at load.
    with pytest.raises(ValueError, match="don't fit together"):
        PhraseTable(table.vocabulary[:2], table.frequencies[:2], table.order_ends, table.keys, table.followers,
                    table.counts, table.totals)


def _completer(network: object, table: PhraseTable, check: Calibrator | None) -> FimCompleter:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    calibration: dict[str, object] = {}
    if check is not None:
        calibration[CONFIG_KEY] = check.to_dict(PHRASE_FEATURES)
    served = ServedModel(network, tokenizer, {"calibration": calibration}, table)  # type: ignore[arg-type]
    return FimCompleter(served)


def test_the_completer_offers_it_with_its_calibrated_confidence(
    tokenizer_free_network: object, table: PhraseTable
) -> None:
    sure = Calibrator((0.0,) * len(PHRASE_FEATURES), 2.0)  # says 0.88 whatever the features
    request = CompletionRequest("\nexcept ", "\n", candidates=3)
    answers = {c.text: c for c in _completer(tokenizer_free_network, table, sure).complete(request)}
    assert answers["ImportError:"].copied == KIND
    assert answers["ImportError:"].confidence == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert answers["ImportError:"].features[-2:] == [0.0, 0.0]  # no bracket open, no file continuation
    # Not calibrated (a folder whose calibration predates the table): never offered.
    plain = _completer(tokenizer_free_network, table, None).complete(request)
    assert all(c.copied != KIND for c in plain)


def test_calibration_fits_it_on_held_out_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: PhraseTable
) -> None:
    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    table.save(folder / PHRASES_FILE)
    # Nothing in the file to continue "except " from: the corpus's continuation is offered.
    cases = [("\nexcept ", "ImportError:" if i % 2 else "OSError:", "\n", None) for i in range(40)]
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases)
    report = calibrate_continuation(folder, [])
    assert "corpus phrases: offered on 40 of" in report
    assert "50.0% right; fitted on 20, measured on 20" in report
    stored = json.loads((folder / "config.json").read_text())["calibration"][CONFIG_KEY]
    assert stored["features"] == list(PHRASE_FEATURES)
    assert FimCompleter(load_served_model(folder)).patterns.phrase_check is not None
    (folder / PHRASES_FILE).unlink()
    assert "has no phrase table" in calibrate_continuation(folder, [])


def test_its_own_features_read_the_brackets_left_open_and_the_file_s_continuation() -> None:
    base = [0.5] * len(CONTINUATION_FEATURES)
    assert phrase_features(base, "assertEqual(", "x\n        self.", None)[-2:] == [1.0, 0.0]
    assert phrase_features(base, "1, 2)", "x\nf(g(0), ", "1, 2)")[-2:] == [0.0, 1.0]
    assert phrase_features(base, "]", "x\nvalues = [1, (2", "]")[-2:] == [1.0, 1.0]  # "(" still open
    assert len(phrase_features(base, "", "", None)) == len(PHRASE_FEATURES)
    assert Continuation("a", 1, 1.0, 1).kind != KIND  # the file's continuation is another kind


def test_an_invoked_request_shows_the_file_s_and_the_corpus_s_continuations(
    tokenizer_free_network: object, table: PhraseTable
) -> None:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    file_check = Calibrator((0.0,) * len(CONTINUATION_FEATURES), 1.0)  # 0.73
    phrase_check = Calibrator((0.0,) * len(PHRASE_FEATURES), 2.0)  # 0.88
    calibration = {"fim_continuation": file_check.to_dict(CONTINUATION_FEATURES),
                   CONFIG_KEY: phrase_check.to_dict(PHRASE_FEATURES)}
    served = ServedModel(tokenizer_free_network, tokenizer, {"calibration": calibration}, table)  # type: ignore[arg-type]
    completer = FimCompleter(served)
    # The file continues "except " with "OSError:", the corpus with "ImportError:".
    prefix = "try:\n    pass\nexcept OSError:\n    pass\ntry:\n    pass\nexcept "
    answers = completer.complete(CompletionRequest(prefix, "\n", candidates=3))
    kinds = {c.text: c.copied for c in answers}
    assert kinds.get("ImportError:") == KIND and kinds.get("OSError:") == "continuation"
    assert answers[0].text == "ImportError:"  # the more confident first
    assert completer.complete(CompletionRequest(prefix, "\n"))[0].text == "ImportError:"

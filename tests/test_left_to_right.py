"""The line written by the next-token head: where it ends, token healing, the beam search
and the bound that prunes it. How its lines are ranked and offered: ``test_written_ranking.py``."""

import math

import numpy as np
import pytest

from model.fim.calibration import Calibrator
from model.fim.left_to_right import (
    MAX_TOKENS,
    best_reachable,
    line_end,
    write_lines,
)
from model.fim.token_healing import consistent_with
from model.model_folder import SHIPPED_DIR
from model.runtime.canvas_room import Room
from model.runtime.torch_serving import TorchServing
from model.tokenizer import CodeTokenizer

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")


def test_a_line_ends_where_the_cursor_s_line_goes_on() -> None:
    # At the end of a line: the suffix holds the newline.
    assert line_end("    return ", "\n    pass\n", "x + 1\nmore") == "x + 1"
    # Inside a line: the rest the suffix already holds is not written twice; a line that
    # does not end like it can't be placed.
    assert line_end("print(", ")\n", "value)\n") == "value"
    assert line_end("print(", ")\n", "value]\n") is None
    # At a line's start with code after it: a whole line, newline included (HumanEval).
    assert line_end("def f(x):\n    ", "return x\n", "y = x\n") == "y = x\n"
    assert line_end("def f(x):\n", "    return x\n", "    y = x\n") == "    y = x\n"


def test_the_tokens_a_healed_cut_allows_are_those_a_scan_of_the_vocabulary_finds() -> None:
    def scanned(data: bytes) -> np.ndarray:
        return np.array([bool(t) and (t.startswith(data) or data.startswith(t)) for t in TOKENIZER.token_bytes])

    rng = np.random.default_rng(0)
    tokens = [t for t in TOKENIZER.token_bytes if t]
    cuts = [b" ", b"\n", b"        ", b"\xff", b"\xff\xff", b"\xe2\x9c", "é".encode()[:1], b"pyt", b"\x00"]
    for index in rng.choice(len(tokens), 60, replace=False):
        token = tokens[index]
        cuts += [token[: int(rng.integers(1, len(token) + 1))], token + bytes([int(rng.integers(256))])]
    for cut in cuts:
        allowed = consistent_with(TOKENIZER, cut)
        assert (allowed == scanned(cut)).all(), cut
    assert consistent_with(TOKENIZER, b" ").sum() > 100  # most words start with a space


def test_the_best_reachable_confidence_is_the_best_over_every_length_a_line_may_reach() -> None:
    check = Calibrator((0.8, -0.3, 1.2, 0.5, 0.7), -0.4)
    rng = np.random.default_rng(1)
    for _ in range(200):
        log_probs = list(np.log(rng.random(int(rng.integers(1, MAX_TOKENS + 1)))))
        agreeable, elsewhere = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        each = [check([sum(log_probs) / length, math.log(length), float(agreeable), 1.0, float(elsewhere)])
                for length in range(len(log_probs), MAX_TOKENS + 1)]
        assert best_reachable(check, log_probs, agreeable, elsewhere) == pytest.approx(max(each), abs=1e-12)


class Scripted(TorchServing):
    """A tiny random network whose next-token head prefers the tokens of ``script`` in turn,
    by the row's position in the line, and first of all a newline the healing must refuse."""

    def __init__(self, network: TorchServing, script: list[int]) -> None:
        super().__init__(network.editor)
        self.script, self.calls, self.first = script, 0, 0

    def next_tokens(self, ids: np.ndarray, room: Room, at: int, positions: np.ndarray, sees: np.ndarray) -> np.ndarray:
        if self.calls == 0:
            self.first = int(positions[0])
        self.calls += 1
        rows = np.full((len(ids), TOKENIZER.vocab_size), 1e-6, dtype=np.float32)
        for row, position in enumerate(positions):  # every beam alike
            step = int(position) - self.first
            if step == 0:
                rows[row, TOKENIZER.encode("\n")[0]] = 0.9
            rows[row, self.script[min(step, len(self.script) - 1)]] = 0.09
        normalised: np.ndarray = rows / rows.sum(axis=1, keepdims=True)
        return normalised


PREFIX, SUFFIX = "def f(value):\n    return val", "\n"


SCRIPT = TOKENIZER.encode("    return value + 1\n")


def _ids() -> list[int]:
    return [TOKENIZER.suffix_id, *TOKENIZER.encode(SUFFIX), TOKENIZER.prefix_id, *TOKENIZER.encode(PREFIX)]


def test_the_cut_token_is_written_again_then_the_line_to_its_end(tokenizer_free_network: TorchServing) -> None:
    ids = _ids()
    healed = TOKENIZER.decode(ids[-1:])
    assert healed.strip() and "value".startswith(healed.strip())  # the cursor cut a word
    script = TOKENIZER.encode(healed + "ue + 1\n")
    network = Scripted(tokenizer_free_network, script)
    cache = network.encode_context(np.array(ids))
    lines = write_lines(network, TOKENIZER, ids, cache, PREFIX, SUFFIX)
    assert lines
    written = lines[0]
    # The newline the head preferred first was refused: it does not write the cut token again.
    assert written.text == "ue + 1" and written.healed == healed.encode()
    assert written.tokens == script and len(written.log_probs) == len(script)
    assert written.log_probs[0] == pytest.approx(0.0, abs=1e-3)  # the only token allowed there
    # The context's own cache is left as it was.
    again = network.encode_context(np.array(ids))
    for before, after in zip(cache, again, strict=True):
        np.testing.assert_allclose(np.stack(before), np.stack(after), atol=1e-6)


def test_each_token_s_bytes_decode_as_the_tokenizer_decodes_it() -> None:
    specials = TOKENIZER.special_ids
    assert all(TOKENIZER.token_bytes[i] == b"" for i in specials)
    assert all(TOKENIZER.token_bytes[i].decode("utf-8", errors="replace") == TOKENIZER.decode([i])
               for i in range(TOKENIZER.vocab_size) if i not in specials)
    text = 'names = ["Zoë", "日本語", "✓ 🎉"]\n'
    assert b"".join(TOKENIZER.token_bytes[i] for i in TOKENIZER.encode(text)) == text.encode()


def test_a_cut_inside_a_character_is_healed_byte_for_byte(tokenizer_free_network: TorchServing) -> None:
    # "т" is two bytes, two tokens: the cursor after it cuts a token that is half of it.
    prefix, suffix = 'label = "Привет', "\n"
    ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(suffix), TOKENIZER.prefix_id, *TOKENIZER.encode(prefix)]
    cut = TOKENIZER.token_bytes[ids[-1]]
    assert TOKENIZER.decode(ids[-1:]) == "\ufffd" and "т".encode().endswith(cut)
    byte_of = {data: i for i, data in enumerate(TOKENIZER.token_bytes) if len(data) == 1}
    network = Scripted(tokenizer_free_network, [byte_of[cut], *TOKENIZER.encode('"\n')])
    lines = write_lines(network, TOKENIZER, ids, network.encode_context(np.array(ids)), prefix, suffix, beams=1)
    assert [line.text for line in lines] == ['"'] and lines[0].healed == cut
    # A line that writes half of another character is never finished.
    broken = Scripted(tokenizer_free_network, [byte_of[cut], byte_of["ж".encode()[:1]], *TOKENIZER.encode('"\n')])
    assert write_lines(broken, TOKENIZER, ids, broken.encode_context(np.array(ids)), prefix, suffix, beams=1) == []


def test_no_line_within_the_cap_is_no_candidate(tokenizer_free_network: TorchServing) -> None:
    ids = _ids()
    network = Scripted(tokenizer_free_network, [*TOKENIZER.encode(TOKENIZER.decode(ids[-1:])),
                                                *TOKENIZER.encode(" x")])
    assert write_lines(network, TOKENIZER, ids, network.encode_context(np.array(ids)), PREFIX, SUFFIX, beams=1) == []


class Forking(TorchServing):
    """A tiny random network whose head, after ``fork``, likes ``bad`` (which ends the line
    in a way the suffix refuses) more than ``good``; and after ``good``, a newline."""

    def __init__(self, network: TorchServing, fork: str, bad: str, good: str) -> None:
        super().__init__(network.editor)
        self.fork, self.bad, self.good = (TOKENIZER.encode(t) for t in (fork, bad, good))
        self.newline = TOKENIZER.encode("\n")[0]
        self.rows: list[int] = []  # the token each row of the last pass was

    def next_tokens(self, ids: np.ndarray, room: Room, at: int, positions: np.ndarray, sees: np.ndarray) -> np.ndarray:
        rows = np.full((len(ids), TOKENIZER.vocab_size), 1e-6, dtype=np.float32)
        for row, token in enumerate(ids):
            if int(token) in self.fork:
                rows[row, self.bad[0]], rows[row, self.good[0]] = 0.6, 0.3
            elif int(token) in (*self.bad, *self.good):
                rows[row, self.newline] = 0.9
            else:  # the context's last token: the fork's first
                rows[row, self.fork[0]] = 0.9
        normalised: np.ndarray = rows / rows.sum(-1, keepdims=True)
        return normalised


def test_a_beam_finds_the_line_that_fits_where_greedy_writing_does_not(tokenizer_free_network: TorchServing) -> None:
    prefix, suffix = "def f(value):\n    return ", ")\n"
    ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(suffix), TOKENIZER.prefix_id, *TOKENIZER.encode(prefix)]
    network = Forking(tokenizer_free_network, " max", "]", ")")
    assert len(network.fork) == len(network.good) == len(network.bad) == 1  # one token each
    cache = network.encode_context(np.array(ids))
    # Greedy: " max" then "]", and the line "max]" does not end like the suffix's ")".
    assert write_lines(network, TOKENIZER, ids, cache, prefix, suffix, beams=1) == []
    lines = write_lines(network, TOKENIZER, ids, cache, prefix, suffix, beams=2)
    assert [line.text for line in lines] == ["max"]
    written = lines[0]
    assert written.healed == b" "
    assert written.log_probs[0] == pytest.approx(0.0, abs=0.01)  # healed: only tokens starting with " "
    assert written.log_probs[1:] == pytest.approx([math.log(0.3 / (0.9 + 8190e-6)), math.log(0.9 / (0.9 + 8191e-6))],
                                                  rel=1e-3)


def test_the_demo_shows_the_canvas_denoised_whatever_wrote_the_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    from lsp_server.cli import main

    assert main(["demo"]) == 0
    blocks = capsys.readouterr().out.split("(expected: ")[1:]
    assert len(blocks) == 3
    for block in blocks:
        assert "suggestion │" in block
        # Whatever wrote the suggestion, the canvas's own denoising follows, pass by pass.
        canvas = block.split("the canvas alone, denoised in parallel", 1)[1]
        assert "step  1 │" in canvas and "canvas │" in canvas

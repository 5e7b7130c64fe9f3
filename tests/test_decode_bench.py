"""``redraft bench decode --dev``: every decoder on the same held-out spans, one table."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lsp_server.cli import MAX_CANVAS, main
from lsp_server.options import parse_options
from model.bench.decode import (
    AS_YOU_TYPE,
    AS_YOU_TYPE_MAX_STEPS,
    DECODERS,
    NEXT_TOKEN_HEAD,
    dev_cases,
    over_lengths_name,
)
from model.training.train_config import TrainConfig

ALL_AT_ONCE = "τ=0, length first (all in one pass)"


def write_corpus(path: Path) -> None:
    source = textwrap.dedent('''\
        import os


        def read_lines(path):
            with open(path) as handle:
                return [line.rstrip() for line in handle]


        def count_words(text):
            total = 0
            for line in text.splitlines():
                total += len(line.split())
            return total
        ''')
    path.write_text(json.dumps({"package": "tiny", "path": "tiny/words.py", "text": source}) + "\n")


def test_dev_cases_are_cut_from_the_corpus_text(tmp_path: Path) -> None:
    corpus = tmp_path / "dev.jsonl"
    write_corpus(corpus)
    text = json.loads(corpus.read_text())["text"]
    cases = dev_cases(corpus, 5)
    assert len(cases) == 5
    assert all(case.prefix + case.middle + case.suffix == text and case.middle.strip() for case in cases)


def test_empty_files_in_the_corpus_are_skipped_when_cutting_cases(tmp_path: Path) -> None:
    corpus = tmp_path / "dev.jsonl"
    write_corpus(corpus)
    empty = {"package": "tiny", "path": "tiny/__init__.py", "text": ""}
    corpus.write_text(json.dumps(empty) + "\n" + corpus.read_text() + json.dumps({**empty, "text": "\n\n"}) + "\n")
    cases = dev_cases(corpus, 20)
    assert len(cases) == 20 and all(case.middle.strip() for case in cases)


def test_bench_decode_on_held_out_spans_prints_a_row_per_decoder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "dev.jsonl"
    write_corpus(corpus)
    assert main(["bench", "decode", "--dev", str(corpus), "--limit", "2", "--canvas", "16"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row[:42].strip() for row in rows] == [decoder.name for decoder in DECODERS] + [over_lengths_name(16),
                                                                                           NEXT_TOKEN_HEAD]
    left_to_right, all_at_once = rows[-3].split(), rows[[d.name for d in DECODERS].index(ALL_AT_ONCE)].split()
    assert left_to_right[-7] == "2" and left_to_right[-5] == "1.00"  # cases, tokens per pass
    head = rows[-1].split()
    # At most one token of the line per pass, by construction (a pass writes a token of every beam).
    assert head[-7] == "2" and 0.0 <= float(head[-5]) <= 1.0
    # Everything committed in the first pass: as many tokens per pass as per answer, and
    # the whole 16-position canvas in that one pass.
    assert all_at_once[-5] == all_at_once[-2] and all_at_once[-1] == "16.00"
    # One pass over lengths: as many tokens per pass as per answer, at most 15 + 1 in a
    # canvas of 16, the whole canvas decided in that pass.
    over_lengths = rows[-2].split()
    assert over_lengths[-7] == "2" and over_lengths[-5] == over_lengths[-2] and 2 <= float(over_lengths[-5]) <= 16
    assert over_lengths[-1] == "16.00"
    capped = rows[[d.name for d in DECODERS].index(AS_YOU_TYPE)].split()
    assert float(capped[-1]) >= 16 / AS_YOU_TYPE_MAX_STEPS  # at most that many passes per case


def test_the_as_you_type_row_uses_the_servers_default_cap() -> None:
    from lsp_server.options import ServerOptions

    # model/ knows nothing of the server, so the bench keeps its own copy of the default.
    assert ServerOptions().automatic_max_steps == AS_YOU_TYPE_MAX_STEPS
    # Invoked requests too: their confidences come from the same calibrators.
    assert ServerOptions().max_steps == AS_YOU_TYPE_MAX_STEPS


@pytest.mark.parametrize("command", [["bench", "decode", "--dev", "unused.jsonl"], ["complete", "unused.py:1:1"],
                                     ["demo"]])
@pytest.mark.parametrize("canvas", ["1", "0", "many", "65"])
def test_a_canvas_too_small_to_hold_a_token_and_its_end_or_larger_than_trained_is_refused_clearly(
    command: list[str], canvas: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `complete --canvas 1` used to print an empty suggestion an editor "would show";
    # `--canvas 5000` decoded for seconds to write nothing.
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--canvas", canvas])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--canvas" in err
    assert ("at least 2 positions" in err or "expected a number" in err or f"at most {MAX_CANVAS} positions" in err)
    assert "Traceback" not in err


def test_the_largest_canvas_allowed_is_the_largest_trained_on_and_served() -> None:
    assert max(TrainConfig(Path("corpus"), Path("run")).canvas_sizes) == MAX_CANVAS
    assert parse_options({"canvasTokens": MAX_CANVAS})[1] == []
    assert parse_options({"canvasTokens": MAX_CANVAS + 1})[1] != []

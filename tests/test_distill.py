"""One-pass distillation: a teacher's stepwise canvases, trained masked whole."""

import json
import random
import subprocess
import sys
import sysconfig
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from model.architecture import NetworkConfig
from model.data.corpus import SourceFile
from model.formats import ContextBudget
from model.model_folder import SHIPPED_DIR
from model.network import DiffusionEditor
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model
from model.training.batches import TrainingSources, batch_stream
from model.training.distill import (
    TeacherFileError,
    TeacherLength,
    read_teacher_examples,
    teacher_canvas,
    write_teacher_examples,
)
from model.training.objective import losses
from model.training.train import teacher_draws_per_example, train
from model.training.train_config import TrainConfig

STDLIB = Path(sysconfig.get_paths()["stdlib"])
FILES = [SourceFile(name[:-3], name, (STDLIB / name).read_text()) for name in ("glob.py", "fnmatch.py", "shlex.py")]


@pytest.fixture(scope="module")
def served() -> ServedModel:
    return load_served_model(SHIPPED_DIR)


@pytest.fixture(scope="module")
def teacher_file(served: ServedModel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("teacher") / "teacher.jsonl"
    summary = write_teacher_examples(served, FILES, 12, out, seed=3, teacher_name="shipped")
    assert summary["examples"] == 12 and 0.0 <= summary["agree_with_reference"] <= 1.0
    return out


def test_each_example_holds_the_teacher_s_stepwise_canvas_at_the_reference_s_length(
    served: ServedModel, teacher_file: Path
) -> None:
    tokenizer = served.tokenizer
    header, *records = [json.loads(line) for line in teacher_file.read_text().splitlines()]
    assert header["teacher"] == "shipped" and header["threshold"] == 0.9 and header["length"] == "reference"
    assert len(records) == 12
    for record in records:
        targets = record["targets"]
        assert len(targets) in (32, 64)
        # The middle, one end-of-middle where the reference's is, then padding only; decoded
        # again from the same context at that length, the teacher writes the same canvas.
        end = targets.index(tokenizer.end_of_middle_id)
        assert end == record["reference_length"]
        assert set(targets[end + 1:]) <= {tokenizer.pad_id}
        assert tokenizer.mask_id not in targets[:end]
        assert targets == teacher_canvas(served, record["context"], len(targets), end)
    by_size = read_teacher_examples(teacher_file, tokenizer, ContextBudget.of(served.metadata))
    assert sum(len(examples) for examples in by_size.values()) == 12
    assert all(len(example.targets) == size for size, examples in by_size.items() for example in examples)


def test_a_teacher_left_to_choose_its_length_ends_where_it_decides(served: ServedModel, tmp_path: Path) -> None:
    out = tmp_path / "own.jsonl"
    write_teacher_examples(served, FILES, 6, out, seed=4, length=TeacherLength.OWN)
    header, *records = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["length"] == "own" and len(records) == 6
    for record in records:
        assert record["targets"] == teacher_canvas(served, record["context"], len(record["targets"]))
    with pytest.raises(ValueError, match="does not fit"):
        teacher_canvas(served, records[0]["context"], 32, 32)


def test_a_file_for_another_tokenizer_or_budget_is_refused_with_a_clear_message(
    served: ServedModel, teacher_file: Path, tmp_path: Path
) -> None:
    lines = teacher_file.read_text().splitlines()
    header = json.loads(lines[0])
    budget = ContextBudget.of(served.metadata)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text("\n".join([json.dumps({**header, "tokenizer": "0" * 16}), *lines[1:]]) + "\n")
    with pytest.raises(TeacherFileError, match="another tokenizer"):
        read_teacher_examples(foreign, served.tokenizer, budget)
    with pytest.raises(TeacherFileError, match="context budget"):
        read_teacher_examples(teacher_file, served.tokenizer, ContextBudget(budget.total + 64, budget.max_suffix))
    with pytest.raises(TeacherFileError, match="redraft distill"):
        read_teacher_examples(tmp_path / "missing.jsonl", served.tokenizer, budget)
    not_ours = tmp_path / "not_ours.jsonl"
    not_ours.write_text('{"format": "something else"}\n')
    with pytest.raises(TeacherFileError, match="not a teacher-examples file"):
        read_teacher_examples(not_ours, served.tokenizer, budget)


def test_the_distilled_share_of_a_batch_comes_from_the_teacher_and_trains_masked_whole(
    served: ServedModel, teacher_file: Path
) -> None:
    tokenizer = served.tokenizer
    by_size = read_teacher_examples(teacher_file, tokenizer, ContextBudget.of(served.metadata))
    size = max(by_size, key=lambda s: len(by_size[s]))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=8, canvas_sizes=(size,),
                         context_tokens=ContextBudget.of(served.metadata).total, distill_fraction=1.0)
    sources = TrainingSources(FILES, [], by_size)
    batch = next(batch_stream(sources, tokenizer, config, random.Random(0), 0.0))
    teacher_targets = {tuple(example.targets) for example in by_size[size]}
    assert batch.full_mask is not None and bool(batch.full_mask.all())
    assert all(tuple(row) in teacher_targets for row in batch.targets.tolist())
    # Without a share, nothing is drawn from the teacher and no row is forced whole.
    plain = next(batch_stream(sources, tokenizer, replace(config, distill_fraction=0.0), random.Random(0), 0.0))
    assert plain.full_mask is None
    # The forced rows' canvas loss is the loss masked whole (t = 1 on every row).
    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(vocab_size=tokenizer.vocab_size, n_layer=1, n_head=2, d_model=32,
                                            mlp_hidden=64))
    forced = losses(network, network, batch, tokenizer, config, torch.Generator().manual_seed(5))
    unforced = replace(batch, full_mask=None)
    whole = losses(network, network, unforced, tokenizer, replace(config, full_mask_fraction=1.0),
                   torch.Generator().manual_seed(5))
    drawn = losses(network, network, unforced, tokenizer, config, torch.Generator().manual_seed(5))
    assert torch.allclose(forced.diffusion, whole.diffusion)
    assert not torch.allclose(forced.diffusion, drawn.diffusion)


def test_the_run_foresees_how_often_it_draws_each_teacher_example(served: ServedModel, teacher_file: Path) -> None:
    tokenizer = served.tokenizer
    by_size = read_teacher_examples(teacher_file, tokenizer, ContextBudget.of(served.metadata))
    size = max(by_size, key=lambda s: len(by_size[s]))
    config = TrainConfig(corpus_dir=Path("."), run_dir=Path("."), batch_size=8, canvas_sizes=(32, 64),
                         context_tokens=ContextBudget.of(served.metadata).total, distill_fraction=0.5)
    steps = 60
    foreseen = teacher_draws_per_example(config, {size: len(by_size[size])}, steps)
    # Half the batches have the teacher's canvas size, half of their rows are drawn from it.
    assert foreseen == pytest.approx(steps * 8 / 2 * 0.5 / len(by_size[size]))
    stream = batch_stream(TrainingSources(FILES, [], {size: by_size[size]}), tokenizer, config, random.Random(1), 0.0)
    drawn = sum(int(batch.full_mask.sum()) for batch in (next(stream) for _ in range(steps))
                if batch.full_mask is not None)
    assert drawn / len(by_size[size]) == pytest.approx(foreseen, rel=0.35)
    # Next-edit batches draw none; a file without the run's canvas sizes is never drawn.
    assert teacher_draws_per_example(replace(config, next_edit_fraction=0.5), {size: 12}, steps) == pytest.approx(
        teacher_draws_per_example(config, {size: 12}, steps) / 2)
    assert teacher_draws_per_example(config, {48: 12}, steps) == 0.0


def test_a_run_trains_on_the_teacher_file_and_refuses_one_that_does_not_fit(
    served: ServedModel, teacher_file: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for split, files in (("train.jsonl", FILES[1:]), ("dev.jsonl", FILES[:1])):
        (corpus / split).write_text("".join(json.dumps({"package": f.package, "path": f.path, "text": f.text}) + "\n"
                                            for f in files))
    tokenizer = served.tokenizer
    config = TrainConfig(corpus_dir=corpus, run_dir=tmp_path / "run", steps=2, batch_size=4, eval_every=2,
                         eval_examples=4, context_tokens=ContextBudget.of(served.metadata).total,
                         distill_file=teacher_file, distill_fraction=0.5,
                         network=NetworkConfig(vocab_size=tokenizer.vocab_size, n_layer=1, n_head=2, d_model=32,
                                               mlp_hidden=64))
    assert train(config, tokenizer)["dev_diffusion"] > 0
    with pytest.raises(ValueError, match="canvases of"):
        train(replace(config, run_dir=tmp_path / "other", canvas_sizes=(48,)), tokenizer)
    with pytest.raises(ValueError, match="distill_fraction"):
        train(replace(config, run_dir=tmp_path / "third", distill_fraction=1.5), tokenizer)


def test_the_distill_command_says_what_is_missing_instead_of_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "lsp_server", "distill", "--work-dir", str(tmp_path),
                           "--out", str(tmp_path / "t.jsonl"), "--examples", "5"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert "no corpus in" in done.stderr and "Traceback" not in done.stderr

"""A few-step training run, single process and under torchrun (DDP, gloo): real corpus
(standard library only), real tokenizer, a tiny network. Checks it trains, checkpoints,
resumes and exports a model the loader accepts."""

import json
import subprocess
import sys
from pathlib import Path

from model.checkpoint import load_model

TINY = ["--no-download", "--max-files", "40", "--vocab", "400", "--layers", "1", "--width", "32",
        "--heads", "2", "--context-tokens", "64", "--batch-size", "4"]


def redraft(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


def test_a_few_training_steps_checkpoint_resume_and_export(tmp_path: Path) -> None:
    work, export = tmp_path / "work", tmp_path / "exported"
    first = redraft("train", "--work-dir", str(work), "--steps", "3", *TINY, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    state = json.loads((work / "runs" / "main" / "state.json").read_text())
    assert state["step"] == 3
    resumed = redraft("train", "--work-dir", str(work), "--steps", "5", "--export", str(export), *TINY, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((work / "runs" / "main" / "state.json").read_text())["step"] == 5
    loaded = load_model(export)
    assert loaded.network.config.d_model == 32 and loaded.tokenizer.vocab_size == 400
    history = [json.loads(line) for line in (work / "runs" / "main" / "history.jsonl").read_text().splitlines()]
    assert all(entry["dev_diffusion"] > 0 for entry in history)
    assert (work / "runs" / "main" / "loss_curve.png").read_bytes().startswith(b"\x89PNG")


def test_the_progress_line_says_where_the_run_is_and_when_it_ends(tmp_path: Path) -> None:
    from model.training.train import progress_line
    from model.training.train_config import TrainConfig

    config = TrainConfig(corpus_dir=tmp_path, run_dir=tmp_path, steps=1000, time_limit_seconds=600)
    line = progress_line(250, config, 2_000_000, 2.5, 4.4, 3000.0, 1.0, 100.0)
    assert line.startswith("step 250/1000 (25%)  tokens 2.00M") and "3000 tok/s" in line
    assert line.endswith("ends in 8 min")  # the time limit comes before the 750 steps left


def test_the_same_training_script_runs_under_torchrun_with_two_processes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    prepared = redraft("train", "--work-dir", str(work), "--steps", "1", "--run-name", "prep", *TINY, cwd=tmp_path)
    assert prepared.returncode == 0, prepared.stderr
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29533",
         "-m", "lsp_server", "train", "--work-dir", str(work), "--steps", "2", "--run-name", "ddp", *TINY],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((work / "runs" / "ddp" / "state.json").read_text())["step"] == 2


def test_a_warm_start_keeps_the_tokenizer_of_the_model_it_starts_from(tmp_path: Path) -> None:
    first, export = tmp_path / "first", tmp_path / "exported"
    done = redraft("train", "--work-dir", str(first), "--steps", "1", "--export", str(export), *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    second = tmp_path / "second"  # a new machine: no tokenizer in the work dir
    # A different --vocab would train a different tokenizer: the warm start must ignore it.
    warm = redraft("train", "--work-dir", str(second), "--steps", "1", "--init-from", str(export), *TINY,
                   "--vocab", "450", cwd=tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert (second / "runs" / "main" / "tokenizer.json").read_text() == (export / "tokenizer.json").read_text()


def test_warmup_stable_decay_holds_the_peak_then_cools_down_to_the_floor(tmp_path: Path) -> None:
    from model.training.train import cooldown_start, learning_rate
    from model.training.train_config import TrainConfig

    config = TrainConfig(corpus_dir=tmp_path, run_dir=tmp_path, steps=1000, lr=1e-3, warmup_steps=100,
                         decay_fraction=0.2)
    assert cooldown_start(config) == 800
    assert learning_rate(0, config) == 1e-3 / 100
    assert learning_rate(100, config) == learning_rate(799, config) == 1e-3
    cooling = [learning_rate(step, config) for step in range(800, 1001, 50)]
    assert cooling == sorted(cooling, reverse=True) and cooling[0] == 1e-3
    assert abs(learning_rate(1000, config) - 1e-4) < 1e-12  # min_lr_ratio of the peak
    cosine = TrainConfig(corpus_dir=tmp_path, run_dir=tmp_path, steps=1000, lr=1e-3, warmup_steps=100)
    assert cooldown_start(cosine) == 1000 and learning_rate(500, cosine) < 1e-3


def test_a_wsd_run_keeps_its_weights_before_the_cooldown_and_a_new_run_continues_from_them(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    done = redraft("train", "--work-dir", str(work), "--steps", "4", "--decay-fraction", "0.5", *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stable = work / "runs" / "main" / "stable"
    assert json.loads((stable / "state.json").read_text())["step"] == 2
    assert (stable / "optimizer.pt").is_file() and load_model(stable).network.config.d_model == 32
    # The cooldown starts at step 2, so the last progress line shows the peak — unless a
    # warmup (200 steps by default) were still climbing.
    resumed = redraft("-v", "train", "--work-dir", str(work), "--run-name", "next", "--steps", "2",
                      "--decay-fraction", "0.01", "--init-from", str(stable), "--context-loss-weight", "1",
                      "--written-loss-weight", "0.25", *TINY, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "(next-token loss weight 1 on the context, 0.25 on what the head writes)" in resumed.stderr
    assert "continuing the optimizer state" in resumed.stderr
    assert "step 2/2 (100%)" in resumed.stderr and "lr 1.50e-03" in resumed.stderr


def test_npm_tarballs_already_fetched_join_the_corpus_and_get_a_dev_loss_of_their_own(tmp_path: Path) -> None:
    from model.data.npm_corpus import NPM_DEV_PACKAGES, NPM_TARBALL_FOLDER, pinned_npm_packages, read_npm_index
    from model.data.npm_download import parse_npm_requirement
    from tests.test_npm_heldout import make_tarball

    work = tmp_path / "work"
    pins = [parse_npm_requirement(text) for text in pinned_npm_packages()]
    chosen = [next(p for p in pins if p.name not in NPM_DEV_PACKAGES),
              next(p for p in pins if p.name in NPM_DEV_PACKAGES)]
    for n, pin in enumerate(chosen):
        module = "".join(f"export function step{i}(value) {{\n  return value * {i + n} + {i};\n}}\n\n"
                         for i in range(40))
        make_tarball(work / NPM_TARBALL_FOLDER / pin.tarball_name,
                     {"package.json": json.dumps({"name": pin.name, "version": pin.version, "license": "MIT"}),
                      "src/steps.js": module})
    done = redraft("train", "--work-dir", str(work), "--steps", "2", "--npm-share", "0.5", *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {(p.package, p.split, p.files) for p in read_npm_index(work / "corpus")} == \
        {(chosen[0].name, "train", 1), (chosen[1].name, "dev", 1)}
    history = [json.loads(line) for line in (work / "runs" / "main" / "history.jsonl").read_text().splitlines()]
    assert all(entry["dev_npm_diffusion"] > 0 and entry["dev_diffusion"] > 0 for entry in history)

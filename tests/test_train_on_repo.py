"""``redraft train --repo``: fine-tune on a repository's files and git history, export a
model the server loads, never write inside the repository."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from model.checkpoint import load_model
from model.data.repo_corpus import build_repo_corpus, python_paths
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.runtime.serving import load_served_model

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def make_repo(repo: Path) -> None:
    (repo / "pkg").mkdir(parents=True)
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "vendored.py").write_text("x = 1\n")
    (repo / "generated").mkdir()
    (repo / "generated" / "skip.py").write_text("y = 2\n")
    (repo / ".gitignore").write_text(".venv/\ngenerated/\n")
    git(repo, "init", "-q")
    versions = [
        "def area(width, height):\n    return width * height\n",
        "def area(width, height):\n    '''Rectangle area.'''\n    return width * height\n",
        "def area(w, h):\n    '''Rectangle area.'''\n    return w * h\n",
    ]
    for number, text in enumerate(versions):
        (repo / "pkg" / "shapes.py").write_text(text)
        (repo / "pkg" / f"util{number}.py").write_text(f"def helper{number}(value):\n    return value + {number}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"version {number}")


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def test_the_repository_corpus_respects_gitignore_and_reads_history(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    make_repo(repo)
    assert python_paths(repo) == ["pkg/shapes.py", "pkg/util0.py", "pkg/util1.py", "pkg/util2.py"]
    counts = build_repo_corpus(repo, tmp_path / "corpus")
    assert counts["train"] + counts["dev"] == 4 and counts["dev"] == 1
    pairs = [json.loads(line) for name in ("edits_train.jsonl", "edits_dev.jsonl")
             for line in (tmp_path / "corpus" / name).read_text().splitlines()]
    assert len(pairs) == 2 and {p["path"] for p in pairs} == {"pkg/shapes.py"}


def test_a_held_out_file_keeps_its_history_out_of_training(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    make_repo(repo)
    for seed in range(8):  # shapes.py, the file with a history, is held out under some seeds
        out = tmp_path / f"corpus{seed}"
        build_repo_corpus(repo, out, seed=seed)
        held_out = {json.loads(line)["path"] for line in (out / "dev.jsonl").read_text().splitlines()}
        trained = [json.loads(line)["path"] for line in (out / "edits_train.jsonl").read_text().splitlines()]
        kept = [json.loads(line)["path"] for line in (out / "edits_dev.jsonl").read_text().splitlines()]
        assert not held_out & set(trained)
        if "pkg/shapes.py" in held_out:
            assert kept == ["pkg/shapes.py", "pkg/shapes.py"]
            return
    raise AssertionError("no seed held out the file with a history")


def test_fine_tuning_exports_a_working_model_and_leaves_the_repository_alone(tmp_path: Path) -> None:
    repo, export = tmp_path / "project", tmp_path / "tuned"
    make_repo(repo)
    before = tree_digest(repo)
    done = subprocess.run([sys.executable, "-m", "lsp_server", "train", "--repo", str(repo), "--steps", "2",
                           "--batch-size", "2", "--export", str(export), "--work-dir", str(tmp_path / "work")],
                          cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    assert "held-out fim loss" in done.stdout.lower() or "diffusion loss" in done.stdout, done.stdout
    assert f"redraft --model {export} serve" in done.stdout
    # The int8 graph's smoothing is measured for the new weights (kept only if it helps).
    assert "int8 smoothing: scales from" in done.stdout, done.stdout
    assert (export / "int8_scales.safetensors").is_file() == ("none kept" not in done.stdout)
    assert tree_digest(repo) == before  # nothing written in the repository, .git included
    tuned = load_model(export)
    assert "next_edit" in tuned.metadata["calibration"]  # carried over from the starting model
    completer = FimCompleter(load_served_model(export))  # as the server runs it
    candidates = completer.complete(CompletionRequest("def f(x):\n    return x", "\n", max_steps=4))
    assert candidates and isinstance(candidates[0].text, str)


def test_bad_repositories_get_a_clear_message(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for target, message in ((tmp_path / "missing", "is not a directory"), (empty, "has no Python files")):
        done = subprocess.run([sys.executable, "-m", "lsp_server", "train", "--repo", str(target),
                               "--work-dir", str(tmp_path / "work")],
                              cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr
    inside = subprocess.run([sys.executable, "-m", "lsp_server", "train", "--repo", str(empty), "--export",
                             str(empty / "model")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            check=False)
    assert inside.returncode == 1 and "inside the repository" in inside.stderr

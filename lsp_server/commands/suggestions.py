"""``redraft complete`` and ``redraft demo``: the model's suggestion at a place in a file,
decoded as the server decodes it, with the denoising steps of the canvas."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from lsp_server.document_dialect import MODEL_DIALECT, Dialect
from lsp_server.options import ServerOptions

DEMO_SAMPLE = '''import os


def list_python_files(folder):
    """Return the paths of the Python files under folder."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                found.append(os.path.join(root, name))
    return found


class Counter:
    def __init__(self, start=0):
        self.value = start

    def increment(self, step=1):
        self.value += step
        return self.value

    def reset(self):
        self.value = 0
'''

# (text before the cursor, marker) pairs: the demo cuts the sample there.
DEMO_CURSORS = ("                found.append(", "        self.value = ", "    for root, dirs, files in ")


def _load_completer(model: Path | None) -> object:
    from model.fim.inference import FimCompleter
    from model.model_folder import SHIPPED_DIR
    from model.runtime.serving import load_served_model

    return FimCompleter(load_served_model(model or SHIPPED_DIR))


def _show_completion(
    completer: object, prefix: str, suffix: str, args: argparse.Namespace, related: object = None,
    dialect: Dialect = MODEL_DIALECT,
) -> None:
    """Print the top suggestion (its steps with ``--steps``) decoded as the server decodes
    it as you type, so that its confidence and whether an editor would show it are the
    server's. ``prefix`` and ``suffix`` are in the model's dialect, the suggestion is
    printed in the file's (``dialect``), as the server would send it."""
    from model.fim.completion_request import CompletionRequest
    from model.fim.fim_patterns import WORKSPACE_KINDS, RelatedLines
    from model.fim.inference import FimCompleter
    from model.fim.left_to_right import KIND as LEFT_TO_RIGHT
    from model.fim.line_continuation import KIND as CONTINUED
    from model.fim.phrase_table import KIND as PHRASE

    assert isinstance(completer, FimCompleter)
    assert related is None or isinstance(related, RelatedLines)
    request = CompletionRequest(prefix, suffix, canvas_size=args.canvas, threshold=args.threshold,
                                max_steps=ServerOptions().automatic_max_steps, keep_trace=args.steps,
                                related=related)
    started = time.perf_counter()
    candidates = completer.complete(request)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if not candidates:
        print(f"  suggestion │ none: every answer repeated a line next to the cursor or a definition "
              f"({elapsed_ms:.0f} ms)")
        return
    best = candidates[0]
    if args.steps:
        for step, state in enumerate(best.trace, 1):
            print(f"  step {step:2d} │ {state!r}")
    threshold = ServerOptions().confidence_threshold
    source = f"{best.tokens} tokens in {best.steps} {'step' if best.steps == 1 else 'steps'}"
    if best.copied == CONTINUED:
        source = "the line continued as these tokens continue elsewhere in the file (or the workspace)"
    elif best.copied == PHRASE:
        source = "the line continued as these tokens most often continue in the training code"
    elif best.copied == LEFT_TO_RIGHT:
        source = (f"written left to right by the network's next-token head, {best.tokens} tokens in {best.steps} "
                  f"passes of a beam search")
    elif best.copied:
        source = "copied from the workspace's other files" if best.copied in WORKSPACE_KINDS \
            else "copied from a line of the file"
    verdict = "an editor would show it" if best.confidence >= threshold else "an editor would show nothing"
    print(f"  suggestion │ {dialect.to_document(best.text, prefix)!r}")
    print(f"  confidence │ {best.confidence:.3f}  ({source}, {elapsed_ms:.0f} ms)")
    print(f"             │ at the server's default threshold {threshold}, {verdict}")


def complete(args: argparse.Namespace) -> int:
    path, line, column = args.location
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise ValueError(f"{path} has no line {line}, column {column}")
    offset = sum(len(s) + 1 for s in lines[: line - 1]) + column - 1
    related = None
    if not args.no_workspace:
        from lsp_server.project_root import project_root

        folder = args.workspace if args.workspace is not None else project_root(path.absolute())
        if folder is not None:
            print(f"  workspace  │ {folder}" + ("" if args.workspace is not None else " (the file's project)"))
            related = _workspace_lines(folder, path)
    completer = _load_completer(args.model)
    dialect = Dialect.at(text, offset)  # read_text made every line break \n; tabs are the file's
    prefix, suffix = dialect.to_model(text[:offset], text[offset:])
    _show_completion(completer, prefix, suffix, args, related, dialect)
    if args.steps:
        _show_canvas(completer, prefix, suffix, args)
    return 0


def _workspace_lines(folder: Path, path: Path) -> object:
    """The other files' lines that the server would copy from, with ``folder`` as its workspace."""
    from lsp_server.edit_log import EditLog
    from lsp_server.file_watcher import SERVER_MAX_BYTES, SERVER_MAX_FILES, WorkspaceWatcher
    from lsp_server.workspace_lines import WorkspaceLines

    if not folder.is_dir():
        raise ValueError(f"--workspace {folder} is not a folder")
    lines = WorkspaceLines()
    watcher = WorkspaceWatcher([folder], EditLog(), lambda uri: False, max_files=SERVER_MAX_FILES,
                               max_total_bytes=SERVER_MAX_BYTES, lines=lines, indexed_suffixes={path.suffix})
    watcher.start()
    try:
        watcher.wait_ready(60)
        return lines.related(path)
    finally:
        watcher.stop()


def demo(args: argparse.Namespace) -> int:
    """Complete a sample file at a few places, showing the denoising steps."""
    completer = _load_completer(args.model)
    for marker in DEMO_CURSORS:
        offset = DEMO_SAMPLE.index(marker) + len(marker)
        line_end = DEMO_SAMPLE.index("\n", offset)
        # The rest of the cursor's line is what the model must write.
        prefix, suffix = DEMO_SAMPLE[:offset], DEMO_SAMPLE[line_end:]
        print(f"\n{marker.strip()}█   (expected: {DEMO_SAMPLE[offset:line_end]!r})")
        _show_completion(completer, prefix, suffix, args)
        _show_canvas(completer, prefix, suffix, args)
    print(EDITOR_HINT)
    return 0


def _show_canvas(completer: object, prefix: str, suffix: str, args: argparse.Namespace) -> None:
    """The canvas denoised alone, pass by pass up to one pass per position: the diffusion
    at work, which the server cuts to one pass as you type (and the suggestion above may
    have come from elsewhere: a copy, a continuation, the next-token head)."""
    from model.fim.completion_request import CompletionRequest
    from model.fim.inference import FimCompleter

    assert isinstance(completer, FimCompleter)
    request = CompletionRequest(prefix, suffix, canvas_size=args.canvas, threshold=args.threshold,
                                max_steps=args.canvas, keep_trace=True, copy_lines=False, left_to_right=False,
                                drop_repeats=False)
    canvas = completer.complete(request)[0]
    print(f"  the canvas alone, denoised in parallel (up to {args.canvas} passes; the server stops at one):")
    for step, state in enumerate(canvas.trace, 1):
        print(f"  step {step:2d} │ {state!r}")
    print(f"      canvas │ {canvas.text!r}  (confidence {canvas.confidence:.3f})")


EDITOR_HINT = """
Attach an editor: point any LSP client at `redraft serve` (stdio) for Python files, e.g.
Neovim 0.11:  vim.lsp.config('redraft', { cmd = { 'redraft', 'serve' }, filetypes = { 'python' } })
              vim.lsp.enable('redraft')
See README.md, "Use it from an editor"."""

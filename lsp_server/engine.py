"""The only bridge from the server into ``model/`` and its runtime (ONNX Runtime, or torch).

The model loads lazily on a background thread (the server answers ``initialize`` at once);
all model work runs on one worker thread, never on the event loop. Each job carries a stop
flag that the sampler checks between denoising steps: ``$/cancelRequest``, a newer request
for the same document, or the request deadline set it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lsp_server.faults import FaultPlan
from lsp_server.heap import give_back_freed_memory

# Pure Python, cheap to import; re-exported for the workspace's line index (workspace_lines.py) and the
# next-edit history (next_edit.py).
from model.fim.fim_patterns import LineIndex as LineIndex
from model.fim.fim_patterns import RelatedLines as RelatedLines
from model.fim.run_index import RunIndex as RunIndex
from model.fim.run_index import RunIndexBuilder as RunIndexBuilder
from model.languages import PYTHON, Language
from model.next_edit.edit_record import EditRecord as EditRecord

if TYPE_CHECKING:
    from model.fim.inference import FimCompleter
    from model.next_edit.editor import NextEditor

T = TypeVar("T")
log = logging.getLogger(__name__)

FIM_JOB = "fim:"  # a document's FIM work is filed under this and its uri (``Engine.completing``)


@dataclass(frozen=True)
class FimQuery:
    prefix: str
    suffix: str
    candidates: int
    canvas_size: int
    sampler_threshold: float
    max_steps: int
    min_confidence: float = 0.0  # candidates below it will not be shown: no need to refine their score
    related: RelatedLines | None = None  # the workspace's other files (copied lines)
    language: Language = PYTHON  # whose parser judges a candidate's statement


@dataclass(frozen=True)
class ModelCandidate:
    text: str
    confidence: float
    source: str = ""  # which part of the model wrote it (``shown_calibration.source_of``)


@dataclass(frozen=True)
class FimAnswer:
    """Candidates with what the HTTP API reports beside them."""

    candidates: list[ModelCandidate]
    states: list[str]  # the canvas denoised alone, pass by pass (``░`` = masked), when asked for


@dataclass(frozen=True)
class NextEditQuery:
    text: str
    history: tuple[EditRecord, ...]
    cursor_line: int
    limit: int
    sampler_threshold: float
    min_confidence: float  # proposals below this are not worth computing


@dataclass(frozen=True)
class ModelEdit:
    start_line: int  # whole lines [start_line, end_line) are replaced by new_text
    end_line: int
    new_text: str
    confidence: float


@dataclass(frozen=True)
class _Models:
    fim: FimCompleter
    next_edit: NextEditor


@dataclass
class Job:
    timeout_s: float
    stop: threading.Event = field(default_factory=threading.Event)
    # Set when the worker starts the job: the timeout is for model work, not for the wait
    # for the first load or behind other documents' jobs (a client with several requests
    # in flight would otherwise see the last ones abandoned before they began).
    deadline: float = math.inf

    def start(self) -> None:
        self.deadline = time.monotonic() + self.timeout_s

    def should_stop(self) -> bool:
        return self.stop.is_set() or self.past_deadline()

    def past_deadline(self) -> bool:
        return time.monotonic() > self.deadline


def whole_characters(text: str) -> bool:
    """False when ``text`` holds U+FFFD: the byte-level model wrote part of a character,
    which the editor would insert as a replacement character. Such an answer is never shown."""
    return "\ufffd" not in text


class ModelUnavailable(Exception):
    """The model could not be loaded; the message says why."""


class JobStopped(Exception):
    """The job was superseded, cancelled or ran past its deadline."""


class Engine:
    def __init__(
        self, model_dir: Path | None = None, on_load_error: Callable[[str], None] | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
        self._model_dir = model_dir
        self._faults = faults or FaultPlan()
        self._on_load_error = on_load_error
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="redraft-model")
        self._models: _Models | None = None
        self._load_error: str | None = None
        self._loaded = threading.Event()
        self._jobs: dict[str, Job] = {}

    def loaded(self) -> bool:
        return self._models is not None

    def start_loading(self) -> None:
        """Load the model on the worker thread, ahead of the first request."""
        self._worker.submit(self._load)

    def _load(self) -> None:
        if self._loaded.is_set():
            return
        try:
            from model.fim.inference import FimCompleter
            from model.model_folder import SHIPPED_DIR, ModelLoadError
            from model.next_edit.editor import NextEditor
            from model.runtime.serving import load_served_model

            started = time.perf_counter()
            try:
                loaded = load_served_model(self._model_dir or SHIPPED_DIR)
            except ModelLoadError as exc:
                self._load_error = f"Redraft: no suggestions — {exc}"
            else:
                self._models = _Models(FimCompleter(loaded), NextEditor(loaded))
                log.info("model loaded in %.2f s", time.perf_counter() - started)
                # What is loaded lives as long as the server: kept out of the collector's
                # full passes, which otherwise walk it while the user types (the typing
                # bench: a 30–40 ms pause each ~20 s, gone).
                gc.freeze()
                give_back_freed_memory()  # what converting the weights needed only for a moment
        except Exception as exc:  # a broken runtime install must not kill the server
            log.error("model failed to load", exc_info=True)
            self._load_error = f"Redraft: no suggestions — the model failed to load: {exc}"
        finally:
            self._loaded.set()
        if self._load_error is not None:
            log.error("%s", self._load_error)
            if self._on_load_error is not None:
                self._on_load_error(self._load_error)

    async def _run(self, key: str, work: Callable[[_Models, Job], T], timeout_s: float) -> T:
        """Run ``work(models, job)`` on the worker; a newer job for ``key`` stops this one.
        Raises ModelUnavailable, JobStopped or asyncio.CancelledError."""
        previous = self._jobs.get(key)
        if previous is not None:
            previous.stop.set()
        job = Job(timeout_s)
        self._jobs[key] = job
        future: Future[T] = self._worker.submit(self._execute, work, job)
        try:
            return await asyncio.wrap_future(future)
        except JobStopped:
            if job.past_deadline() and not job.stop.is_set():
                log.info("%s: model work abandoned at its deadline (%.0f ms)", key, timeout_s * 1000)
            raise
        except asyncio.CancelledError:
            job.stop.set()
            raise
        finally:
            if self._jobs.get(key) is job:
                del self._jobs[key]

    def _execute(self, work: Callable[[_Models, Job], T], job: Job) -> T:
        from model.fim.completion_request import Cancelled

        self._load()
        if self._models is None:
            raise ModelUnavailable(self._load_error or "model not loaded")
        job.start()
        if job.should_stop():
            raise JobStopped
        try:
            return work(self._models, job)
        except Cancelled as exc:
            raise JobStopped from exc

    def completing(self, key: str) -> bool:
        """Whether FIM work for ``key`` is in flight."""
        return FIM_JOB + key in self._jobs

    async def complete(self, key: str, query: FimQuery, timeout_s: float) -> list[ModelCandidate]:
        """FIM candidates for ``query``, best first."""

        def work(models: _Models, job: Job) -> list[ModelCandidate]:
            return self._candidates(models, job, query)

        return await self._run(FIM_JOB + key, work, timeout_s)

    def _candidates(self, models: _Models, job: Job, query: FimQuery) -> list[ModelCandidate]:
        """The FIM candidates of ``query`` (on the worker), best first: what both ``complete``
        and ``answer`` give."""
        from model.fim.completion_request import CompletionRequest
        from model.fim.shown_calibration import source_of

        self._faults.check("fim")
        self._faults.stall("fim_stall", job.should_stop)
        request = CompletionRequest(query.prefix, query.suffix, query.candidates, query.canvas_size,
                                    query.sampler_threshold, query.max_steps, min_confidence=query.min_confidence,
                                    related=query.related, language=query.language)
        return [ModelCandidate(c.text, c.confidence, source_of(c.copied))
                for c in models.fim.complete(request, job.should_stop)
                if whole_characters(c.text)]

    async def answer(self, key: str, query: FimQuery, timeout_s: float, with_states: bool) -> FimAnswer:
        """``complete``'s candidates and, ``with_states``, the canvas's intermediate states,
        in one job: the states and the answer come from the same model call."""

        def work(models: _Models, job: Job) -> FimAnswer:
            from model.fim.completion_request import CompletionRequest

            found = self._candidates(models, job, query)
            states: list[str] = []
            if with_states:
                canvas_alone = CompletionRequest(query.prefix, query.suffix, 1, query.canvas_size,
                                                 query.sampler_threshold, query.canvas_size, keep_trace=True,
                                                 copy_lines=False, left_to_right=False, drop_repeats=False,
                                                 language=query.language)
                traced = models.fim.complete(canvas_alone, job.should_stop)
                states = list(traced[0].trace) if traced else []
            return FimAnswer(found, states)

        return await self._run(FIM_JOB + key, work, timeout_s)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Where each of the model's tokens of ``text`` ends and starts (empty before the model
        has loaded). The tokenizer is safe to call beside the worker."""
        if self._models is None:
            return []
        return self._models.fim.tokenizer.encode_with_offsets(text)[1]

    async def next_edits(self, key: str, query: NextEditQuery, timeout_s: float) -> list[ModelEdit]:
        """Proposed edits anywhere in the document, most confident first."""

        def work(models: _Models, job: Job) -> list[ModelEdit]:
            self._faults.check("next_edit")
            self._faults.stall("next_edit_stall", job.should_stop)
            if job.should_stop():  # stopped while it waited: its answer would be thrown away
                raise JobStopped
            found = models.next_edit.propose(query.text, list(query.history), query.cursor_line, query.limit,
                                             query.sampler_threshold, job.should_stop, query.min_confidence)
            return [ModelEdit(p.start_line, p.end_line, p.new_text, p.confidence) for p in found
                    if whole_characters(p.new_text)]

        return await self._run("next:" + key, work, timeout_s)

    def shutdown(self) -> None:
        for job in self._jobs.values():
            job.stop.set()
        self._worker.shutdown(wait=False, cancel_futures=True)

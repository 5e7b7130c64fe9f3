"""The only bridge from the server into ``model/`` and its runtime (ONNX Runtime, or torch).

The model loads lazily on a background thread (the server answers ``initialize`` at once);
all model work runs on worker threads, never on the event loop. Each job carries a stop
flag that the sampler checks between denoising steps: ``$/cancelRequest``, a newer request
for the same document, or the request deadline set it.

The language server has one worker: one person types, and a cold context's pass is fastest
on both cores. ``redraft http`` may ask for more (``--workers``), each with its own copy of
the model on at most two threads, so that a box with cores to spare answers several clients
side by side and one long job holds up only its worker. On 2 cores it does not pay: bare
cold passes ran 24% more a second as two one-thread sessions (32.6 against 26.3), but whole
requests did not (HTTP, 8 clients: 13.0 req/s with two workers against 17.1 with one; two
processes in-process: 160 requests in 13.4 s against 13.0), the cores being busy either way.
Batching several requests' rows into one pass does not pay here either: the graph sees keys
as a set, and two cold contexts in one block-diagonal pass took 1.68× as long as the two apart.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import os
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


@dataclass(eq=False)
class _Worker:
    """One model thread and the model it loaded (its own sessions and kept contexts)."""

    executor: ThreadPoolExecutor
    models: _Models | None = None
    loaded: threading.Event = field(default_factory=threading.Event)
    owed: int = 0  # jobs submitted and not yet answered; counted on the event loop


def threads_per_worker(workers: int) -> int:
    """The cores this process may use shared out among the model workers, two at most each:
    the passes a request makes keep no more than two threads busy (``onnx_network.py``)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 2
    return max(1, min(2, cores // workers))


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
        faults: FaultPlan | None = None, workers: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError("an engine needs at least one worker")
        self._model_dir = model_dir
        self._faults = faults or FaultPlan()
        self._on_load_error = on_load_error
        self._threads = threads_per_worker(workers)
        self._workers = [_Worker(ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"redraft-model-{i}"))
                         for i in range(workers)]
        self._load_error: str | None = None
        # One message for a model that every worker fails to load.
        self._reporting = threading.Lock()
        self._load_reported = False
        self._jobs: dict[str, Job] = {}

    def loaded(self) -> bool:
        return self._loaded_models() is not None

    def _loaded_models(self) -> _Models | None:
        """The first worker's model that has loaded (they are alike)."""
        return next((worker.models for worker in self._workers if worker.models is not None), None)

    def start_loading(self) -> None:
        """Load the model on every worker thread, ahead of the first request."""
        for worker in self._workers:
            worker.executor.submit(self._load, worker)

    def _load(self, worker: _Worker) -> None:
        if worker.loaded.is_set():
            return
        try:
            from model.fim.inference import FimCompleter
            from model.model_folder import SHIPPED_DIR, ModelLoadError
            from model.next_edit.editor import NextEditor
            from model.runtime.serving import load_served_model

            started = time.perf_counter()
            try:
                loaded = load_served_model(self._model_dir or SHIPPED_DIR, self._threads)
            except ModelLoadError as exc:
                self._load_error = f"Redraft: no suggestions — {exc}"
            else:
                worker.models = _Models(FimCompleter(loaded), NextEditor(loaded))
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
            worker.loaded.set()
        if worker.models is None and self._load_error is not None:
            with self._reporting:
                report, self._load_reported = not self._load_reported, True
            if report:
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
        # The least busy worker (the first of those idle: one client's requests in a row
        # land on the same worker, whose kept contexts they resume).
        worker = min(self._workers, key=lambda w: w.owed)
        worker.owed += 1
        future: Future[T] = worker.executor.submit(self._execute, worker, work, job)
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
            worker.owed -= 1
            if self._jobs.get(key) is job:
                del self._jobs[key]

    def _execute(self, worker: _Worker, work: Callable[[_Models, Job], T], job: Job) -> T:
        from model.fim.completion_request import Cancelled

        self._load(worker)
        if worker.models is None:
            raise ModelUnavailable(self._load_error or "model not loaded")
        job.start()
        if job.should_stop():
            raise JobStopped
        try:
            return work(worker.models, job)
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
        has loaded). The tokenizer is safe to call beside the workers."""
        models = self._loaded_models()
        if models is None:
            return []
        return models.fim.tokenizer.encode_with_offsets(text)[1]

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
        for worker in self._workers:
            worker.executor.shutdown(wait=False, cancel_futures=True)

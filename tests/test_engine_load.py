"""A request sent while the model is still loading is answered: its deadline counts model
work, not the wait for the first load, nor for other documents' jobs. What the load made is
frozen for the collector."""

import asyncio
import gc
import os
import threading
import time
from types import SimpleNamespace

import pytest

import model.runtime.serving
from lsp_server.engine import Engine, FimQuery, ModelUnavailable, _Models, threads_per_worker
from model.model_folder import ModelLoadError
from model.runtime.served_model import ServedModel


def _with_models(engine: Engine, completer: object) -> Engine:
    """``engine`` with ``completer`` loaded on every worker, for jobs that need no real model."""
    for worker in engine._workers:
        worker.models = _Models(completer, None)  # type: ignore[arg-type]
        worker.loaded.set()
    return engine


async def test_a_request_waiting_for_the_first_load_keeps_its_whole_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    real = model.runtime.serving.load_served_model

    def slow_load(*args: object, **kwargs: object) -> ServedModel:
        time.sleep(0.5)  # longer than the request's whole deadline below
        return real()

    monkeypatch.setattr(model.runtime.serving, "load_served_model", slow_load)
    engine = Engine()
    engine.start_loading()
    try:
        query = FimQuery("def loop():\n    while True", "\n        pass\n", 1, 32, 0.9, 4)
        candidates = await engine.complete("file:///loop.py", query, timeout_s=0.3)
        assert candidates and candidates[0].text
    finally:
        engine.shutdown()


async def test_the_loaded_model_is_kept_out_of_the_collector_s_full_passes() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    engine = Engine()
    engine.start_loading()
    try:
        await engine.complete("file:///a.py", FimQuery("total = ", "\n", 1, 32, 0.9, 1), timeout_s=30)
        assert gc.get_freeze_count() > 1_000  # the tokenizer's, the phrase table's, the calibrators' objects
    finally:
        engine.shutdown()
        gc.unfreeze()  # the rest of the tests' objects are theirs to collect


async def test_requests_queued_behind_other_documents_keep_their_whole_deadline() -> None:
    def slow_complete(request: object, should_stop: object) -> list[SimpleNamespace]:
        time.sleep(0.25)  # model work well within the deadline below
        return [SimpleNamespace(text="x", confidence=0.5, copied="")]

    engine = _with_models(Engine(), SimpleNamespace(complete=slow_complete))
    try:
        query = FimQuery("total = ", "\n", 1, 32, 0.9, 1)
        # Four documents at once: the last waits ~0.75 s behind the others, past 0.4 s.
        answers = await asyncio.gather(*(engine.complete(f"file:///{n}.py", query, timeout_s=0.4) for n in range(4)))
        assert [[c.text for c in answer] for answer in answers] == [["x"]] * 4
    finally:
        engine.shutdown()


class _Overlap:
    """How many model jobs ran at once at most, and on which threads."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self.threads: list[str] = []
        self._lock = threading.Lock()

    def complete(self, request: object, should_stop: object) -> list[SimpleNamespace]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.append(threading.current_thread().name)
        time.sleep(0.2)
        with self._lock:
            self.running -= 1
        return [SimpleNamespace(text="x", confidence=0.5, copied="")]


async def test_two_workers_answer_two_clients_side_by_side_and_one_answers_them_in_turn() -> None:
    query = FimQuery("total = ", "\n", 1, 32, 0.9, 1)
    for workers, side_by_side in ((1, 1), (2, 2)):
        overlap = _Overlap()
        engine = _with_models(Engine(workers=workers), overlap)
        try:
            answers = await asyncio.gather(*(engine.complete(f"http:{n}", query, timeout_s=5) for n in range(4)))
            assert [[c.text for c in answer] for answer in answers] == [["x"]] * 4
            assert overlap.most == side_by_side
            assert len(set(overlap.threads)) == workers
        finally:
            engine.shutdown()


async def test_one_client_s_requests_in_a_row_stay_on_one_worker_whose_contexts_they_resume() -> None:
    overlap = _Overlap()
    engine = _with_models(Engine(workers=2), overlap)
    try:
        for n in range(3):
            await engine.complete(f"http:{n}", FimQuery("total = ", "\n", 1, 32, 0.9, 1), timeout_s=5)
        assert len(set(overlap.threads)) == 1
    finally:
        engine.shutdown()


async def test_each_worker_loads_its_own_model_on_its_share_of_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    real = model.runtime.serving.load_served_model
    threads_asked: list[int] = []

    def load(folder: object, threads: int = 2) -> ServedModel:
        threads_asked.append(threads)
        return real(threads=threads)

    monkeypatch.setattr(model.runtime.serving, "load_served_model", load)
    engine = Engine(workers=2)
    engine.start_loading()
    try:
        query = FimQuery("def loop():\n    while True", "\n        pass\n", 1, 32, 0.9, 4)
        first, second = await asyncio.gather(engine.complete("http:a", query, timeout_s=30),
                                             engine.complete("http:b", query, timeout_s=30))
        assert threads_asked == [threads_per_worker(2)] * 2
        assert threads_per_worker(2) == max(1, min(2, len(os.sched_getaffinity(0)) // 2))
        assert [c.text for c in first] == [c.text for c in second] and first  # the same model on both
        assert len({id(worker.models) for worker in engine._workers}) == 2
    finally:
        engine.shutdown()


async def test_a_model_no_worker_can_load_is_reported_once_and_every_request_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> ServedModel:
        raise ModelLoadError("model.safetensors is truncated")

    monkeypatch.setattr(model.runtime.serving, "load_served_model", broken)
    reported: list[str] = []
    engine = Engine(workers=3, on_load_error=reported.append)
    engine.start_loading()
    try:
        for n in range(3):
            with pytest.raises(ModelUnavailable, match="truncated"):
                await engine.complete(f"http:{n}", FimQuery("total = ", "\n", 1, 32, 0.9, 1), timeout_s=5)
        assert reported == ["Redraft: no suggestions — model.safetensors is truncated"]
        assert not engine.loaded()
    finally:
        engine.shutdown()


def test_an_engine_without_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        Engine(workers=0)

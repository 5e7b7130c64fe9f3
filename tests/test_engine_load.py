"""A request sent while the model is still loading is answered: its deadline counts model
work, not the wait for the first load, nor for other documents' jobs. What the load made is
frozen for the collector."""

import asyncio
import gc
import time
from types import SimpleNamespace

import pytest

import model.runtime.serving
from lsp_server.engine import Engine, FimQuery, _Models
from model.runtime.served_model import ServedModel


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

    engine = Engine()
    engine._models = _Models(SimpleNamespace(complete=slow_complete), None)  # type: ignore[arg-type]
    engine._loaded.set()
    try:
        query = FimQuery("total = ", "\n", 1, 32, 0.9, 1)
        # Four documents at once: the last waits ~0.75 s behind the others, past 0.4 s.
        answers = await asyncio.gather(*(engine.complete(f"file:///{n}.py", query, timeout_s=0.4) for n in range(4)))
        assert [[c.text for c in answer] for answer in answers] == [["x"]] * 4
    finally:
        engine.shutdown()

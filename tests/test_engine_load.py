"""A request sent while the model is still loading is answered: its deadline counts model
work, not the wait for the first load. What the load made is frozen for the collector."""

import gc
import time

import pytest

import model.runtime.serving
from lsp_server.engine import Engine, FimQuery
from model.runtime.serving import ServedModel


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

import asyncio
import time

import pytest

from lsp_server import scheduling
from lsp_server.scheduling import RequestScheduler


def test_no_debounce_outside_a_burst_or_when_the_model_outpaces_typing() -> None:
    scheduler = RequestScheduler()
    scheduler.model_latency_s = 0.04
    assert scheduler.debounce_s(1.0) == 0  # a lone request
    for _ in range(20):  # typing every 100 ms; the model answers in 40 ms
        assert scheduler.debounce_s(0.1) == 0


def test_a_burst_faster_than_the_model_waits_half_its_latency_capped() -> None:
    scheduler = RequestScheduler()
    scheduler.model_latency_s = 0.08
    waits = [scheduler.debounce_s(0.03) for _ in range(20)]  # keystrokes every 30 ms
    assert waits[-1] == pytest.approx(0.04)
    for _ in range(50):
        scheduler.record_latency(5.0)
    assert scheduler.debounce_s(0.03) == scheduling.MAX_DEBOUNCE_S


@pytest.mark.asyncio
async def test_a_request_right_after_another_in_a_slow_burst_is_delayed() -> None:
    scheduler = RequestScheduler()
    scheduler.model_latency_s = scheduler.typing_gap_s = 0.5
    await scheduler.before_model_work("u")
    started = time.monotonic()
    await scheduler.before_model_work("u")  # a keystroke right after the last one
    assert time.monotonic() - started >= scheduling.MAX_DEBOUNCE_S * 0.9


@pytest.mark.asyncio
async def test_speculation_runs_after_a_pause_and_a_new_request_cancels_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "PAUSE_S", 0.01)
    scheduler = RequestScheduler()
    ran = asyncio.Event()

    async def work() -> None:
        ran.set()

    scheduler.speculate("u", work)
    await asyncio.wait_for(ran.wait(), 5)

    cancelled = asyncio.Event()

    async def slow_work() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    scheduler.speculate("u", slow_work)
    await asyncio.sleep(0.05)  # past the pause: the speculative work is running
    await scheduler.before_model_work("u")
    await asyncio.wait_for(cancelled.wait(), 5)


@pytest.mark.asyncio
async def test_a_request_for_another_document_cancels_speculation_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "PAUSE_S", 0.01)
    scheduler = RequestScheduler()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow_work() -> None:
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    ran = asyncio.Event()

    async def work() -> None:
        ran.set()

    scheduler.speculate("a", slow_work)
    await asyncio.wait_for(started.wait(), 5)  # running for document a
    monkeypatch.setattr(scheduling, "PAUSE_S", 0.2)
    scheduler.speculate("c", work)  # waiting for its pause
    await scheduler.before_model_work("b")  # the user types in document b
    await asyncio.wait_for(cancelled.wait(), 5)
    await asyncio.sleep(0.3)
    assert not ran.is_set(), "the pending speculation for c was cancelled too"


async def test_speculation_given_no_pause_runs_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "PAUSE_S", 30.0)  # what the cursor's call (``warm``) does not wait for
    scheduler = RequestScheduler()
    ran = asyncio.Event()

    async def work() -> None:
        ran.set()

    scheduler.speculate("u", work, pause_s=0.0)
    await asyncio.wait_for(ran.wait(), 5)


@pytest.mark.asyncio
async def test_documents_asked_about_long_ago_are_forgotten_past_a_bound() -> None:
    scheduler = RequestScheduler()
    scheduler.model_latency_s = scheduler.typing_gap_s = 0.5
    for n in range(scheduling.KEPT_DOCUMENTS):
        await scheduler.before_model_work(f"old{n}")
    await asyncio.sleep(scheduling.BURST_S)
    await scheduler.before_model_work("recent")
    await scheduler.before_model_work("new")  # one past the bound: the old ones go
    assert set(scheduler._last_request) == {"recent", "new"}
    started = time.monotonic()
    await scheduler.before_model_work("recent")  # still in its burst: still delayed
    assert time.monotonic() - started >= scheduling.MAX_DEBOUNCE_S * 0.9

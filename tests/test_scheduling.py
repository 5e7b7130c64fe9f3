import asyncio
import time

import pytest

from lsp_server import scheduling
from lsp_server.scheduling import RequestScheduler

pytestmark = pytest.mark.asyncio


async def test_a_lone_request_starts_at_once_and_a_burst_waits_half_the_model_latency() -> None:
    scheduler = RequestScheduler()
    scheduler.model_latency_s = 0.04
    started = time.monotonic()
    await scheduler.before_model_work("u")
    assert time.monotonic() - started < 0.01
    started = time.monotonic()
    await scheduler.before_model_work("u")  # a keystroke right after the last one
    assert 0.015 <= time.monotonic() - started < 0.2


async def test_the_debounce_never_exceeds_its_cap() -> None:
    scheduler = RequestScheduler()
    for _ in range(50):
        scheduler.record_latency(5.0)
    await scheduler.before_model_work("u")
    started = time.monotonic()
    await scheduler.before_model_work("u")
    assert time.monotonic() - started < scheduling.MAX_DEBOUNCE_S + 0.1


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
